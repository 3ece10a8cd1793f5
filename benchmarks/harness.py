"""Run (problem, strategy, seed) combinations and append one JSON line per run.

Each combination runs once, to the largest budget; the smaller budgets are read off its
trajectory. The output file is append-only and a run is resumable: a combination
already in the file (without an error, with at least the requested budget) is skipped.

``--jobs N`` runs combinations in N worker processes (spawned; BLAS/OpenMP pools are limited
to one thread each, unless already set, so that N concurrent runs share N cores fairly).
Timing-sensitive problems (the live Halide ones) are never run concurrently with anything:
they run one at a time in this process after the others, seed by seed with the strategies
interleaved, so that the machine's load drift (and the first-come measurement cache) favours
none of them. A strategy that cannot take a problem (one objective against several, or the
reverse) is skipped with a message.
"""

from __future__ import annotations

import os
import platform
import shlex
import sys
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.contenders import STRATEGIES, make_contender
from benchmarks.jsonl import append_record, load_records
from benchmarks.problems import close_problems, get_problem, problem_kind, timing_sensitive

SCHEMA = 1
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def command_line(argv: Sequence[str] | None = None) -> str:
    args = list(sys.argv[1:] if argv is None else argv)
    return "python -m benchmarks " + shlex.join(args)


def completed(records: Iterable[dict[str, Any]], budget: int) -> set[tuple[str, str, int]]:
    return {
        (r["problem"], r["strategy"], int(r["seed"]))
        for r in records
        if not r.get("error") and int(r.get("budget", 0)) >= budget
    }


def _versions(packages: Iterable[str]) -> dict[str, str]:
    """Python's, bayestune's and its dependencies' versions, plus those of ``packages`` (a
    peer's, Halide's) where installed."""
    from importlib.metadata import PackageNotFoundError, version

    import numpy
    import scipy
    import sklearn

    import bayestune

    v = {
        "python": platform.python_version(),
        "bayestune": getattr(bayestune, "__version__", "?"),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
    }
    for package in packages:
        try:
            v[package] = version(package)
        except PackageNotFoundError:
            pass
    return v


