"""Transfer from earlier runs (issue 18): tune device B's recorded space with device A's cache.

Pairs are the shared Kernel Tuner caches of one kernel on two GPUs, in both directions
(convolution A100 <-> MI250X, dedispersion A100 <-> W6600). Every run replays the target cache
through :func:`benchmarks.budget.run_measured` (the harness's budget rules: failures count,
known-infeasible proposals are not charged) and the :class:`~bayestune.optimizer.Optimizer`
with its defaults (``bo``, a 10-point CoT design with the default configuration first).

Methods:

* ``cold``: no prior run (the baseline);
* ``design``: the source's best configurations open the design (half of it), no transfer model;
* ``model``: the cold design, then the transfer model (source as the GP's prior mean, weighted);
* ``both``: warm-start design and transfer model;
* ``model_gate2`` / ``model_gate2_unrelated``: ``model`` with the stricter gate (τ must exceed
  two standard errors instead of one, :data:`bayestune.transfer.weighting.GATE_STANDARD_ERRORS`).
  The other model methods run with the one-standard-error gate of the first version; two is the
  library's default since, chosen on these runs;
* ``both_unrelated`` / ``model_unrelated``: the same with a deliberately unrelated source: device
  A's cache with its times shuffled among its configurations (fixed permutation, seed 12345) —
  same space, same value distribution, no information.

Metric: best time found in the first N evaluations / the target cache's optimum (1.0 =
optimum), median over seeds with a bootstrap 95% CI of the median.

    BAYESTUNE_DATA=../shared/data nice -n 19 python -m benchmarks.transfer run --seeds 10 --jobs 2
    python -m benchmarks.transfer table benchmarks/results/transfer.jsonl > benchmarks/results/transfer.md
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

PAIRS = (  # (target, source)
    ("convolution_MI250X", "convolution_A100"),
    ("convolution_A100", "convolution_MI250X"),
    ("dedispersion_W6600", "dedispersion_A100"),
    ("dedispersion_A100", "dedispersion_W6600"),
)
METHODS = ("cold", "design", "model", "both", "model_unrelated", "both_unrelated", "model_gate2",
           "model_gate2_unrelated")
CHECKPOINTS = (5, 10, 20, 40)
SHUFFLE_SEED = 12345


def _source(problem, source: str, unrelated: bool):
    from bayestune.transfer.runs import load_prior_run

    from benchmarks.problems import data_dir

    run = load_prior_run(data_dir() / f"{source}.json.gz", problem.space, problem.objective)
    return shuffled(run) if unrelated else run


def shuffled(run):
    """The unrelated source: ``run``'s values permuted among its successful configurations."""
    from bayestune.transfer.runs import PriorRun

    y = run.y.copy()
    ok = np.flatnonzero(run.feasible)
    y[ok] = y[np.random.default_rng(SHUFFLE_SEED).permutation(ok)]
    return PriorRun(f"{run.name} (times shuffled)", run.X, y)


