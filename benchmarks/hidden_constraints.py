"""How many proposals fail on spaces where most configurations crash: bo vs. random search.

Two synthetic GPU-like spaces whose failures are hidden constraints (nothing in the space
definition tells the optimizer): "registers" (large tile products crash, ~62% of the space)
and "shared_memory" (x + 2y above a limit, ~75% of the space, a Branin-shaped objective).
Counts failed proposals after the initial design and the best value found.

    python -m benchmarks.hidden_constraints --seeds 10 --budget 40
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from bayestune.optimizer import Optimizer
from bayestune.space import Categorical, Integer, Space
from bayestune.trial import Result


def registers(cfg: dict) -> float | Result:
    if cfg["x"] * cfg["y"] > 40:
        return Result.failure("too many registers", "runtime")
    return 1.0 + abs(cfg["x"] - 4) + 0.5 * abs(cfg["y"] - 5) + (cfg["k"] == "v")


def shared_memory(cfg: dict) -> float | Result:
    x, y = cfg["x"], cfg["y"]
    if x + 2 * y > 30:
        return Result.failure("out of shared memory", "runtime")
    a, b = x / 31 * 15 - 5, y / 15 * 15
    value = (b - 5.1 / (4 * np.pi**2) * a**2 + 5 / np.pi * a - 6) ** 2 + 10 * (1 - 1 / (8 * np.pi)) * np.cos(a) + 10
    return float(value + {"u": 0, "v": 2, "w": 5}[cfg["k"]])


PROBLEMS = {
    "registers": (Space([Integer("x", 0, 15), Integer("y", 0, 15), Categorical("k", ["u", "v"])]), registers),
    "shared_memory": (
        Space([Integer("x", 0, 31), Integer("y", 0, 31), Categorical("k", ["u", "v", "w"])]),
        shared_memory,
    ),
}


def failure_fraction(space: Space, box) -> float:
    X = space.enumerate()
    return float(np.mean([isinstance(box(space.to_config(x)), Result) for x in X]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--strategies", default="bo,random")
    args = parser.parse_args()
    print("| problem | failing share of space | strategy | failed proposals after the design (mean) | best (mean) |")
    print("|---|---|---|---|---|")
    for name, (space, box) in PROBLEMS.items():
        share = failure_fraction(space, box)
        for strategy in args.strategies.split(","):
            fails, bests = [], []
            for seed in range(args.seeds):
                opt = Optimizer(space, objectives=["value"], strategy=strategy, seed=seed)
                opt.optimize(box, args.budget)
                fails.append(sum(1 for t in opt.trials[opt.design.size :] if not t.feasible))
                bests.append(opt.best.values["value"] if opt.best else float("nan"))
            print(
                f"| {name} | {share:.0%} | {strategy} | {statistics.mean(fails):.1f} of {args.budget - opt.design.size}"
                f" | {statistics.mean(bests):.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
