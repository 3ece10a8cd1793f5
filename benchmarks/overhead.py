"""Seconds per suggestion of the ``bo`` strategy against the number of observations.

A 10-parameter mixed space (reals, integers, ordinals, categoricals, a 5-element
permutation) with known constraints, too large to enumerate, so the multi-start local
search runs. For each observation count the optimizer is warm-started with that many random
evaluations, then asked ``--repeats`` times; the median and peak memory (tracemalloc) of
one suggestion are reported (memory traced on one extra suggestion, since tracing
slows allocations down). Optionally the same with a capped training set.

    python -m benchmarks.overhead --counts 20,50,100,200,500 --repeats 5 [--cap 250]
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np

from bayestune.optimizer import Optimizer
from bayestune.scenario.records import DesignSpec
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real, Space
from bayestune.trial import Result


def overhead_space() -> Space:
    pow2 = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    return Space(
        [Ordinal("tile_x", pow2, log=True), Ordinal("tile_y", pow2, log=True), Ordinal("vector", [1, 2, 4, 8, 16]),
         Integer("unroll", 1, 16), Integer("threads", 1, 64, log=True), Real("alpha", 1e-3, 1.0, log=True),
         Real("beta", 0.0, 1.0), Categorical("layout", ["nchw", "nhwc", "chwn"]),
         Categorical("compute_at", ["root", "tile", "inline"]), Permutation("order", 5)],
        ["tile_x * tile_y <= 4096", "tile_x % vector == 0", "order[4] != 0"],
    )


def synthetic_cost(cfg: dict) -> float:
    lx, ly = np.log2(cfg["tile_x"]), np.log2(cfg["tile_y"])
    return float(1.0 + (lx - 5) ** 2 + (ly - 3) ** 2 + abs(cfg["unroll"] - 4) / 4 + (cfg["layout"] != "nhwc")
                 + 0.5 * np.log(cfg["alpha"]) ** 2 / 10 + cfg["beta"] + 0.3 * cfg["order"][0])


def warm_optimizer(count: int, cap: int | None, seed: int, failures: float = 0.0) -> Optimizer:
    """A ``bo`` optimizer told ``count`` random evaluations (a fraction ``failures`` of them failed)."""
    space = overhead_space()
    options = {"max_training_points": cap} if cap else {}
    opt = Optimizer(space, objectives=["t"], strategy="bo", seed=seed, strategy_options=options,
                    design=DesignSpec(size=count))
    rng = np.random.default_rng(seed)
    for row in space.sample(count, rng):
        cfg = space.to_config(row)
        if failures and rng.random() < failures:
            opt.tell(cfg, Result.failure("synthetic failure", "crash"))
        else:
            opt.tell(cfg, synthetic_cost(cfg))
    return opt


def time_suggestions(opt: Optimizer, repeats: int) -> tuple[float, float]:
    """Median seconds of ``repeats`` suggestions and peak MB of one more, traced: tracing slows
    every allocation down, so it never overlaps the timed ones."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        (cfg,) = opt.ask()
        times.append(time.perf_counter() - t0)
        opt.tell(cfg, synthetic_cost(cfg))
    tracemalloc.start()
    (cfg,) = opt.ask()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    opt.tell(cfg, synthetic_cost(cfg))
    return statistics.median(times), peak / 1e6


def measure(count: int, repeats: int, cap: int | None, seed: int = 0) -> tuple[float, float]:
    return time_suggestions(warm_optimizer(count, cap, seed), repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", default="20,50,100,200,500")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cap", type=int, default=None, help="also measure with max_training_points=CAP")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    print("| observations | median s/suggestion | peak MB |" + (f" capped at {args.cap}: s | peak MB |" if args.cap else ""))
    print("|---|---|---|" + ("---|---|" if args.cap else ""))
    for c in counts:
        t, m = measure(c, args.repeats, None)
        row = f"| {c} | {t:.3f} | {m:.1f} |"
        if args.cap:
            tc, mc = measure(c, args.repeats, args.cap)
            row += f" {tc:.3f} | {mc:.1f} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
