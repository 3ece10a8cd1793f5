"""Seconds per suggestion of the ``bo`` strategy against the number of observations.

The default space is a 10-parameter mixed space (reals, integers, ordinals, categoricals, a
5-element permutation) with known constraints, too large to enumerate, so the multi-start local
search runs; ``--problem NAME`` uses a benchmark problem instead (e.g. a replayed GPU space,
which is enumerated). For each observation count the optimizer is told that many random
evaluations (``--failures``: a share of them failed, which turns the feasibility model on), then
asked ``--repeats`` times; the median and mean seconds of one suggestion are reported, and the
peak memory (tracemalloc) of one extra, traced suggestion. "first" is the first model-based
suggestion of a fresh process (lazy imports included) after 20 evaluations.

Without ``--baseline`` the default (``max_training_points`` = 500) and the uncapped model
(``max_training_points=None``, up to ``--uncapped-to`` observations: it costs minutes past
2,000) are measured side by side in this process, count by count, so that load hits both alike.

``--baseline SRC`` measures another copy of the library (its ``src`` directory, e.g. a checkout
of main) side by side: every measurement runs in a fresh process, the two versions interleaved
count by count so that the machine's load hits both alike, and the table shows their ratio.

    python -m benchmarks.overhead --counts 20,50,100,200,500 --repeats 5 [--cap 250]
    OMP_NUM_THREADS=1 python -m benchmarks.overhead --counts 100,500,1000,2000,5000,10000 --repeats 3 --failures 0.2
    python -m benchmarks.overhead --counts 20,100,200,500 --failures 0.2 --baseline ../main/src
    BAYESTUNE_DATA=... python -m benchmarks.overhead --problem convolution_A100 --counts 20,60 --baseline ...
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from bayestune.optimizer import Optimizer
from bayestune.scenario.records import DesignSpec
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real, Space
from bayestune.trial import Result

REPO = Path(__file__).resolve().parent.parent


def overhead_space() -> Space:
    pow2 = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    return Space(
        [
            Ordinal("tile_x", pow2, log=True),
            Ordinal("tile_y", pow2, log=True),
            Ordinal("vector", [1, 2, 4, 8, 16]),
            Integer("unroll", 1, 16),
            Integer("threads", 1, 64, log=True),
            Real("alpha", 1e-3, 1.0, log=True),
            Real("beta", 0.0, 1.0),
            Categorical("layout", ["nchw", "nhwc", "chwn"]),
            Categorical("compute_at", ["root", "tile", "inline"]),
            Permutation("order", 5),
        ],
        ["tile_x * tile_y <= 4096", "tile_x % vector == 0", "order[4] != 0"],
    )


def synthetic_cost(cfg: dict) -> float:
    lx, ly = np.log2(cfg["tile_x"]), np.log2(cfg["tile_y"])
    return float(
        1.0
        + (lx - 5) ** 2
        + (ly - 3) ** 2
        + abs(cfg["unroll"] - 4) / 4
        + (cfg["layout"] != "nhwc")
        + 0.5 * np.log(cfg["alpha"]) ** 2 / 10
        + cfg["beta"]
        + 0.3 * cfg["order"][0]
    )


def _black_box(problem: str | None, failures: float, rng: np.random.Generator):
    """The space, objectives and black box: the synthetic cost (a share ``failures`` failing) or a problem's."""
    if problem is None:

        def evaluate(cfg):
            return (
                Result.failure("synthetic failure", "crash")
                if failures and rng.random() < failures
                else synthetic_cost(cfg)
            )

        return overhead_space(), ["t"], evaluate
    from benchmarks.problems import get_problem

    p = get_problem(problem)
    return p.space, list(p.objectives), p.evaluate


#: ``cap`` of :func:`warm_optimizer` for the strategy's own default training cap.
DEFAULT = "default"


def parse_cap(text: str) -> int | str | None:
    """``--cap``: a number, ``none`` (uncapped) or ``default``."""
    if text.lower() in ("none", DEFAULT):
        return None if text.lower() == "none" else DEFAULT
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, 'none' or 'default', but got {text!r}") from None


def warm_optimizer(count: int, cap: int | str | None, seed: int, failures: float = 0.0, problem: str | None = None):
    """A ``bo`` optimizer told ``count`` random evaluations, and the black box to go on with;
    ``cap`` is its ``max_training_points`` (:data:`DEFAULT`: the strategy's own)."""
    rng = np.random.default_rng(seed)
    space, objectives, evaluate = _black_box(problem, failures, rng)
    options = {} if cap == DEFAULT else {"max_training_points": cap}
    opt = Optimizer(
        space, objectives=objectives, strategy="bo", seed=seed, strategy_options=options, design=DesignSpec(size=count)
    )
    for row in space.sample(count, rng):
        cfg = space.to_config(row)
        opt.tell(cfg, evaluate(cfg))
    return opt, evaluate


def time_suggestions(opt: Optimizer, evaluate, repeats: int) -> tuple[list[float], list[float], float]:
    """Wall and CPU seconds of ``repeats`` suggestions and peak MB of one more, traced: tracing
    slows every allocation down, so it never overlaps the timed ones."""
    times, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        (cfg,) = opt.ask()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        opt.tell(cfg, evaluate(cfg))
    tracemalloc.start()
    (cfg,) = opt.ask()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    opt.tell(cfg, evaluate(cfg))
    return times, cpu, peak / 1e6


