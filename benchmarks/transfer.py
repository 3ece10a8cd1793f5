"""Transfer from earlier runs (issues 18, 32): tune device B's recorded space with device A's cache.

Pairs are the shared Kernel Tuner caches of one kernel on two GPUs, in both directions
(convolution A100 <-> MI250X, dedispersion A100 <-> W6600: cross-vendor, weakly related), and
the sibling spaces recorded on this machine (:mod:`benchmarks.transfer_siblings`: one Halide
blur at 2048², 1024² and 512²: strongly related). Every run replays the target cache
through :func:`benchmarks.budget.run_measured` (the harness's budget rules: failures count,
known-infeasible proposals are not charged) and the :class:`~bayestune.optimizer.Optimizer`
with its defaults (``bo``, a 10-point CoT design with the default configuration first).

Methods:

* ``cold``: no prior run (the baseline);
* ``design``: the source's best configurations open the design (half of it), no transfer model;
* ``model``: the cold design, then the transfer model (source as the GP's prior mean, weighted);
* ``both``: warm-start design and transfer model;
* ``auto``: the evidence-driven design (:mod:`bayestune.transfer.gate`) and the transfer model,
  the default mode since issue 32;
* ``model_gate2`` / ``model_gate2_unrelated``: ``model`` with the stricter gate (τ must exceed
  two standard errors instead of one, :data:`bayestune.transfer.weighting.GATE_STANDARD_ERRORS`).
  The other model methods run with the one-standard-error gate of the first version; two is the
  library's default since, chosen on these runs;
* ``*_unrelated_perseed``: the same, but each seed with its own permutation (seed 12345 + the
  run's seed): ``*_unrelated`` pits every seed against one shuffled source, whose few best
  configurations (what a design draws first) are the same few random points in every seed, so
  its cost is that of those points; per seed, it is averaged over ten unrelated sources;
* ``*_mixed``: two sources, as from a folder of caches: the real one and a per-seed shuffled
  copy of it (``auto`` gates each on its own picks, ``both`` interleaves their best);
* ``both_unrelated`` / ``model_unrelated`` / ``auto_unrelated``: the same with a deliberately unrelated source: device
  A's cache with its times shuffled among its configurations (fixed permutation, seed 12345) —
  same space, same value distribution, no information.

Metric: best time found in the first N evaluations / the target cache's optimum (1.0 =
optimum), median over seeds with a bootstrap 95% CI of the median.

    BAYESTUNE_DATA=../shared/data nice -n 19 python -m benchmarks.transfer run --seeds 10 --jobs 2
    python -m benchmarks.transfer table benchmarks/results/transfer/transfer.jsonl > benchmarks/results/transfer/transfer.md

The issue-18 table ran the model methods other than ``*_gate2`` with ``--gate-se 1``; runs since
use the library's gate (two standard errors, the default of ``--gate-se``). Issue 32's table
(``benchmarks/results/transfer/transfer_auto.md``; the raw lines gzipped beside it):

    nice -n 19 python -m benchmarks.transfer run --pairs siblings --seeds 10 --jobs 2 --out transfer_auto.jsonl \
        --methods cold,model,both,auto,model_unrelated,both_unrelated,auto_unrelated,both_unrelated_perseed,auto_unrelated_perseed,both_mixed,auto_mixed
    BAYESTUNE_DATA=../shared/data nice -n 19 python -m benchmarks.transfer run --pairs gpu --seeds 10 --jobs 2 \
        --methods cold,both,auto,auto_unrelated,auto_unrelated_perseed --out transfer_auto.jsonl
    gzip -9 transfer_auto.jsonl && mv transfer_auto.jsonl.gz benchmarks/results/transfer/
    python -m benchmarks.transfer summary benchmarks/results/transfer/transfer_auto.jsonl.gz > benchmarks/results/transfer/transfer_auto.md
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

from benchmarks.outputs import SCRATCH

PAIRS = (  # (target, source)
    ("convolution_MI250X", "convolution_A100"),
    ("convolution_A100", "convolution_MI250X"),
    ("dedispersion_W6600", "dedispersion_A100"),
    ("dedispersion_A100", "dedispersion_W6600"),
)
#: The sibling spaces recorded here (benchmarks.transfer_siblings): one program, other sizes.
SIBLING_PAIRS = (
    ("blur_2048", "blur_1024"),
    ("blur_1024", "blur_2048"),
    ("blur_512", "blur_1024"),
    ("blur_1024", "blur_512"),
)
PAIR_GROUPS = {"siblings": SIBLING_PAIRS, "gpu": PAIRS}
METHODS = (
    "cold",
    "design",
    "model",
    "both",
    "auto",
    "model_unrelated",
    "both_unrelated",
    "auto_unrelated",
    "both_unrelated_perseed",
    "auto_unrelated_perseed",
    "both_mixed",
    "auto_mixed",
    "model_gate2",
    "model_gate2_unrelated",
)
CHECKPOINTS = (5, 10, 20, 40)
SHUFFLE_SEED = 12345


def _is_sibling(name: str) -> bool:
    return any(name in pair for pair in SIBLING_PAIRS)


def _problem(name: str):
    from benchmarks.problems import build_gpu_problem
    from benchmarks.transfer_siblings import build_sibling_problem

    return build_sibling_problem(name) if _is_sibling(name) else build_gpu_problem(name)


def _source(problem, source: str, unrelated: bool, shuffle_seed: int = SHUFFLE_SEED):
    from bayestune.transfer.runs import load_prior_run
    from benchmarks.problems import data_dir
    from benchmarks.transfer_siblings import DATA_DIR

    run = load_prior_run(
        (DATA_DIR if _is_sibling(source) else data_dir()) / f"{source}.json.gz", problem.space, problem.objective
    )
    return shuffled(run, shuffle_seed) if unrelated else run


def shuffled(run, shuffle_seed: int = SHUFFLE_SEED):
    """The unrelated source: ``run``'s values permuted among its successful configurations."""
    from bayestune.transfer.runs import PriorRun

    y = run.y.copy()
    ok = np.flatnonzero(run.feasible)
    y[ok] = y[np.random.default_rng(shuffle_seed).permutation(ok)]
    return PriorRun(f"{run.name} (times shuffled)", run.X, y)


