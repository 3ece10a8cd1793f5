"""bayestune vs MetaSchedule's evolutionary search (with its xgb cost model) vs random, as
TVM's search strategy on the llvm CPU target, at equal trial counts (slow: minutes per run;
not part of the unit suite). Run in a virtualenv with `pip install -e ".[tvm]"`, from the repo root, one TVM process at a
time and not niced (the timings are the result):

    PYTHONPATH=$PWD/src:$PWD python -m benchmarks.tvm_search run \\
        --seeds 0,1,2,3,4 --out benchmarks/results/tvm/tvm_search.jsonl
    PYTHONPATH=$PWD/src:$PWD python -m benchmarks.tvm_search run \\
        --workloads dense_relu --seeds 0,1,2,3,4 --out benchmarks/results/tvm/tvm_search.jsonl
    PYTHONPATH=$PWD/src:$PWD python -m benchmarks.tvm_search run \\
        --workloads matmul --variants bo_lru32,bo_best32,bo_reset32,bo_eps20 --seeds 0,1,2 \\
        --out benchmarks/results/tvm/tvm_search_ablation.jsonl
    PYTHONPATH=$PWD/src:$PWD python -m benchmarks.tvm_search remeasure \\
        benchmarks/results/tvm/tvm_search.jsonl benchmarks/results/tvm/tvm_search_ablation.jsonl \\
        --out benchmarks/results/tvm/tvm_search_remeasure.jsonl
    python -m benchmarks.tvm_search report benchmarks/results/tvm/tvm_search.jsonl \\
        benchmarks/results/tvm/tvm_search_ablation.jsonl benchmarks/results/tvm/tvm_search_remeasure.jsonl \\
        --out benchmarks/results/tvm/tvm_search.md

Each run tunes one workload for ``--trials`` measured candidates in batches of ``--per-iter``
and records every measurement in order, with the 1-minute load average at its start and end.
At the end, the best schedule found by 16, 32, 64 and 128 trials is compiled again and
re-measured (median of 5 timings; a schedule that stays the best across checkpoints is timed
once), so the table compares the strategies' picks under the same conditions rather than the
noisy in-run timings. The ablations (``--ablations``) rerun ``bo`` on matmul with the TVM
thesis's memory policies (a window of 32 observations, so that it bites within 128 trials) and
with 20 % epsilon-greedy picks. Runs already in the output file are skipped, so an interrupted
benchmark resumes.

``report`` gives, per workload and strategy, the median (min–max) over seeds of the
re-measured and the in-run best latency at each checkpoint, and per seed the first checkpoint
at which ``bo``'s (and ``random``'s) re-measured best is at most evolutionary search's
re-measured 128-trial best (also the first trial, by in-run timings), with their medians.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from benchmarks.outputs import SCRATCH

CHECKPOINTS = (16, 32, 64, 128)
TARGET = {"kind": "llvm", "num-cores": 2}
#: parallel builds (a batch is built before any of it runs, so this does not touch the timings)
BUILDERS = 2
MAIN = ("bo", "evolutionary", "random")
#: name -> (bayestune strategy, strategy options, epsilon)
VARIANTS: dict[str, tuple[str, dict[str, Any], float]] = {
    "bo": ("bo", {}, 0.0),
    "random": ("random", {}, 0.0),
    "bo_lru32": ("bo", {"max_training_points": 32, "experimental": {"memory_policy": "lru"}}, 0.0),
    "bo_best32": ("bo", {"max_training_points": 32, "experimental": {"memory_policy": "best"}}, 0.0),
    "bo_reset32": ("bo", {"max_training_points": 32, "experimental": {"memory_policy": "reset"}}, 0.0),
    "bo_eps20": ("bo", {}, 0.2),
}
ABLATIONS = ("bo_lru32", "bo_best32", "bo_reset32", "bo_eps20")


#: The operators of the benchmark, in the order the report lists them.
WORKLOADS = ("matmul", "conv2d", "dense_relu")


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
        pad = te.compute(
            (n, ci, h + 2, w + 2),
            lambda b, c, y, z: te.if_then_else(te.all(y >= 1, y <= h, z >= 1, z <= w), x[b, c, y - 1, z - 1], 0.0),
            name="pad",
        )
        rc, rh, rw = (te.reduce_axis((0, e), name=nm) for e, nm in ((ci, "rc"), (ks, "rh"), (ks, "rw")))
        out = te.compute(
            (n, co, h, w),
            lambda b, f, y, z: te.sum(pad[b, rc, y + rh, z + rw] * wt[f, rc, rh, rw], axis=[rc, rh, rw]),
            name="Y",
        )
        return tvm.IRModule({"main": te.create_prim_func([x, wt, out])})
    if name == "dense_relu":  # 128x512 @ 512x512 + bias, then ReLU (a fused fully connected layer)
        m, kk, nn = 128, 512, 512
        a, w, bias = (te.placeholder(shape, name=nm) for shape, nm in (((m, kk), "A"), ((kk, nn), "W"), ((nn,), "b")))
        k = te.reduce_axis((0, kk), name="k")
        d = te.compute((m, nn), lambda i, j: te.sum(a[i, k] * w[k, j], axis=k), name="D")
        y = te.compute((m, nn), lambda i, j: te.max(d[i, j] + bias[j], te.const(0.0, "float32")), name="Y")
        return tvm.IRModule({"main": te.create_prim_func([a, w, bias, y])})
    raise SystemExit(f"unknown workload {name!r}; choose one of {', '.join(WORKLOADS)}")


def pack_module(mod: Any) -> str:
    """A scheduled IRModule as compact text (zlib-compressed ``tvm.ir.save_json``, base64)."""
    import tvm

    return base64.b64encode(zlib.compress(tvm.ir.save_json(mod).encode(), 9)).decode()


def unpack_module(text: str) -> Any:
    import tvm

    return tvm.ir.load_json(zlib.decompress(base64.b64decode(text)).decode())


def run_one(workload_name: str, variant: str, seed: int, trials: int, per_iter: int) -> dict[str, Any]:
    from bayestune.integrations.tvm import measure, tune

    load_start = os.getloadavg()[0]
    mod = workload(workload_name)
    if variant == "evolutionary":
        kwargs: dict[str, Any] = {"strategy": "evolutionary"}
    else:
        strategy, options, epsilon = VARIANTS[variant]
        kwargs = {"strategy": strategy, "strategy_options": options, "epsilon": epsilon, "initial_design": per_iter}
    with tempfile.TemporaryDirectory() as work_dir:
        outcome = tune(
            mod, TARGET, work_dir, trials, num_trials_per_iter=per_iter, seed=seed, builder_workers=BUILDERS, **kwargs
        )
    secs = [m.seconds for m in outcome.measurements]
    at, remeasured, timed, schedules, pick = {}, {}, {}, [], {}
    for c in CHECKPOINTS:
        best = outcome.best_so_far(c) if c <= len(secs) else None
        at[c] = best.seconds if best else None
        if best is not None and id(best) not in timed:  # a pick kept across checkpoints is timed once
            timed[id(best)] = (measure(best.schedule, TARGET)[0], len(schedules))
            schedules.append(pack_module(best.schedule.mod))
        remeasured[c] = timed[id(best)][0] if best is not None else None
        pick[c] = timed[id(best)][1] if best is not None else None
    rec = outcome.record
    return {
        "workload": workload_name,
        "variant": variant,
        "seed": seed,
        "trials": len(secs),
        "per_iter": per_iter,
        "wall_seconds": outcome.seconds,
        "failed": sum(s is None for s in secs),
        "refused_before_build": rec.skipped_invalid if rec else None,
        "reused": rec.reused if rec else None,
        "best_at": at,
        "remeasured_at": remeasured,
        "trajectory": secs,
        "pick": pick,
        "schedules": schedules,
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


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
        print(
            f"{w} {v} seed {seed}: best {record['remeasured_at']} in {time.perf_counter() - start:.0f} s",
            file=sys.stderr,
            flush=True,
        )


def cmd_remeasure(args: argparse.Namespace) -> None:
    """Time every run's picks again in one process, interleaved: ``--rounds`` rounds, each
    timing every distinct pick once (in a shuffled order) as the mean of ``--number`` runs; a
    pick's latency is its fastest round (the load on a shared machine only ever adds time)
    and, for reference, its median round. Written per run as ``final_at`` / ``final_median_at``."""
    import random

    import numpy as np

    from bayestune.integrations.tvm import fast_build, load_tvm

    tvm = load_tvm()
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo

    target, dev = tvm.target.Target(TARGET), tvm.cpu(0)
    records = [
        json.loads(line) for path in args.results for line in Path(path).read_text().splitlines() if line.strip()
    ]
    jobs = []  # (record index, schedule index, timer, args)
    for i, r in enumerate(records):
        for j, text in enumerate(r.get("schedules") or []):
            mod = unpack_module(text)
            lib = fast_build(mod, target, None)
            lib = lib.jit() if hasattr(lib, "jit") else lib
            rng = np.random.default_rng(0)
            tensors = [
                tvm.runtime.tensor(rng.random([int(d) for d in a.shape]).astype(str(a.dtype)), dev)
                for a in ArgInfo.from_prim_func(mod["main"])
            ]
            jobs.append((i, j, lib.time_evaluator(lib.entry_name, dev, number=args.number, repeat=1), tensors))
    print(f"{len(jobs)} picks of {len(records)} runs built; timing {args.rounds} rounds", file=sys.stderr)
    times: dict[tuple[int, int], list[float]] = {(i, j): [] for i, j, _, _ in jobs}
    loads = [os.getloadavg()[0]]
    order = list(range(len(jobs)))
    shuffle = random.Random(0).shuffle
    for _ in range(args.rounds):
        shuffle(order)
        for k in order:
            i, j, timer, tensors = jobs[k]
            times[(i, j)].append(float(timer(*tensors).mean))
        loads.append(os.getloadavg()[0])
    out = []
    for i, r in enumerate(records):
        if not r.get("schedules"):
            continue
        final, final_median = {}, {}
        for c, j in r["pick"].items():
            final[c] = min(times[(i, j)]) if j is not None else None
            final_median[c] = statistics.median(times[(i, j)]) if j is not None else None
        out.append(
            {
                "workload": r["workload"],
                "variant": r["variant"],
                "seed": r["seed"],
                "final_at": final,
                "final_median_at": final_median,
                "rounds": args.rounds,
                "number": args.number,
                "load_min": min(loads),
                "load_max": max(loads),
                "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        )
    Path(args.out).write_text("".join(json.dumps(o) + "\n" for o in out))
    print(f"wrote {len(out)} runs to {args.out}; load average {min(loads):.2f}-{max(loads):.2f}", file=sys.stderr)


def trials_to_reach(trajectory: list[float | None], level: float) -> int | None:
    """The first trial count whose best in-run measurement is at most ``level``."""
    best = math.inf
    for i, s in enumerate(trajectory, 1):
        if s is not None:
            best = min(best, s)
        if best <= level:
            return i
    return None


def checkpoint_to_reach(remeasured: dict[str, float | None], level: float) -> int | None:
    """The first checkpoint whose re-measured best is at most ``level``."""
    for c in CHECKPOINTS:
        v = remeasured.get(str(c))
        if v is not None and v <= level:
            return c
    return None


def _order(variant: str) -> tuple[int, str]:
    names = list(MAIN) + list(ABLATIONS)
    return (names.index(variant) if variant in names else len(names), variant)


def _ms_range(vals: list[float]) -> str:
    if not vals:
        return "–"
    if len(vals) == 1:
        return f"{vals[0] * 1e3:.3f}"
    return f"{statistics.median(vals) * 1e3:.3f} ({min(vals) * 1e3:.3f}–{max(vals) * 1e3:.3f})"


def _reach(n: int | None) -> str:
    return str(n) if n is not None else ">128"


def _median_reach(ns: list[int | None]) -> str:
    """Median of per-seed trial counts (the upper one of an even count), '>128' (not reached)
    counting as larger than any."""
    if not ns:
        return "–"
    m = statistics.median_high([n if n is not None else math.inf for n in ns])
    return _reach(None if m == math.inf else int(m))


def report(records: list[dict[str, Any]], title_note: str = "") -> str:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["workload"], r["variant"]), []).append(r)
    keys = sorted(groups, key=lambda k: (k[0], _order(k[1])))
    final = any(r.get("final_at") for r in records)
    re_key = "final_at" if final else "remeasured_at"
    loads = [r[f] for r in records for f in ("load_start", "load_end") if r.get(f) is not None]
    present = [w for w in WORKLOADS if any(r["workload"] == w for r in records)]
    lines = [
        f"# bayestune in TVM MetaSchedule: {', '.join(present)} on llvm (2 cores)",
        "",
        "`bo` is bayestune's Bayesian optimization as MetaSchedule's search strategy, `evolutionary` "
        "MetaSchedule's default evolutionary search with its xgb cost model, `random` bayestune's uniform "
        "draws over the same decision space, `bo_*` the thesis's ablations on matmul (memory policies with "
        "a 32-observation window; 20 % epsilon-greedy). Every run measures the same number of candidates "
        "(128, in batches of 16). The best schedule found by 16/32/64/128 trials (by in-run measurement) "
        "is compiled again and re-measured: right after its run (median of 5 timings of 3 runs each)"
        + (
            ", and after all runs, all runs' picks together in one process, interleaved in shuffled rounds "
            "(`remeasure`: each pick's fastest round, a round being the mean of "
            f"{next(r['number'] for r in records if r.get('final_at'))} runs; "
            f"{next(r['rounds'] for r in records if r.get('final_at'))} rounds). "
            "The comparisons below use this final re-measurement."
            if final
            else "."
        )
        + " Latencies in ms.",
        "",
    ]
    if loads:
        lines += [
            f"1-minute load average at the start/end of the runs: {min(loads):.2f}–{max(loads):.2f} "
            f"(median {statistics.median(loads):.2f}) on 2 cores.",
            "",
        ]
    if title_note:
        lines += [title_note, ""]
    tables = [("remeasured_at", "re-measured right after each run"), ("best_at", "as measured during the run")]
    if final:
        tables.insert(0, ("final_at", "re-measured after all runs, interleaved (fastest round)"))
    for key, title in tables:
        lines += [
            f"## Best latency (ms), {title}: median over seeds (min–max)",
            "",
            "| workload | strategy | seeds | "
            + " | ".join(f"{c} trials" for c in CHECKPOINTS)
            + " | wall s (median) | failed / refused |",
            "|---|---|---|" + "---|" * len(CHECKPOINTS) + "---|---|",
        ]
        for w, v in keys:
            rs = groups[(w, v)]
            got = [r.get(key) or {} for r in rs]
            cells = [_ms_range([g[str(c)] for g in got if g.get(str(c)) is not None]) for c in CHECKPOINTS]
            refused = sum(r["refused_before_build"] or 0 for r in rs)
            lines.append(
                f"| {w} | {v} | {sum(bool(g) for g in got)} | "
                + " | ".join(cells)
                + f" | {statistics.median(r['wall_seconds'] for r in rs):.0f} | "
                f"{sum(r['failed'] for r in rs)} / {refused} |"
            )
        lines.append("")
    by_key = {(r["workload"], r["variant"], r["seed"]): r for r in records}
    lines += [
        "## When does bayestune reach evolutionary search's 128-trial latency?",
        "",
        "Per seed: evolutionary's re-measured best after 128 trials (the level), the first checkpoint "
        "(16/32/64/128) at which a strategy's re-measured best is at most that level, and the first trial "
        "at which its in-run best reaches evolutionary's in-run 128-trial best. '>128' = not reached "
        "within 128 trials. Medians count '>128' as larger than any number and take the upper middle "
        "value of an even count.",
        "",
        "| workload | seed | evolutionary @128 re-measured (ms) | bo: checkpoint | random: checkpoint "
        "| evolutionary @128 in-run (ms) | bo: trial (in-run) | random: trial (in-run) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    summary = []
    for w in sorted({k[0] for k in keys}):
        per = {"bo": ([], []), "random": ([], [])}
        seeds = sorted(s for (ww, v, s) in by_key if ww == w and v == "evolutionary")
        for seed in seeds:
            evo = by_key[(w, "evolutionary", seed)]
            level, level_run = (evo.get(re_key) or {}).get("128"), evo["best_at"].get("128")
            if level is None or level_run is None:
                continue
            cells, runs = [], []
            for other in ("bo", "random"):
                o = by_key.get((w, other, seed))
                if o is None:
                    cells.append("–")
                    runs.append("–")
                    continue
                c = checkpoint_to_reach(o.get(re_key) or {}, level)
                n = trials_to_reach(o["trajectory"], level_run)
                per[other][0].append(c)
                per[other][1].append(n)
                cells.append(_reach(c))
                runs.append(_reach(n))
            lines.append(
                f"| {w} | {seed} | {level * 1e3:.3f} | {cells[0]} | {cells[1]} | {level_run * 1e3:.3f} "
                f"| {runs[0]} | {runs[1]} |"
            )
        evo_rs = [by_key[(w, "evolutionary", s)] for s in seeds]
        evo128 = [(r.get(re_key) or {})["128"] for r in evo_rs if (r.get(re_key) or {}).get("128") is not None]
        row = [
            w,
            str(len(per["bo"][0])),
            _median_reach(per["bo"][0]),
            _median_reach(per["bo"][1]),
            _median_reach(per["random"][0]),
            _median_reach(per["random"][1]),
        ]
        # the same question on the medians over seeds
        med_cells = []
        for other in ("bo", "random"):
            rs = [r.get(re_key) or {} for (ww, v, s), r in by_key.items() if ww == w and v == other]
            med = {
                str(c): statistics.median(vals)
                for c in CHECKPOINTS
                if (vals := [g[str(c)] for g in rs if g.get(str(c)) is not None])
            }
            med_cells.append(_reach(checkpoint_to_reach(med, statistics.median(evo128))) if rs and evo128 else "–")
        summary.append(row + med_cells)
    lines += [
        "",
        "Summary per workload (seeds = seeds with both an evolutionary and a bo run):",
        "",
        "| workload | seeds | bo: median checkpoint (re-measured) | bo: median trial (in-run) "
        "| random: median checkpoint | random: median trial (in-run) "
        "| bo: checkpoint of median curve vs evolutionary's median @128 | random: same |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in summary]
    return "\n".join(lines) + "\n"


def cmd_report(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for path in args.results for line in Path(path).read_text().splitlines() if line.strip()]
    records = [r for r in rows if "trajectory" in r]
    again = {(r["workload"], r["variant"], r["seed"]): r for r in rows if "final_at" in r}
    for r in records:  # the interleaved re-measurement of `remeasure`, where there is one
        r.update(
            {
                k: v
                for k, v in again.get((r["workload"], r["variant"], r["seed"]), {}).items()
                if k in ("final_at", "final_median_at", "rounds", "number")
            }
        )
    text = report(records, args.note or "")
    if args.out:
        Path(args.out).write_text(text)
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="bayestune vs MetaSchedule search on TVM (llvm)")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--workloads", type=lambda s: s.split(","), default=list(WORKLOADS[:2]))
    run.add_argument("--variants", type=lambda s: s.split(","), default=list(MAIN))
    run.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1, 2, 3, 4])
    run.add_argument("--trials", type=int, default=128)
    run.add_argument("--per-iter", type=int, default=16)
    run.add_argument("--ablations", action="store_true", help="also the memory-policy and epsilon runs on matmul")
    run.add_argument("--out", default=str(SCRATCH / "tvm" / "tvm_search.jsonl"))
    again = sub.add_parser("remeasure", help="time every run's picks again, interleaved in one process")
    again.add_argument("results", nargs="+", help="JSON-lines files written by run")
    again.add_argument("--rounds", type=int, default=40)
    again.add_argument("--number", type=int, default=3)
    again.add_argument("--out", default=str(SCRATCH / "tvm" / "tvm_search_remeasure.jsonl"))
    rep = sub.add_parser("report")
    rep.add_argument("results", nargs="+", help="JSON-lines files written by run")
    rep.add_argument("--out")
    rep.add_argument("--note", help="a paragraph to put under the introduction (conditions, what is missing)")
    args = parser.parse_args(argv)
    {"run": cmd_run, "remeasure": cmd_remeasure, "report": cmd_report}[args.command](args)


if __name__ == "__main__":
    main()
