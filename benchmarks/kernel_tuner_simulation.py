"""bayestune against Kernel Tuner's own strategies, inside Kernel Tuner's own harness.

Every run is one ``kernel_tuner.tune_kernel(..., simulation_mode=True, cache=<shared cache>,
strategy=..., strategy_options={"max_fevals": budget})``: Kernel Tuner's runner, its budget
accounting and its results list, for all four contenders alike. bayestune enters as
``strategy=BayestuneStrategy(seed=seed)``; the peers are ``bayes_opt`` (with the failure-marker
fix, see ``benchmarks/peers/kernel_tuner_peer.py``), ``genetic_algorithm`` and ``random_sample``.
The known restrictions, the seeding of Kernel Tuner's RNGs and the cache copy are the peer
module's (:func:`kt_setup`, :func:`run_kernel_tuner`), so this table and the harness's peer table
use the same ground rules.

Metric: best recorded time found among the first N evaluations (Kernel Tuner's results list in
order, unique configurations; failures count), divided by the cache's optimum (1.0 = optimum).

    nice -n 10 python -m benchmarks.kernel_tuner_simulation run --seeds 10 --budget 100 \\
        --out benchmarks/results/kernel-tuner/kernel_tuner_simulation.jsonl
    python -m benchmarks.kernel_tuner_simulation table benchmarks/results/kernel-tuner/kernel_tuner_simulation.jsonl

Runs are appended to the JSONL file one by one; a rerun skips the (problem, strategy, seed)
already there, so a killed run continues.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bayestune.evaluators.replay import load_kernel_tuner_cache
from benchmarks.outputs import add_output_option, output_path
from benchmarks.peers.kernel_tuner_peer import kt_setup, run_kernel_tuner
from benchmarks.problems import build_gpu_problem, data_dir, gpu_problem_names

STRATEGIES = ("bayestune", "kt_bayes_opt", "kt_genetic_algorithm", "kt_random_sample")
CHECKPOINTS = (20, 40, 60, 100)


def run_one(problem_name: str, strategy: str, seed: int, budget: int) -> dict[str, Any]:
    """One tune_kernel run in simulation mode; its trajectory of best-so-far ratios."""
    problem = build_gpu_problem(problem_name)
    setup = kt_setup(problem)
    optimum = load_kernel_tuner_cache(data_dir() / f"{problem_name}.json.gz").optimum
    if strategy == "bayestune":
        from bayestune.integrations.kernel_tuner import BayestuneStrategy

        kt_strategy: Any = BayestuneStrategy(seed=seed, journal=None)
        options: dict[str, Any] = {}
    else:
        kt_strategy, options = strategy[len("kt_") :], {}
    started = time.perf_counter()
    results = run_kernel_tuner(setup, kt_strategy, options, budget, seed, fix_failure_cost=True)
    wall = time.perf_counter() - started
    seen: set[tuple] = set()
    best = float("inf")
    best_so_far: list[float] = []
    failures = 0
    for r in results:
        key = setup.key(r)
        if key in seen:
            continue
        seen.add(key)
        t = r.get("time")
        if "__error__" in r or not isinstance(t, (int, float)):
            failures += 1
        else:
            best = min(best, float(t))
        best_so_far.append(best / optimum)
    return {
        "problem": problem_name,
        "strategy": strategy,
        "seed": seed,
        "budget": budget,
        "n_results": len(results),
        "n_unique": len(seen),
        "n_failed": failures,
        "wall_s": round(wall, 2),
        "optimum": optimum,
        "ratio": best_so_far,
    }


def _done(out: Path) -> set[tuple]:
    if not out.exists():
        return set()
    done = set()
    for line in out.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            done.add((r["problem"], r["strategy"], r["seed"], r["budget"]))
    return done


def run(args: argparse.Namespace) -> None:
    problems = args.problems.split(",") if args.problems else gpu_problem_names()
    strategies = args.strategies.split(",")
    out = output_path(args, "kernel-tuner", "kernel_tuner_simulation.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    seeds = range(args.seeds - 1, -1, -1) if args.reverse else range(args.seeds)
    for seed in seeds:  # seeds outermost: a partial run covers every cell
        for problem in problems:
            for strategy in strategies:
                if (problem, strategy, seed, args.budget) in _done(out):  # re-read: another process may share --out
                    continue
                record = run_one(problem, strategy, seed, args.budget)
                with open(out, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(record) + "\n")
                at = record["ratio"][-1] if record["ratio"] else float("nan")
                print(
                    f"{problem} {strategy} seed {seed}: best/optimum {at:.3f} after {record['n_unique']} "
                    f"({record['wall_s']} s)",
                    flush=True,
                )


def _at(ratio: list[float], n: int) -> float:
    return ratio[min(n, len(ratio)) - 1] if ratio else float("inf")


def table(args: argparse.Namespace) -> None:
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    seen: set[tuple] = set()
    for line in Path(args.results).read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            key = (r["problem"], r["strategy"], r["seed"], r["budget"])
            if key not in seen:  # two processes sharing a file may both run the cell they meet at
                seen.add(key)
                cells[(r["problem"], r["strategy"])].append(r)
    problems = sorted({p for p, _ in cells})
    strategies = [s for s in STRATEGIES if any(s == t for _, t in cells)]
    checkpoints = [int(c) for c in args.checkpoints.split(",")]
    print(
        "mean best/optimum over seeds (1.000 = optimum; lower is better); [seeds], "
        "wins = seeds reaching the optimum at the last checkpoint\n"
    )
    header = "| problem | N | " + " | ".join(strategies) + " |"
    print(header)
    print("|" + "---|" * (2 + len(strategies)))
    for problem in problems:
        for n in checkpoints:
            row = [problem, str(n)]
            means = {}
            for s in strategies:
                runs = cells.get((problem, s), [])
                if not runs:
                    row.append("-")
                    continue
                vals = [_at(r["ratio"], n) for r in runs]
                means[s] = statistics.fmean(vals)
                cell = f"{means[s]:.3f} [{len(runs)}]"
                if n == checkpoints[-1]:
                    cell += f" wins {sum(v <= 1.0 + 1e-9 for v in vals)}"
                row.append(cell)
            if means:
                best = min(means.values())
                row = row[:2] + [
                    f"**{c}**" if s in means and means[s] == best else c for s, c in zip(strategies, row[2:])
                ]
            print("| " + " | ".join(row) + " |")
    print()
    for s in strategies:
        walls = [r["wall_s"] for (p, t), runs in cells.items() if t == s for r in runs]
        print(f"{s}: {len(walls)} runs, median wall {statistics.median(walls):.1f} s per run")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.kernel_tuner_simulation",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run the table (appends to --out, skips runs already there)")
    p.add_argument("--problems", default="", help="comma-separated cache names (default: all shared caches)")
    p.add_argument("--strategies", default=",".join(STRATEGIES))
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--budget", type=int, default=100)
    add_output_option(
        p, "kernel-tuner", "kernel_tuner_simulation.jsonl", what="JSON-lines file the runs are appended to"
    )
    p.add_argument("--reverse", action="store_true", help="last seed first (a second process on the same --out)")
    p.set_defaults(func=run)
    t = sub.add_parser("table", help="print the markdown table of a results file")
    t.add_argument("results")
    t.add_argument("--checkpoints", default=",".join(str(c) for c in CHECKPOINTS))
    t.set_defaults(func=table)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    sys.exit(main())