def run_one(target: str, source: str, method: str, seed: int, budget: int, gate_se: float = 2.0) -> dict[str, Any]:
    """One tuning run of ``target`` with ``method``; its best-so-far ratio trajectory."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import bayestune.transfer.weighting as weighting
    from bayestune.optimizer import Optimizer
    from bayestune.scenario.records import TransferSpec
    from benchmarks.budget import run_measured

    weighting.GATE_STANDARD_ERRORS = 2.0 if "_gate2" in method else gate_se  # set every run: workers are reused
    problem = _problem(target)
    transfer = None
    if method != "cold":
        mode = method.split("_")[0]
        per_seed = method.endswith(("_unrelated_perseed", "_mixed"))
        runs = (
            _source(
                problem,
                source,
                "_unrelated" in method or method.endswith("_mixed"),
                SHUFFLE_SEED + seed if per_seed else SHUFFLE_SEED,
            ),
        )
        if method.endswith("_mixed"):  # a folder of caches: the sibling's and an unrelated one
            runs = (_source(problem, source, False), *runs)
        transfer = TransferSpec(runs, mode=mode)
    weights: list[Any] = []
    gate: dict[str, Any] = {}

    def drive(objective) -> None:
        opt = Optimizer(problem.space, objectives=list(problem.objectives), seed=seed, transfer=transfer)
        try:
            opt.optimize(objective, budget)
        finally:
            model = getattr(getattr(opt.strategy, "surrogates", opt.strategy), "transfer", None)
            if model is not None:
                weights.extend(model.weight_history_)
            if opt._gate is not None:
                state = opt._gate.state(opt.history())
                gate.update(open=state.open, picks=state.n_picks, closed_at=state.closed_at)

    started = time.perf_counter()
    trajectory = run_measured(problem, budget, drive)
    best, ratio = float("inf"), []
    for e in trajectory.evaluations:
        if e.feasible:
            best = min(best, float(e.value))
        ratio.append(best / problem.optimum)
    return {
        "target": target,
        "source": source,
        "method": method,
        "seed": seed,
        "budget": budget,
        "ratio": [round(r, 5) for r in ratio],
        "optimum": problem.optimum,
        "wall_s": round(time.perf_counter() - started, 2),
        "weights": [[round(w, 3), round(t, 3)] for fit in weights for _, w, t in fit[:1]],
        **({"gate": gate} if gate else {}),
    }


def _done(out: Path) -> set[tuple]:
    if not out.exists():
        return set()
    return {(r["target"], r["source"], r["method"], r["seed"]) for r in _records(out)}


def _records(path: Path) -> list[dict[str, Any]]:
    """The results of a JSON-lines file (gzipped when it ends in .gz)."""
    import gzip

    if str(path).endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            text = fh.read()
    else:
        text = Path(path).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    groups = args.pairs.split(",")
    unknown = [g for g in groups if g not in PAIR_GROUPS]
    if unknown:
        raise SystemExit(f"unknown pair group(s) {unknown}; choose from {sorted(PAIR_GROUPS)}")
    pairs = [p for g in groups for p in PAIR_GROUPS[g] if not args.targets or p[0] in args.targets.split(",")]
    methods = args.methods.split(",")
    done = _done(out)
    tasks = [
        (t, s, m, seed, args.budget, args.gate_se)
        for seed in range(args.seeds)
        for t, s in pairs
        for m in methods
        if (t, s, m, seed) not in done
    ]
    print(f"{len(tasks)} run(s) to do, {len(done)} already in {out}", flush=True)

    def write(record: dict[str, Any]) -> None:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        r = record["ratio"]
        print(
            f"{record['target']} {record['method']} seed {record['seed']}: "
            + " ".join(f"@{n} {r[min(n, len(r)) - 1]:.3f}" for n in CHECKPOINTS)
            + f" ({record['wall_s']} s)",
            flush=True,
        )

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
    print(
        "Tune device B's recorded space with device A's Kernel Tuner cache (same kernel), against a cold "
        "start; `*_unrelated`: device A's cache with its times shuffled among its configurations (same "
        "space and value distribution, no information). Methods and rules: `benchmarks/transfer.py`'s "
        "docstring. Produced by `python -m benchmarks.transfer table " + str(args.results) + "`.\n"
    )
    print(
        "Median best/optimum over seeds (1.00 = the cache's optimum; lower is better), "
        "[bootstrap 95% CI of the median]; n = seeds.\n"
    )
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
    print(
        "\nPaired with the cold start of the same seed (`model` runs share its design, so until the "
        "design ends they are identical): seeds better / equal / worse than cold at N (ratios equal "
        "within 0.5%):\n"
    )
    print("| target ← source | N | " + " | ".join(others) + " |")
    print("|---|---|" + "---|" * len(others))
    for target, source in PAIRS:
        cold = cells.get((target, "cold"), {})
        if not cold:
            continue
        for n in CHECKPOINTS:
            row = [f"{target} ← {source.split('_', 1)[1]}", str(n)]
            for m in others:
                pairs = [
                    (r["ratio"][min(n, len(r["ratio"])) - 1], cold[s]["ratio"][min(n, len(cold[s]["ratio"])) - 1])
                    for s, r in cells.get((target, m), {}).items()
                    if s in cold
                ]
                better = sum(a < b / 1.005 for a, b in pairs)
                worse = sum(a > b * 1.005 for a, b in pairs)
                row.append(f"{better} / {len(pairs) - better - worse} / {worse}" if pairs else "-")
            print("| " + " | ".join(row) + " |")
    print(
        "\nThe source's transfer weight (0 = the fit was a cold start's): mean over the run's model fits, "
        "median over seeds; and in how many seeds it was ever > 0:\n"
    )
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
    for (_, m), runs in cells.items():
        walls[m].extend(r["wall_s"] for r in runs.values())
    print("\nMedian wall time per 40-evaluation run: " + ", ".join(f"{m} {np.median(walls[m]):.1f} s" for m in methods))


def _at(r: dict[str, Any], n: int) -> float:
    return r["ratio"][min(n, len(r["ratio"])) - 1]


def _evals_to(r: dict[str, Any], level: float) -> int:
    """Evaluations until best/optimum <= ``level``; budget + 1 when never reached."""
    return next((i + 1 for i, v in enumerate(r["ratio"]) if v <= level + 1e-12), len(r["ratio"]) + 1)


def _geo(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values))))


def _recording_note() -> str:
    """How the sibling spaces were measured, from their caches' metadata."""
    import gzip

    from benchmarks.transfer_siblings import DATA_DIR

    with gzip.open(DATA_DIR / f"{SIBLING_PAIRS[0][0]}.json.gz", "rt", encoding="utf-8") as fh:
        meta = json.load(fh).get("metadata", {})
    loads = meta.get("load_average_1min", [])
    return (
        f"Spaces measured once on this machine ({meta.get('cpu_count')} cores) at {meta.get('recorded')} by "
        f"`{meta.get('how')}` in {meta.get('wall_s')} s, 1-minute load average "
        f"{min(loads, default=0):.1f}–{max(loads, default=0):.1f} while it ran (the machine is shared)."
    )


