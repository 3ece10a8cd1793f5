"""Wall time of a run with parallel workers against the sequential run (the goal: with 2
workers and a 0.5 s black box, 40 evaluations in at most 0.6x the sequential time).

The black box is a shell command sleeping ``--seconds`` (so the measurement is about the
runner, not CPU contention); each backend runs the same budget from a fresh optimizer and
journal. Times include everything a user waits for: worker start-up, suggestions, journaling.

    python -m benchmarks.parallel [--budget 40] [--seconds 0.5] [--workers 2] [--strategy cot_random]
                                  [--dask] [--repeats 1]

The pool is measured ``repeats + 1`` times: the first run of a process includes booting the
worker server (one interpreter importing bayestune, ~1-2 s), later ones do not.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bayestune.evaluators import CommandEvaluator
from bayestune.execution import run
from bayestune.optimizer import Optimizer
from bayestune.scenario.records import DesignSpec
from bayestune.space import Categorical, Integer, Space
from bayestune.storage import Journal


def bench_space() -> Space:
    return Space(
        [Integer("tile", 1, 256, log=True), Integer("unroll", 1, 16), Categorical("layout", ["nchw", "nhwc", "chwn"])]
    )


def one_run(backend: str, workers: int | None, args: argparse.Namespace, seed: int, client=None) -> float:
    command = f"sleep {args.seconds}; echo runtime: $(( ({{tile}} - 48) * ({{tile}} - 48) + {{unroll}} ))"
    evaluator = CommandEvaluator(command, ["runtime"], timeout=30)
    options = {"acquisition_search": {"n_samples": 1000, "n_starts": 5}} if args.strategy == "bo" else None
    with tempfile.TemporaryDirectory() as tmp, Journal(Path(tmp) / "bench.db") as journal:
        opt = Optimizer(
            bench_space(),
            objectives=["runtime"],
            strategy=args.strategy,
            seed=seed,
            strategy_options=options,
            design=DesignSpec(size=10),
            journal=journal,
        )
        t0 = time.perf_counter()
        run(opt, evaluator, args.budget, backend=backend, workers=workers, dask_client=client)
        elapsed = time.perf_counter() - t0
        assert journal.n_finished() == args.budget, journal.n_finished()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=0.5, help="duration of one evaluation")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--strategy", default="cot_random", help="cot_random (no model overhead) or bo")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--dask", action="store_true", help="also run on a local Dask cluster (workers processes)")
    args = parser.parse_args()

    rows = []
    ideal = args.budget * args.seconds
    seq = [one_run("serial", None, args, seed) for seed in range(args.repeats)]
    rows.append(("serial", 1, statistics.median(seq)))
    # The first pool of a process pays for booting the worker server (a Python interpreter
    # importing bayestune); later pools fork from it at once.
    pool = [one_run("pool", args.workers, args, seed) for seed in range(args.repeats + 1)]
    rows.append(("pool, cold start", args.workers, pool[0]))
    rows.append(("pool, warm", args.workers, statistics.median(pool[1:])))
    if args.dask:
        from distributed import Client, LocalCluster

        with (
            LocalCluster(
                n_workers=args.workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=40,
            ) as cluster,
            Client(cluster) as client,
        ):
            client.wait_for_workers(args.workers)
            times = [one_run("dask", args.workers, args, seed, client) for seed in range(args.repeats)]
            rows.append(("dask", args.workers, statistics.median(times)))

    print(
        f"{args.budget} evaluations x {args.seconds:g} s black box, strategy {args.strategy}, "
        f"median of {args.repeats} run(s); sequential evaluation time alone: {ideal:.1f} s"
    )
    print("| backend | workers | wall s | vs sequential | ideal |")
    print("|---|---|---|---|---|")
    base = rows[0][2]
    for name, workers, seconds in rows:
        print(f"| {name} | {workers} | {seconds:.2f} | {seconds / base:.2f}x | {1 / workers:.2f}x |")


if __name__ == "__main__":
    main()