def run_one(task: dict[str, Any]) -> dict[str, Any]:
    """Run one combination (in a worker or here) and return its record."""
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    record: dict[str, Any] = {
        "schema": SCHEMA,
        "problem": task["problem"],
        "strategy": task["strategy"],
        "seed": task["seed"],
        "budget": task["budget"],
        "budgets": task.get("budgets", [task["budget"]]),
        "command": task.get("command"),
        "started": started,
        "host": {
            "machine": platform.machine(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "system": platform.system(),
        },
    }
    t0 = time.perf_counter()
    try:
        problem = get_problem(task["problem"])
        record.update(
            {
                "kind": problem.kind,
                "objectives": problem.objective_names,
                "optimum": problem.optimum,
                "optimum_source": problem.optimum_source,
            }
        )
        if not problem.multi_objective:
            record["objective"] = problem.objective
        contender = make_contender(task["strategy"], problem, task["seed"])
        trajectory = contender.run(problem, task["budget"], task["seed"])
        record.update(trajectory.to_record())
        record["error"] = None
    except Exception as exc:  # recorded, and retried by the next resume
        record["error"] = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"
    entry = STRATEGIES.get(task["strategy"])
    packages = (entry.packages if entry else ()) + (("halide",) if "halide" in task["problem"] else ())
    record["versions"] = _versions(packages)
    record["elapsed_s"] = time.perf_counter() - t0
    return record


def _summary(record: dict[str, Any]) -> str:
    head = f"{record['problem']} {record['strategy']} seed {record['seed']}"
    if record.get("error"):
        return f"{head}: ERROR {record['error'].splitlines()[0]}"
    vals = [v for v in record.get("values", []) if v is not None]
    if len(record.get("objectives") or [None]) > 1:
        return (
            f"{head}: {record.get('n_evaluations')} evals ({len(vals)} feasible, {record.get('rejected')} "
            f"rejected), total {record.get('elapsed_s', 0):.1f} s"
        )
    best = min(vals) if vals else None
    opt = record.get("optimum")
    rel = f" best/opt {best / opt:.3f}" if best is not None and opt else ""
    return (
        f"{head}: {record.get('n_evaluations')} evals, best {best if best is None else f'{best:.6g}'}"
        f"{rel}, strategy {record.get('strategy_s', 0):.1f} s, total {record.get('elapsed_s', 0):.1f} s"
    )


def _limit_threads() -> None:
    for var in THREAD_VARS:
        os.environ.setdefault(var, "1")


def run_benchmarks(
    problems: Sequence[str],
    strategies: Sequence[str],
    budgets: Sequence[int],
    seeds: Sequence[int],
    out: str | os.PathLike,
    *,
    jobs: int = 1,
    command: str | None = None,
    seed_limits: Mapping[str, int] | None = None,
    log=print,
) -> list[dict[str, Any]]:
    """Run every missing combination and append its record to ``out``; return the new records.
    ``seed_limits`` runs a (slow) strategy on the first N of ``seeds`` only."""
    unavailable = {s: STRATEGIES[s].available() for s in strategies if s in STRATEGIES}
    for name, why in unavailable.items():
        if why:
            log(f"skipping strategy {name!r}: {why}")
    strategies = [s for s in strategies if not unavailable.get(s)]
    pairs = []
    for p in problems:
        for s in strategies:
            why = STRATEGIES[s].unsupported(p, problem_kind(p) == "multiobjective") if s in STRATEGIES else None
            if why:
                log(f"skipping {s} on {p}: {why}")
            else:
                pairs.append((p, s))
    budget = max(budgets)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = completed(load_records(out), budget)
    limits = seed_limits or {}
    wanted = [(p, s, int(seed)) for p, s in pairs for seed in list(seeds)[: limits.get(s, len(seeds))]]
    tasks = [
        {"problem": p, "strategy": s, "seed": seed, "budget": budget, "budgets": list(budgets), "command": command}
        for p, s, seed in wanted
        if (p, s, seed) not in done
    ]
    skipped = len(wanted) - len(tasks)
    if skipped:
        log(f"resuming: {skipped} run(s) already in {out}")
    serial = sorted(
        (t for t in tasks if timing_sensitive(t["problem"])),
        key=lambda t: (problems.index(t["problem"]), t["seed"], strategies.index(t["strategy"])),
    )
    parallel = [t for t in tasks if t not in serial]
    new: list[dict[str, Any]] = []
    total = len(tasks)

    def write(record: dict[str, Any]) -> None:
        append_record(out, record)
        new.append(record)
        log(f"[{len(new)}/{total}] {_summary(record)}")

    if parallel and jobs > 1:
        _limit_threads()
        import multiprocessing

        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(run_one, t) for t in parallel]
            for fut in as_completed(futures):
                write(fut.result())
    else:
        for t in parallel:
            write(run_one(t))
    try:
        for t in serial:  # live timings: one at a time, nothing else running
            write(run_one(t))
    finally:
        close_problems()
    return new


def parse_ints(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"--{what}: expected comma-separated integers, but got {text!r}") from None
    if not values or min(values) < 1:
        raise SystemExit(f"--{what}: expected positive integers, but got {text!r}")
    return values


def parse_seeds(text: str) -> list[int]:
    """``10`` -> seeds 0..9; ``3-7`` -> 3..7; ``1,5,9`` -> those."""
    text = text.strip()
    try:
        if "-" in text:
            lo, hi = (int(x) for x in text.split("-", 1))
            return list(range(lo, hi + 1))
        if "," in text:
            return [int(x) for x in text.split(",") if x.strip()]
        return list(range(int(text)))
    except ValueError:
        raise SystemExit(f"--seeds: expected N, A-B or a comma list, but got {text!r}") from None