def run_one(target: str, source: str, method: str, seed: int, budget: int) -> dict[str, Any]:
    """One tuning run of ``target`` with ``method``; its best-so-far ratio trajectory."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from bayestune.optimizer import Optimizer
    from bayestune.scenario.records import TransferSpec

    from benchmarks.budget import run_measured
    from benchmarks.problems import build_gpu_problem

    import bayestune.transfer.weighting as weighting

    weighting.GATE_STANDARD_ERRORS = 2.0 if "_gate2" in method else 1.0  # set every run: workers are reused
    problem = build_gpu_problem(target)
    transfer = None
    if method != "cold":
        mode = method.split("_")[0]
        transfer = TransferSpec((_source(problem, source, method.endswith("_unrelated")),), mode=mode)
    weights: list[Any] = []

    def drive(objective) -> None:
        opt = Optimizer(problem.space, objectives=list(problem.objectives), seed=seed, transfer=transfer)
        try:
            opt.optimize(objective, budget)
        finally:
            model = getattr(getattr(opt.strategy, "surrogates", opt.strategy), "transfer", None)
            if model is not None:
                weights.extend(model.weight_history_)

    started = time.perf_counter()
    trajectory = run_measured(problem, budget, drive)
    best, ratio = float("inf"), []
    for e in trajectory.evaluations:
        if e.feasible:
            best = min(best, float(e.value))
        ratio.append(best / problem.optimum)
    return {"target": target, "source": source, "method": method, "seed": seed, "budget": budget,
            "ratio": ratio, "optimum": problem.optimum, "wall_s": round(time.perf_counter() - started, 2),
            "weights": [[round(w, 3), round(t, 3)] for fit in weights for _, w, t in fit[:1]]}


def _done(out: Path) -> set[tuple]:
    if not out.exists():
        return set()
    return {(r["target"], r["method"], r["seed"]) for r in map(json.loads, filter(str.strip, out.read_text().splitlines()))}


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pairs = [p for p in PAIRS if not args.targets or p[0] in args.targets.split(",")]
    methods = args.methods.split(",")
    done = _done(out)
    tasks = [(t, s, m, seed, args.budget) for seed in range(args.seeds) for t, s in pairs for m in methods
             if (t, m, seed) not in done]
    print(f"{len(tasks)} run(s) to do, {len(done)} already in {out}", flush=True)

    def write(record: dict[str, Any]) -> None:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        r = record["ratio"]
        print(f"{record['target']} {record['method']} seed {record['seed']}: "
              + " ".join(f"@{n} {r[min(n, len(r)) - 1]:.3f}" for n in CHECKPOINTS) + f" ({record['wall_s']} s)",
              flush=True)

    if args.jobs > 1:
        import multiprocessing

        with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            for fut in as_completed([pool.submit(run_one, *t) for t in tasks]):
                write(fut.result())
    else:
        for t in tasks:
            write(run_one(*t))


def _median_ci(values: list[float], rng: np.random.Generator, n_boot: int = 2000) -> tuple[float, float, float]:
    v = np.asarray(values, dtype=float)
    boots = np.median(rng.choice(v, size=(n_boot, len(v)), replace=True), axis=1)
    return float(np.median(v)), float(np.quantile(boots, 0.025)), float(np.quantile(boots, 0.975))


def table(args: argparse.Namespace) -> None:
    cells: dict[tuple[str, str], dict[int, dict[str, Any]]] = defaultdict(dict)
    for line in Path(args.results).read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            cells[(r["target"], r["method"])][r["seed"]] = r
    rng = np.random.default_rng(0)
    methods = [m for m in METHODS if any(m == k[1] for k in cells)]
    print("# Transfer from earlier runs (issue 18)\n")
    print("Tune device B's recorded space with device A's Kernel Tuner cache (same kernel), against a cold "
          "start; `*_unrelated`: device A's cache with its times shuffled among its configurations (same "
          "space and value distribution, no information). Methods and rules: `benchmarks/transfer.py`'s "
          "docstring. Produced by `python -m benchmarks.transfer table " + str(args.results) + "`.\n")
    print("Median best/optimum over seeds (1.00 = the cache's optimum; lower is better), "
          "[bootstrap 95% CI of the median]; n = seeds.\n")
    print("| target ← source | N | " + " | ".join(methods) + " |")
    print("|---|---|" + "---|" * len(methods))
    for target, source in PAIRS:
        if not any((target, m) in cells for m in methods):
            continue
        for n in CHECKPOINTS:
            row = [f"{target} ← {source.split('_', 1)[1]}", str(n)]
            for m in methods:
                runs = list(cells.get((target, m), {}).values())
                if not runs:
                    row.append("-")
                    continue
                vals = [r["ratio"][min(n, len(r["ratio"])) - 1] for r in runs]
                med, lo, hi = _median_ci(vals, rng)
                row.append(f"{med:.2f} [{lo:.2f}, {hi:.2f}] n={len(vals)}")
            print("| " + " | ".join(row) + " |")
    others = [m for m in methods if m != "cold"]
    print("\nPaired with the cold start of the same seed (`model` runs share its design, so until the "
          "design ends they are identical): seeds better / equal / worse than cold at N (ratios equal "
          "within 0.5%):\n")
    print("| target ← source | N | " + " | ".join(others) + " |")
    print("|---|---|" + "---|" * len(others))
    for target, source in PAIRS:
        cold = cells.get((target, "cold"), {})
        if not cold:
            continue
        for n in CHECKPOINTS:
            row = [f"{target} ← {source.split('_', 1)[1]}", str(n)]
            for m in others:
                pairs = [(r["ratio"][min(n, len(r["ratio"])) - 1], cold[s]["ratio"][min(n, len(cold[s]["ratio"])) - 1])
                         for s, r in cells.get((target, m), {}).items() if s in cold]
                better = sum(a < b / 1.005 for a, b in pairs)
                worse = sum(a > b * 1.005 for a, b in pairs)
                row.append(f"{better} / {len(pairs) - better - worse} / {worse}" if pairs else "-")
            print("| " + " | ".join(row) + " |")
    print("\nThe source's transfer weight (0 = the fit was a cold start's): mean over the run's model fits, "
          "median over seeds; and in how many seeds it was ever > 0:\n")
    print("| target | " + " | ".join(m for m in methods if m not in ("cold", "design")) + " |")
    print("|---|" + "---|" * len([m for m in methods if m not in ("cold", "design")]))
    for target, _ in PAIRS:
        row = [target]
        for m in methods:
            if m in ("cold", "design"):
                continue
            runs = [r["weights"] for r in cells.get((target, m), {}).values() if r.get("weights")]
            ws = [float(np.mean([w for w, _ in fits])) for fits in runs]
            ever = sum(any(w > 0 for w, _ in fits) for fits in runs)
            row.append(f"{np.median(ws):.2f} (ever > 0 in {ever}/{len(ws)})" if ws else "-")
        print("| " + " | ".join(row) + " |")
    walls = defaultdict(list)
    for (t, m), runs in cells.items():
        walls[m].extend(r["wall_s"] for r in runs.values())
    print("\nMedian wall time per 40-evaluation run: "
          + ", ".join(f"{m} {np.median(walls[m]):.1f} s" for m in methods))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.transfer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run the table (appends to --out, skips runs already there)")
    p.add_argument("--targets", default="", help="comma-separated target caches (default: every pair)")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--budget", type=int, default=max(CHECKPOINTS))
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", default="benchmarks/results/transfer.jsonl")
    p.set_defaults(func=run)
    t = sub.add_parser("table", help="print the markdown table of a results file")
    t.add_argument("results")
    t.set_defaults(func=table)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    sys.exit(main())
