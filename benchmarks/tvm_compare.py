"""bayestune's ``bo`` vs MetaSchedule's evolutionary search on four operators (llvm CPU), at
equal trials and at equal wall time, with the picks re-measured together with each operator's
untuned kernel (slow: an hour or more; not part of the unit suite). From the repo root, in a
virtualenv with ``pip install -e ".[tvm]"``, one TVM process at a time:

    PYTHONPATH=$PWD/src:$PWD python -m benchmarks.tvm_compare run --seeds 0,1,2 --out RUNS.jsonl
    PYTHONPATH=$PWD/src:$PWD python -m benchmarks.tvm_compare remeasure RUNS.jsonl --out FINAL.jsonl
    python -m benchmarks.tvm_compare report RUNS.jsonl FINAL.jsonl --out benchmarks/results/tvm/tvm_compare.md
    python -m benchmarks.tvm_compare strip RUNS.jsonl --out benchmarks/results/tvm/tvm_compare_runs.jsonl

``run`` tunes every operator for ``--trials`` measured candidates in batches of ``--per-iter``
with each strategy and seed (seed-major, so an interrupted grid covers every operator; runs
already in the output are skipped). It keeps every measurement with the wall time at which it
arrived, and the schedule of every new best (compressed), so that the pick after any number of
trials or any wall time can be timed again later. ``RUNS.jsonl`` holds those schedules (a few
MB): keep it outside the repository. ``remeasure`` builds every distinct pick and each
operator's untuned kernel (``Schedule(mod)``, TVM's default lowering) in ONE process and times
them in ``--rounds`` shuffled, interleaved rounds; a kernel's latency is its fastest round (load
only adds time), its median round is kept too. ``report`` writes the tables: the re-measured pick
after 16/32/48/64 trials, and at equal wall time (the best each strategy had found by the time
the faster of the two finished its trials, per seed), each against the untuned kernel.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.tvm_search import pack_module, unpack_module
from benchmarks.tvm_search import workload as search_workload

TARGET = {"kind": "llvm", "num-cores": 2}
STRATEGIES = ("bo", "evolutionary")
OPERATORS = ("matmul", "depthwise_conv2d", "batch_matmul", "softmax")
CHECKPOINTS = (16, 32, 48, 64)
#: parallel builds (a batch is built before any of it runs, so this does not touch the timings)
BUILDERS = 2


def operator(name: str) -> Any:
    """The TIR module of a benchmark operator (float32)."""
    if name == "matmul":  # 256^3, as in benchmarks/tvm_search.py
        return search_workload("matmul")
    from bayestune.integrations.tvm import load_tvm

    tvm = load_tvm()
    from tvm import te

    if name == "depthwise_conv2d":  # NCHW 1x144x56x56, 3x3, stride 1, padding 1 (a MobileNetV2 layer)
        c, h, w, ks = 144, 56, 56, 3
        x, wt = te.placeholder((1, c, h, w), name="X"), te.placeholder((c, 1, ks, ks), name="W")
        pad = te.compute(
            (1, c, h + 2, w + 2),
            lambda b, ch, y, z: te.if_then_else(te.all(y >= 1, y <= h, z >= 1, z <= w), x[b, ch, y - 1, z - 1], 0.0),
            name="pad",
        )
        rh, rw = te.reduce_axis((0, ks), name="rh"), te.reduce_axis((0, ks), name="rw")
        out = te.compute(
            (1, c, h, w),
            lambda b, ch, y, z: te.sum(pad[b, ch, y + rh, z + rw] * wt[ch, 0, rh, rw], axis=[rh, rw]),
            name="Y",
        )
        return tvm.IRModule({"main": te.create_prim_func([x, wt, out])})
    if name == "batch_matmul":  # 16 x (128x128 @ 128x128)
        b, n = 16, 128
        x, y = te.placeholder((b, n, n), name="A"), te.placeholder((b, n, n), name="B")
        k = te.reduce_axis((0, n), name="k")
        out = te.compute((b, n, n), lambda q, i, j: te.sum(x[q, i, k] * y[q, k, j], axis=k), name="C")
        return tvm.IRModule({"main": te.create_prim_func([x, y, out])})
    if name == "softmax":  # rows of 1024, 512 rows
        m, n = 512, 1024
        x = te.placeholder((m, n), name="X")
        k1, k2 = te.reduce_axis((0, n), name="k1"), te.reduce_axis((0, n), name="k2")
        mx = te.compute((m,), lambda i: te.max(x[i, k1], axis=k1), name="row_max")
        ex = te.compute((m, n), lambda i, j: te.exp(x[i, j] - mx[i]), name="exp")
        sm = te.compute((m,), lambda i: te.sum(ex[i, k2], axis=k2), name="row_sum")
        out = te.compute((m, n), lambda i, j: ex[i, j] / sm[i], name="Y")
        return tvm.IRModule({"main": te.create_prim_func([x, out])})
    raise SystemExit(f"unknown operator {name!r}; choose from {', '.join(OPERATORS)}")


def run_one(name: str, strategy: str, seed: int, trials: int, per_iter: int) -> dict[str, Any]:
    """One tuning run: every measurement with its arrival time, and each new best's schedule."""
    from bayestune.integrations.tvm import tune

    load_start = os.getloadavg()[0]
    mod = operator(name)
    kwargs: dict[str, Any] = {"initial_design": per_iter} if strategy != "evolutionary" else {}
    with tempfile.TemporaryDirectory() as work_dir:
        outcome = tune(
            mod,
            TARGET,
            work_dir,
            trials,
            strategy=strategy,
            num_trials_per_iter=per_iter,
            seed=seed,
            builder_workers=BUILDERS,
            journal=None,
            **kwargs,
        )
    best, improvements = float("inf"), {}
    for i, m in enumerate(outcome.measurements, 1):
        if m.seconds is not None and m.seconds < best:
            best = m.seconds
            improvements[str(i)] = pack_module(m.schedule.mod)
    return {
        "operator": name,
        "strategy": strategy,
        "seed": seed,
        "per_iter": per_iter,
        "trials": len(outcome.measurements),
        "wall_seconds": outcome.seconds,
        "seconds": [m.seconds for m in outcome.measurements],
        "elapsed": [round(m.elapsed, 3) for m in outcome.measurements],
        "failed": sum(m.seconds is None for m in outcome.measurements),
        "improvements": improvements,
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def cmd_run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {(r["operator"], r["strategy"], r["seed"]) for r in map(json.loads, out.read_text().splitlines())}
    for seed in args.seeds:
        for name in args.operators:
            for strategy in args.strategies:
                if (name, strategy, seed) in done:
                    continue
                rec = run_one(name, strategy, seed, args.trials, args.per_iter)
                with out.open("a") as f:
                    f.write(json.dumps(rec) + "\n")
                print(
                    f"{name} {strategy} seed {seed}: {rec['trials']} trials in {rec['wall_seconds']:.0f} s, best "
                    f"{min((s for s in rec['seconds'] if s is not None), default=float('nan')) * 1e3:.3f} ms, "
                    f"load {rec['load_start']:.1f}-{rec['load_end']:.1f}",
                    file=sys.stderr,
                    flush=True,
                )


def pick_at(run: dict[str, Any], *, trials: int | None = None, wall: float | None = None) -> str | None:
    """The key (measurement index) of the best schedule after ``trials`` measurements, or among
    those that had arrived by ``wall`` seconds."""
    keys = [int(k) for k in run["improvements"]]
    if trials is not None:
        keys = [k for k in keys if k <= trials]
    if wall is not None:
        keys = [k for k in keys if run["elapsed"][k - 1] <= wall]
    return str(max(keys)) if keys else None


def equal_wall(runs: dict[str, dict[str, Any]]) -> float:
    """The wall time of the faster strategy's complete run (per operator and seed)."""
    return min(r["elapsed"][-1] for r in runs.values())


def cmd_remeasure(args: argparse.Namespace) -> None:
    import numpy as np

    from bayestune.integrations.tvm import fast_build, load_tvm

    tvm = load_tvm()
    from tvm.s_tir import Schedule
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo

    target, dev = tvm.target.Target(TARGET), tvm.cpu(0)
    runs = [json.loads(line) for line in Path(args.runs).read_text().splitlines() if line.strip()]
    wanted: dict[tuple[Any, ...], Any] = {}  # (operator, strategy, seed, improvement) or (operator, "untuned")
    groups: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for r in runs:
        groups.setdefault((r["operator"], r["seed"]), {})[r["strategy"]] = r
    for (name, _seed), by in groups.items():
        wall = equal_wall(by)
        for r in by.values():
            keys = {pick_at(r, trials=c) for c in CHECKPOINTS} | {pick_at(r, wall=wall)}
            for k in keys - {None}:
                wanted[(name, r["strategy"], r["seed"], k)] = unpack_module(r["improvements"][k])
        wanted[(name, "untuned")] = Schedule(operator(name)).mod
    jobs = []
    for key, mod in wanted.items():
        lib = fast_build(mod, target, None)
        lib = lib.jit() if hasattr(lib, "jit") else lib
        rng = np.random.default_rng(0)
        tensors = [
            tvm.runtime.tensor(rng.random([int(d) for d in a.shape]).astype(str(a.dtype)), dev)
            for a in ArgInfo.from_prim_func(mod["main"])
        ]
        jobs.append((key, lib.time_evaluator(lib.entry_name, dev, number=args.number, repeat=1), tensors))
    print(f"{len(jobs)} kernels built; timing {args.rounds} interleaved rounds", file=sys.stderr, flush=True)
    times: dict[tuple[Any, ...], list[float]] = {key: [] for key, _, _ in jobs}
    loads = [os.getloadavg()[0]]
    order = list(range(len(jobs)))
    rng = random.Random(0)
    for _ in range(args.rounds):
        rng.shuffle(order)
        for j in order:
            key, timer, tensors = jobs[j]
            times[key].append(float(timer(*tensors).mean))
        loads.append(os.getloadavg()[0])
    with Path(args.out).open("w") as f:
        for key, ts in times.items():
            f.write(
                json.dumps(
                    {
                        "key": list(key),
                        "fastest": min(ts),
                        "median": statistics.median(ts),
                        "rounds": len(ts),
                        "number": args.number,
                        "load_min": min(loads),
                        "load_max": max(loads),
                    }
                )
                + "\n"
            )
    print(f"wrote {len(times)} kernels to {args.out}; load {min(loads):.2f}-{max(loads):.2f}", file=sys.stderr)


def _ms(values: list[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0] * 1e3:.3f}"
    return f"{statistics.median(values) * 1e3:.3f} ({min(values) * 1e3:.3f}–{max(values) * 1e3:.3f})"


def report(runs: list[dict[str, Any]], final: list[dict[str, Any]], note: str = "") -> str:
    timed = {tuple(f["key"]): f["fastest"] for f in final}
    groups: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for r in runs:
        groups.setdefault((r["operator"], r["seed"]), {})[r["strategy"]] = r
    loads = [r[k] for r in runs for k in ("load_start", "load_end")]
    fl = [f for f in final if "load_min" in f]
    names = [n for n in OPERATORS if any(r["operator"] == n for r in runs)]
    per_iter = sorted({r["per_iter"] for r in runs})
    lines = [
        f"# bayestune `bo` vs MetaSchedule evolutionary search: {', '.join(names)} (llvm, 2 cores)",
        "",
        f"Each run measures {max(r['trials'] for r in runs)} candidates in batches of "
        f"{', '.join(map(str, per_iter))}; `evolutionary` is MetaSchedule's default search with its xgb cost "
        "model. The picks (the best by in-run timing) are re-measured afterwards in one process, interleaved "
        "in shuffled rounds with each operator's untuned kernel (`Schedule(mod)`, TVM's default lowering); "
        "a kernel's latency is its fastest round"
        + (f" ({fl[0]['rounds']} rounds of {fl[0]['number']} runs)" if fl else "")
        + ". Latencies in ms, median over seeds (min–max); 'beats untuned' counts seeds whose pick is "
        "faster than the untuned kernel.",
        "",
    ]
    if loads:
        lines.append(
            f"Load average (1 min) during the tuning runs: {min(loads):.1f}–{max(loads):.1f} "
            f"(median {statistics.median(loads):.1f}) on 2 cores"
            + (f"; during the re-measurement {fl[0]['load_min']:.1f}–{fl[0]['load_max']:.1f}." if fl else ".")
        )
        lines.append("")
    if note:
        lines += [note, ""]
    lines += [
        "## At equal trials",
        "",
        "| operator | untuned | strategy | seeds | "
        + " | ".join(f"{c} trials" for c in CHECKPOINTS)
        + " | @64 / untuned | beats untuned @64 | wall s |",
        "|---|---|---|---|" + "---|" * len(CHECKPOINTS) + "---|---|---|",
    ]
    for name in names:
        untuned = timed.get((name, "untuned"))
        for strategy in STRATEGIES:
            rs = [g[strategy] for (n, _), g in sorted(groups.items()) if n == name and strategy in g]
            if not rs:
                continue
            cells, last = [], []
            for c in CHECKPOINTS:
                vals = [
                    timed[(name, strategy, r["seed"], k)]
                    for r in rs
                    if (k := pick_at(r, trials=c)) and (name, strategy, r["seed"], k) in timed and r["trials"] >= c
                ]
                cells.append(_ms(vals))
                last = vals
            beats = f"{sum(v < untuned for v in last)}/{len(last)}" if untuned and last else "–"
            ratio = f"{statistics.median(last) / untuned:.2f}" if untuned and last else "–"
            lines.append(
                f"| {name} | {untuned * 1e3:.3f} | {strategy} | {len(rs)} | "
                if untuned
                else f"| {name} | – | {strategy} | {len(rs)} | "
            )
            lines[-1] += (
                " | ".join(cells) + f" | {ratio} | {beats} | {statistics.median(r['wall_seconds'] for r in rs):.0f} |"
            )
    lines += [
        "",
        "## At equal wall time",
        "",
        (
            "Per seed, the wall time of the faster strategy's complete run, and each strategy's re-measured best "
            "among the candidates measured by then (trials counted in brackets)."
        ),
        "",
        "| operator | seed | wall s | bo | evolutionary | bo / evolutionary | untuned |",
        "|---|---|---|---|---|---|---|",
    ]
    wins = {}
    for (name, seed), by in sorted(groups.items(), key=lambda kv: (OPERATORS.index(kv[0][0]), kv[0][1])):
        if set(STRATEGIES) - set(by):
            continue
        wall = equal_wall(by)
        cells, vals = [], []
        for strategy in STRATEGIES:
            r = by[strategy]
            k = pick_at(r, wall=wall)
            v = timed.get((name, strategy, seed, k)) if k else None
            n = sum(e <= wall for e in r["elapsed"])
            cells.append(f"{v * 1e3:.3f} ({n})" if v else "–")
            vals.append(v)
        ratio = f"{vals[0] / vals[1]:.2f}" if all(vals) else "–"
        if all(vals):
            wins.setdefault(name, []).append(vals[0] < vals[1])
        untuned = timed.get((name, "untuned"))
        lines.append(
            f"| {name} | {seed} | {wall:.0f} | {cells[0]} | {cells[1]} | {ratio} | {untuned * 1e3:.3f} |"
            if untuned
            else f"| {name} | {seed} | {wall:.0f} | {cells[0]} | {cells[1]} | {ratio} | – |"
        )
    if wins:
        lines += [
            "",
            "bo faster than evolutionary at equal wall time: "
            + "; ".join(f"{n} {sum(w)}/{len(w)} seeds" for n, w in wins.items())
            + ".",
        ]
    return "\n".join(lines) + "\n"


def cmd_report(args: argparse.Namespace) -> None:
    runs = [json.loads(x) for x in Path(args.runs).read_text().splitlines() if x.strip()]
    final = [json.loads(x) for x in Path(args.final).read_text().splitlines() if x.strip()]
    text = report(runs, final, args.note or "")
    if args.out:
        Path(args.out).write_text(text)
    print(text)


def cmd_strip(args: argparse.Namespace) -> None:
    """The runs without their schedules (in-run timings and arrival times only): small enough to keep."""
    runs = [json.loads(x) for x in Path(args.runs).read_text().splitlines() if x.strip()]
    Path(args.out).write_text(
        "".join(json.dumps({**r, "improvements": sorted(r["improvements"], key=int)}) + "\n" for r in runs)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="bo vs MetaSchedule evolutionary search on four operators")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--operators", type=lambda s: s.split(","), default=list(OPERATORS))
    run.add_argument("--strategies", type=lambda s: s.split(","), default=list(STRATEGIES))
    run.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1, 2])
    run.add_argument("--trials", type=int, default=64)
    run.add_argument("--per-iter", type=int, default=16)
    run.add_argument("--out", required=True, help="JSON lines with the picks' schedules: keep outside the repo")
    again = sub.add_parser("remeasure", help="time all picks and the untuned kernels, interleaved, in one process")
    again.add_argument("runs")
    again.add_argument("--rounds", type=int, default=30)
    again.add_argument("--number", type=int, default=5)
    again.add_argument("--out", required=True)
    rep = sub.add_parser("report")
    rep.add_argument("runs")
    rep.add_argument("final")
    rep.add_argument("--out")
    rep.add_argument("--note")
    strip = sub.add_parser("strip", help="the runs without their schedules, to keep with the results")
    strip.add_argument("runs")
    strip.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    {"run": cmd_run, "remeasure": cmd_remeasure, "report": cmd_report, "strip": cmd_strip}[args.command](args)


if __name__ == "__main__":
    main()
