"""Chain-of-Trees build time, memory, sampling and membership throughput on one big tree.

The space is seven integers 1..16 whose prefix sums are bounded (x0 + x1 <= S,
x0 + x1 + x2 <= S, ...), so every level prunes and all parameters form one tree; S sets the
number of leaves (S=28: ~1.1e6, S=32: ~3.3e6, S=40: ~1.6e7).

    python -m benchmarks.chain_of_trees --limits 28,32,40
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from bayestune.space import Integer, Space


def prefix_sum_space(limit: int, k: int = 7, high: int = 16) -> Space:
    names = [f"x{i}" for i in range(k)]
    cons = [" + ".join(names[: j + 1]) + f" <= {limit}" for j in range(1, k)]
    return Space([Integer(n, 1, high) for n in names], cons)


def measure(limit: int, n_samples: int = 1_000_000) -> dict[str, float]:
    space = prefix_sum_space(limit)
    tracemalloc.start()
    t0 = time.perf_counter()
    count = space.count_feasible()
    build = time.perf_counter() - t0
    build_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    stats = space.chain_of_trees.stats()[0]
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    X = space.sample(n_samples, rng)
    sample_rate = n_samples / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    ok = space.is_feasible(X)
    member_rate = n_samples / (time.perf_counter() - t0)
    assert ok.all()
    t0 = time.perf_counter()
    direct = space.satisfies_constraints(X)
    direct_rate = n_samples / (time.perf_counter() - t0)
    assert direct.all()
    return {
        "leaves": count,
        "candidates": stats["candidates_checked"],
        "build_s": build,
        "leaf_MB": stats["memory_bytes"] / 1e6,
        "build_peak_MB": build_peak / 1e6,
        "samples_per_s": sample_rate,
        "membership_per_s": member_rate,
        "direct_eval_per_s": direct_rate,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limits", default="28,32,40")
    args = parser.parse_args()
    print(
        "| S | leaves | candidates checked | build s | leaf keys MB | build peak MB | samples/s | membership/s | direct constraint eval/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for limit in (int(v) for v in args.limits.split(",")):
        r = measure(limit)
        print(
            f"| {limit} | {r['leaves']:,} | {r['candidates']:,} | {r['build_s']:.2f} | {r['leaf_MB']:.1f} | "
            f"{r['build_peak_MB']:.0f} | {r['samples_per_s']:.3g} | {r['membership_per_s']:.3g} | "
            f"{r['direct_eval_per_s']:.3g} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
