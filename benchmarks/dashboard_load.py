"""Concurrent load on the dashboard (issue 41 item 9): how many of N simultaneous ``GET /api/state``
requests are answered within a deadline, and how long they take.

    python -m benchmarks.dashboard_load --requests 300 --trials 200 --deadline 60

It writes a journal of ``--trials`` evaluations, serves it with :class:`DashboardServer` in this
process, opens ``--requests`` connections at once (one thread each, released together by a
barrier) and prints one Markdown table row: answered, failed, median and slowest answer, wall time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from bayestune.dashboard import DashboardServer
from bayestune.objectives import Objective
from bayestune.run import describe_run
from bayestune.scenario.records import DesignSpec
from bayestune.space import Categorical, Integer, Real, Space
from bayestune.storage import Journal
from bayestune.trial import Result


def write_run(path: Path, trials: int) -> None:
    space = Space([Integer("tile", 1, 64), Real("alpha", 0.0, 1.0), Categorical("opt", ["O1", "O2", "O3"])])
    with Journal(path) as journal:
        describe_run(
            journal,
            objectives=[Objective("runtime")],
            space=space,
            strategy="random",
            strategy_options=None,
            seed=0,
            design=DesignSpec(),
        )
        for i in range(trials):
            config = {"tile": 1 + i % 64, "alpha": (i % 97) / 97, "opt": ["O1", "O2", "O3"][i % 3]}
            journal.record(config, Result({"runtime": 1.0 + (i * 7919 % 1000) / 1000}))


def hammer(url: str, requests: int, deadline: float) -> tuple[list[float], int, float]:
    """Answer times of the requests answered 200 within ``deadline`` s, how many were not, wall time."""
    barrier = threading.Barrier(requests)
    times: list[float] = []
    failed = [0]
    lock = threading.Lock()

    def one() -> None:
        barrier.wait()
        start = time.monotonic()
        try:
            with urllib.request.urlopen(url, timeout=deadline) as answer:  # noqa: S310 - our own server
                answer.read()
                ok = answer.status == 200
        except OSError:
            ok = False
        took = time.monotonic() - start
        with lock:
            if ok and took <= deadline:
                times.append(took)
            else:
                failed[0] += 1

    threads = [threading.Thread(target=one, daemon=True) for _ in range(requests)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(deadline + 30)
    return times, requests - len(times), time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--deadline", type=float, default=60.0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bt-dash-") as tmp:
        path = Path(tmp) / "run.db"
        write_run(path, args.trials)
        server = DashboardServer(str(path), "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        try:
            times, failed, wall = hammer(server.url + "api/state", args.requests, args.deadline)
        finally:
            server.shutdown()
            server.server_close()
    median = f"{statistics.median(times):.2f}" if times else "-"
    slowest = f"{max(times):.2f}" if times else "-"
    print("| requests | trials | answered within deadline | not answered | median s | slowest s | wall s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.requests} | {args.trials} | {len(times)} | {failed} | {median} | {slowest} | {wall:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