def summary(args: argparse.Namespace) -> None:
    """Issue 32's table: per pair group, the geometric mean over pairs of the median best/optimum,
    evaluations to 1.05x and 1.10x of the optimum, paired counts against cold, the unrelated cost."""
    cells: dict[tuple[str, str, str], dict[int, dict[str, Any]]] = defaultdict(dict)
    for r in _records(Path(args.results)):
        cells[(r["target"], r["source"], r["method"])][r["seed"]] = r
    methods = [m for m in METHODS if any(k[2] == m for k in cells)]
    print("# Evidence-driven transfer (issue 32): `auto` against cold, `model` and `both`\n")
    print(
        f"Produced by `python -m benchmarks.transfer summary {args.results}` (commands: `benchmarks/transfer.py`'s "
        "docstring). Ratios are best found / the recorded space's optimum (1.00 = optimum); `*_unrelated`: the "
        "source's values shuffled among its configurations (no information).\n"
    )
    for group, pairs in PAIR_GROUPS.items():
        pairs = [p for p in pairs if any(k[:2] == p for k in cells)]
        if not pairs:
            continue
        label = {
            "siblings": "Sibling spaces (Halide blur recorded here at 2048², 1024², 512²)",
            "gpu": "Cross-vendor GPU pairs (shared Kernel Tuner caches)",
        }[group]
        here = [m for m in methods if all((t, s, m) in cells for t, s in pairs)]
        seeds = min(len(cells[(t, s, m)]) for t, s in pairs for m in here)
        print(f"## {label}: {len(pairs)} pairs, {seeds}+ seeds\n")
        if group == "siblings":
            print(_recording_note() + "\n")
        print("Geometric mean over pairs of the median (over seeds) best/optimum:\n")
        print("| method | " + " | ".join(f"@{n}" for n in CHECKPOINTS) + " |")
        print("|---|" + "---|" * len(CHECKPOINTS))
        for m in here:
            row = [
                _geo([float(np.median([_at(r, n) for r in cells[(t, s, m)].values()])) for t, s in pairs])
                for n in CHECKPOINTS
            ]
            print(f"| {m} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
        print(
            "\nEvaluations to reach 1.05× / 1.10× of the optimum: median over seeds (`>B`: the median run did "
            "not reach it within the budget B), and in how many seeds it was reached:\n"
        )
        print("| target ← source | " + " | ".join(here) + " |")
        print("|---|" + "---|" * len(here))
        for t, s in pairs:
            row = []
            for m in here:
                runs = list(cells[(t, s, m)].values())
                parts = []
                for level in (1.05, 1.10):
                    e = sorted(_evals_to(r, level) for r in runs)
                    med = float(np.median(e))
                    budget = len(runs[0]["ratio"])
                    reached = sum(v <= budget for v in e)
                    parts.append((f">{budget}" if med > budget else f"{med:g}") + f" ({reached}/{len(e)})")
                row.append(" / ".join(parts))
            print(f"| {t} ← {s} | " + " | ".join(row) + " |")
        others = [m for m in here if m != "cold"]
        if "cold" in here:
            print(
                "\nPaired with cold (same seed), summed over the pairs: seeds better / equal / worse at N "
                "(equal within 0.5%):\n"
            )
            print("| method | " + " | ".join(f"@{n}" for n in CHECKPOINTS) + " |")
            print("|---|" + "---|" * len(CHECKPOINTS))
            for m in others:
                row = []
                for n in CHECKPOINTS:
                    b = e = w = 0
                    for t, s in pairs:
                        cold = cells[(t, s, "cold")]
                        for seed, r in cells[(t, s, m)].items():
                            if seed in cold:
                                a, c = _at(r, n), _at(cold[seed], n)
                                b, w = b + (a < c / 1.005), w + (a > c * 1.005)
                                e += not (a < c / 1.005 or a > c * 1.005)
                    row.append(f"{b} / {e} / {w}")
                print(f"| {m} | " + " | ".join(row) + " |")
            print(
                "\nPaired with cold: geometric mean over every pair and seed of best(method) / best(cold) of the "
                "same seed at N (1.00 = level; > 1 worse), [bootstrap 95% CI over seeds]:\n"
            )
            print("| method | " + " | ".join(f"@{n}" for n in CHECKPOINTS) + " |")
            print("|---|" + "---|" * len(CHECKPOINTS))
            rng = np.random.default_rng(0)
            for m in others:
                row = []
                for n in CHECKPOINTS:
                    logs = np.array(
                        [
                            np.log(_at(r, n) / _at(cells[(t, s, "cold")][seed], n))
                            for t, s in pairs
                            for seed, r in cells[(t, s, m)].items()
                            if seed in cells[(t, s, "cold")]
                        ]
                    )
                    boots = np.exp(rng.choice(logs, size=(2000, len(logs))).mean(axis=1))
                    row.append(
                        f"{np.exp(logs.mean()):.3f} [{np.quantile(boots, 0.025):.3f}, {np.quantile(boots, 0.975):.3f}]"
                    )
                print(f"| {m} | " + " | ".join(row) + " |")
            print(
                "\nCost of an unrelated source: median best/optimum relative to cold's, per pair, at N "
                "(1.00 = no cost; > 1 worse):\n"
            )
            unrelated = [m for m in here if "_unrelated" in m]
            print("| target ← source | N | " + " | ".join(unrelated) + " |")
            print("|---|---|" + "---|" * len(unrelated))
            for n in (10, 20, 40):
                ratios: dict[str, list[float]] = defaultdict(list)
                for t, s in pairs:
                    cold = float(np.median([_at(r, n) for r in cells[(t, s, "cold")].values()]))
                    row = []
                    for m in unrelated:
                        v = float(np.median([_at(r, n) for r in cells[(t, s, m)].values()])) / cold
                        ratios[m].append(v)
                        row.append(f"{v:.3f}")
                    print(f"| {t} ← {s} | {n} | " + " | ".join(row) + " |")
                print(f"| geometric mean | {n} | " + " | ".join(f"**{_geo(ratios[m]):.3f}**" for m in unrelated) + " |")
        gated = [m for m in here if m.startswith("auto")]
        if gated:
            print(
                "\nThe gate's decisions (auto): runs whose gate stayed open through the design, and source "
                "picks measured per run (median [min, max]):\n"
            )
            print("| target ← source | " + " | ".join(gated) + " |")
            print("|---|" + "---|" * len(gated))
            for t, s in pairs:
                row = []
                for m in gated:
                    g = [r["gate"] for r in cells[(t, s, m)].values() if "gate" in r]
                    picks = [x["picks"] for x in g]
                    row.append(
                        f"open {sum(x['open'] for x in g)}/{len(g)}, picks {np.median(picks):g} "
                        f"[{min(picks)}, {max(picks)}]"
                        if g
                        else "-"
                    )
                print(f"| {t} ← {s} | " + " | ".join(row) + " |")
        walls = {m: np.median([r["wall_s"] for t, s in pairs for r in cells[(t, s, m)].values()]) for m in here}
        print("\nMedian wall time per run: " + ", ".join(f"{m} {w:.1f} s" for m, w in walls.items()) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.transfer", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run the table (appends to --out, skips runs already there)")
    p.add_argument("--pairs", default="gpu", help=f"comma-separated pair groups: {', '.join(PAIR_GROUPS)}")
    p.add_argument("--targets", default="", help="comma-separated target caches (default: every pair)")
    p.add_argument(
        "--gate-se",
        type=float,
        default=2.0,
        help="standard errors of the transfer model's gate (the issue-18 table ran with 1)",
    )
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--budget", type=int, default=max(CHECKPOINTS))
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", default=str(SCRATCH / "transfer" / "transfer.jsonl"))
    p.set_defaults(func=run)
    t = sub.add_parser("table", help="print the markdown table of a results file")
    t.add_argument("results")
    t.set_defaults(func=table)
    u = sub.add_parser("summary", help="print issue 32's table (auto against cold, model, both) of a results file")
    u.add_argument("results")
    u.set_defaults(func=summary)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    sys.exit(main())