def measure(
    count: int, repeats: int, cap: int | str | None, seed: int = 0, failures: float = 0.0, problem: str | None = None
) -> dict:
    opt, evaluate = warm_optimizer(count, cap, seed, failures, problem)
    times, cpu, peak = time_suggestions(opt, evaluate, repeats)
    return {
        "median": statistics.median(times),
        "mean": statistics.fmean(times),
        "peak_mb": peak,
        "cpu_median": statistics.median(cpu),
        "cpu_mean": statistics.fmean(cpu),
    }


def first_suggestion(seed: int, failures: float, problem: str | None) -> dict:
    """Seconds of the first model-based suggestion in this (fresh) process."""
    opt, _ = warm_optimizer(20, DEFAULT, seed, failures, problem)
    t0, c0 = time.perf_counter(), time.process_time()
    opt.ask()
    return {"first": time.perf_counter() - t0, "cpu_first": time.process_time() - c0}


def _side_by_side_processes(sources: list[str], args: list[str]) -> list[dict]:
    """Run this module's worker once per library ``sources`` entry, all at the same time so that
    a shared machine's load hits them alike; their JSON answers."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "benchmarks.overhead", "--worker", *args],
            cwd=REPO,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join([src, str(REPO)])),
            stdout=subprocess.PIPE,
            text=True,
        )
        for src in sources
    ]
    outs = [p.communicate()[0] for p in procs]
    for p in procs:
        if p.returncode:
            raise RuntimeError(f"overhead worker failed with exit code {p.returncode}")
    return [json.loads(out.strip().splitlines()[-1]) for out in outs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", default="20,50,100,200,500")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--cap",
        type=parse_cap,
        default=DEFAULT,
        help="also measure with max_training_points=CAP (a number or none); with --baseline: "
        "this cap on both sides instead of each version's default",
    )
    parser.add_argument(
        "--uncapped-to",
        type=int,
        default=2000,
        help="measure the uncapped model (max_training_points=None) up to this many observations",
    )
    parser.add_argument("--failures", type=float, default=0.0, help="share of failed evaluations (synthetic space)")
    parser.add_argument("--problem", default=None, help="a benchmark problem instead of the synthetic space")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", default=None, help="src directory of another version, measured side by side")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--first", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    if args.worker:  # one measurement for the side-by-side mode
        result = (
            first_suggestion(args.seed, args.failures, args.problem)
            if args.first
            else measure(counts[0], args.repeats, args.cap, args.seed, args.failures, args.problem)
        )
        print(json.dumps(result))
        return
    if args.baseline:
        side_by_side(args, counts)
        return
    table(args, counts)


def table(args: argparse.Namespace, counts: list[int]) -> None:
    """The default against the uncapped model (and ``--cap``), one row per observation count."""
    columns = {"default": DEFAULT, "uncapped": None}
    if args.cap not in columns.values():
        columns[f"cap {args.cap}"] = args.cap
    print(
        f"bo, {args.problem or 'synthetic mixed space'}, failures={args.failures}: median of {args.repeats} "
        "suggestions (wall s, CPU s) and peak MB of one more; uncapped = max_training_points=None"
    )
    print("| observations | " + " | ".join(f"{c}: wall s | {c}: CPU s | {c}: peak MB" for c in columns) + " |")
    print("|---|" + "---|---|---|" * len(columns))
    for c in counts:
        cells = []
        for cap in columns.values():
            if cap is None and c > args.uncapped_to:
                cells.append("– | – | –")
                continue
            r = measure(c, args.repeats, cap, args.seed, args.failures, args.problem)
            cells.append(f"{r['median']:.3f} | {r['cpu_median']:.3f} | {r['peak_mb']:.1f}")
        print(f"| {c} | " + " | ".join(cells) + " |", flush=True)


def side_by_side(args: argparse.Namespace, counts: list[int]) -> None:
    """Baseline and this version, each measurement in a fresh process, the two run at the same
    time. CPU seconds (BLAS is capped at one thread) are what a suggestion costs on an idle
    machine; wall seconds on a shared one also hold the waiting for a core."""
    own = str(REPO / "src")
    sources = [args.baseline, own]
    common = ["--repeats", str(args.repeats), "--failures", str(args.failures), "--seed", str(args.seed)]
    if args.problem:
        common += ["--problem", args.problem]
    if args.cap != DEFAULT:
        common += ["--cap", str(args.cap).lower()]
    print(
        f"baseline {args.baseline} vs {own}; {args.repeats} suggestions per count, failures={args.failures}, "
        f"problem={args.problem or 'synthetic mixed space'}"
    )
    print(
        "| observations | baseline CPU s (median) | this CPU s | ratio | baseline CPU s (mean) | this | ratio "
        "| baseline wall s (median) | this wall s | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in counts:
        base, this = _side_by_side_processes(sources, ["--counts", str(c), *common])
        print(
            f"| {c} | "
            + " | ".join(
                f"{base[k]:.3f} | {this[k]:.3f} | {base[k] / this[k]:.1f}x"
                for k in ("cpu_median", "cpu_mean", "median")
            )
            + " |",
            flush=True,
        )
    firsts = [_side_by_side_processes(sources, ["--first", *common]) for _ in range(3)]
    b, t = (statistics.median(f[i]["cpu_first"] for f in firsts) for i in (0, 1))
    bw, tw = (statistics.median(f[i]["first"] for f in firsts) for i in (0, 1))
    print(
        f"| first suggestion (fresh process, median of 3) | {b:.3f} | {t:.3f} | {b / t:.1f}x | | | "
        f"| {bw:.3f} | {tw:.3f} | {bw / tw:.1f}x |"
    )


if __name__ == "__main__":
    main()
