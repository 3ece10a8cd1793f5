"""bayestune vs MetaSchedule's evolutionary search (with its xgb cost model) vs random, as
TVM's search strategy on the llvm CPU target, at equal trial counts (slow: minutes per run;
not part of the unit suite). Run with the TVM venv from the repo root:

    PYTHONPATH=$PWD/src:$PWD nice -n 10 /work/venv-tvm/bin/python -m benchmarks.tvm_search run \\
        --seeds 0,1,2,3,4 --out benchmarks/results/tvm_search.jsonl
    python -m benchmarks.tvm_search report benchmarks/results/tvm_search*.jsonl --out benchmarks/results/tvm_search.md

Each run tunes one workload for ``--trials`` measured candidates in batches of ``--per-iter``
and records every measurement in order. At the end, the best schedule found by 16, 32, 64
and 128 trials is compiled again and re-measured (median of 5 timings), so the table
compares the strategies' picks under the same conditions rather than the noisy in-run
timings. The ablations (``--ablations``) rerun ``bo`` on matmul with the TVM thesis's memory
policies (a window of 32 observations, so that it bites within 128 trials) and with 20 %
epsilon-greedy picks. Runs already in the output file are skipped, so an interrupted
benchmark resumes.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CHECKPOINTS = (16, 32, 64, 128)
TARGET = {"kind": "llvm", "num-cores": 2}
MAIN = ("bo", "evolutionary", "random")
#: name -> (bayestune strategy, strategy options, epsilon)
VARIANTS: dict[str, tuple[str, dict[str, Any], float]] = {
    "bo": ("bo", {}, 0.0),
    "random": ("random", {}, 0.0),
    "bo_lru32": ("bo", {"max_training_points": 32, "memory_policy": "lru"}, 0.0),
    "bo_best32": ("bo", {"max_training_points": 32, "memory_policy": "best"}, 0.0),
    "bo_reset32": ("bo", {"max_training_points": 32, "memory_policy": "reset"}, 0.0),
    "bo_eps20": ("bo", {}, 0.2),
}
ABLATIONS = ("bo_lru32", "bo_best32", "bo_reset32", "bo_eps20")


def workload(name: str) -> Any:
    """The TIR module of a benchmark operator."""
    from bayestune.integrations.tvm import load_tvm
    tvm = load_tvm()
    from tvm import te
    if name == "matmul":  # 256^3 float32
        a, b = te.placeholder((256, 256), name="A"), te.placeholder((256, 256), name="B")
        k = te.reduce_axis((0, 256), name="k")
        c = te.compute((256, 256), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
        return tvm.IRModule({"main": te.create_prim_func([a, b, c])})
    if name == "conv2d":  # NCHW 1x64x28x28, 64 filters 3x3, padding 1 (a ResNet-18 layer)
        n, ci, h, w, co, ks = 1, 64, 28, 28, 64, 3
        x, wt = te.placeholder((n, ci, h, w), name="X"), te.placeholder((co, ci, ks, ks), name="W")
        pad = te.compute((n, ci, h + 2, w + 2), lambda b, c, y, z: te.if_then_else(
            te.all(y >= 1, y <= h, z >= 1, z <= w), x[b, c, y - 1, z - 1], 0.0), name="pad")
        rc, rh, rw = (te.reduce_axis((0, e), name=nm) for e, nm in ((ci, "rc"), (ks, "rh"), (ks, "rw")))
        out = te.compute((n, co, h, w), lambda b, f, y, z: te.sum(
            pad[b, rc, y + rh, z + rw] * wt[f, rc, rh, rw], axis=[rc, rh, rw]), name="Y")
        return tvm.IRModule({"main": te.create_prim_func([x, wt, out])})
    raise SystemExit(f"unknown workload {name!r}; choose matmul or conv2d")


def run_one(workload_name: str, variant: str, seed: int, trials: int, per_iter: int) -> dict[str, Any]:
    from bayestune.integrations.tvm import measure, tune
    mod = workload(workload_name)
    if variant == "evolutionary":
        kwargs: dict[str, Any] = {"strategy": "evolutionary"}
    else:
        strategy, options, epsilon = VARIANTS[variant]
        kwargs = {"strategy": strategy, "strategy_options": options, "epsilon": epsilon, "initial_design": per_iter}
    with tempfile.TemporaryDirectory() as work_dir:
        outcome = tune(mod, TARGET, work_dir, trials, num_trials_per_iter=per_iter, seed=seed, **kwargs)
    secs = [m.seconds for m in outcome.measurements]
    at, remeasured, timed = {}, {}, {}
    for c in CHECKPOINTS:
        best = outcome.best_so_far(c) if c <= len(secs) else None
        at[c] = best.seconds if best else None
        if best is not None and id(best) not in timed:  # a pick kept across checkpoints is timed once
            timed[id(best)] = measure(best.schedule, TARGET)[0]
        remeasured[c] = timed[id(best)] if best is not None else None
    rec = outcome.record
    return {"workload": workload_name, "variant": variant, "seed": seed, "trials": len(secs), "per_iter": per_iter,
            "wall_seconds": outcome.seconds, "failed": sum(s is None for s in secs),
            "refused_before_build": rec.skipped_invalid if rec else None, "reused": rec.reused if rec else None,
            "best_at": at, "remeasured_at": remeasured, "trajectory": secs}


def cmd_run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["workload"], r["variant"], r["seed"]))
    plan = []
    for seed in args.seeds:
        plan += [(w, v, seed) for w in args.workloads for v in args.variants]
        if args.ablations:
            plan += [("matmul", v, seed) for v in ABLATIONS]
    for w, v, seed in plan:
        if (w, v, seed) in done:
            continue
        start = time.perf_counter()
        record = run_one(w, v, seed, args.trials, args.per_iter)
        with out.open("a") as f:
            f.write(json.dumps(record) + "\n")
        print(f"{w} {v} seed {seed}: best {record['remeasured_at']} in {time.perf_counter() - start:.0f} s",
              file=sys.stderr, flush=True)


def trials_to_reach(trajectory: list[float | None], level: float) -> int | None:
    """The first trial count whose best in-run measurement is at most ``level``."""
    best = math.inf
    for i, s in enumerate(trajectory, 1):
        if s is not None:
            best = min(best, s)
        if best <= level:
            return i
    return None


def report(records: list[dict[str, Any]]) -> str:
    lines = ["# bayestune in TVM MetaSchedule (llvm, 2 cores, loaded machine)", "",
             "Median over seeds of the latency of the best schedule found by N trials; `evolutionary` is "
             "MetaSchedule's default search with its xgb cost model, `random` bayestune's uniform draws "
             "over the same decision space, `bo_*` the ablations on matmul.", ""]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["workload"], r["variant"]), []).append(r)
    for key, title in (("remeasured_at", "re-measured at the end"), ("best_at", "as measured during the run")):
        lines += [f"Best latency (ms), {title}:", "",
                  "| workload | strategy | seeds | " + " | ".join(f"{c} trials" for c in CHECKPOINTS)
                  + " | wall s (median) | failed / refused |",
                  "|---|---|---|" + "---|" * len(CHECKPOINTS) + "---|---|"]
        for (w, v), rs in sorted(groups.items()):
            cells = []
            for c in CHECKPOINTS:
                vals = [r[key][str(c)] for r in rs if r[key].get(str(c)) is not None]
                cells.append(f"{statistics.median(vals) * 1e3:.2f}" if vals else "–")
            refused = sum(r["refused_before_build"] or 0 for r in rs)
            lines.append(f"| {w} | {v} | {len(rs)} | " + " | ".join(cells)
                         + f" | {statistics.median(r['wall_seconds'] for r in rs):.0f} | "
                         f"{sum(r['failed'] for r in rs)} / {refused} |")
        lines.append("")
    lines += ["Trials bayestune `bo` needs to reach evolutionary search's 128-trial latency "
              "(in-run measurements, same seed; '>128' = not reached):", "",
              "| workload | seed | evolutionary @128 (ms) | bo trials to reach | random trials to reach |",
              "|---|---|---|---|---|"]
    by_key = {(r["workload"], r["variant"], r["seed"]): r for r in records}
    for (w, v, seed), r in sorted(by_key.items()):
        if v != "evolutionary" or r["best_at"].get("128") is None:
            continue
        level = r["best_at"]["128"]
        cells = []
        for other in ("bo", "random"):
            o = by_key.get((w, other, seed))
            n = trials_to_reach(o["trajectory"], level) if o else None
            cells.append("–" if o is None else (str(n) if n is not None else ">128"))
        lines.append(f"| {w} | {seed} | {level * 1e3:.2f} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


def cmd_report(args: argparse.Namespace) -> None:
    records = [json.loads(line) for path in args.results for line in Path(path).read_text().splitlines()
               if line.strip()]
    text = report(records)
    if args.out:
        Path(args.out).write_text(text)
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="bayestune vs MetaSchedule search on TVM (llvm)")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--workloads", type=lambda s: s.split(","), default=["matmul", "conv2d"])
    run.add_argument("--variants", type=lambda s: s.split(","), default=list(MAIN))
    run.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1, 2, 3, 4])
    run.add_argument("--trials", type=int, default=128)
    run.add_argument("--per-iter", type=int, default=16)
    run.add_argument("--ablations", action="store_true", help="also the memory-policy and epsilon runs on matmul")
    run.add_argument("--out", default="benchmarks/results/tvm_search.jsonl")
    rep = sub.add_parser("report")
    rep.add_argument("results", nargs="+", help="JSON-lines files written by run")
    rep.add_argument("--out")
    args = parser.parse_args(argv)
    (cmd_run if args.command == "run" else cmd_report)(args)


if __name__ == "__main__":
    main()
