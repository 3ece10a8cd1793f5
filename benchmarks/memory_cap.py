"""Bounded memory for long runs (TVM thesis 3.5): seconds and peak memory of one ``bo``
suggestion against the number of observations, with and without ``max_training_points``.

The cap keeps the GP's training set at the best third, the most recent third and a random
rest, so suggestion time should stay flat once the observations exceed it, while the
uncapped GP grows as O(n^3). ``--failures`` makes that fraction of the warm-start evaluations
fail (hidden constraints), which also exercises the feasibility classifier and the failure-
aware variance model.

    python -m benchmarks.memory_cap --counts 100,500,1000,2000 --cap 250 [--failures 0.1] [--repeats 3]

Not a test: a 5,000-observation point takes minutes uncapped.
"""

from __future__ import annotations

import argparse

from benchmarks.overhead import time_suggestions, warm_optimizer


def measure(count: int, cap: int | None, failures: float, repeats: int, seed: int = 0) -> tuple[float, float]:
    """Median seconds per suggestion and peak MB of one traced suggestion."""
    return time_suggestions(warm_optimizer(count, cap, seed, failures), repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", default="100,500,1000,2000")
    parser.add_argument("--cap", type=int, default=250, help="max_training_points of the capped runs")
    parser.add_argument("--failures", type=float, default=0.0, help="fraction of warm-start evaluations that fail")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--skip-uncapped-above",
        type=int,
        default=None,
        help="measure only the capped optimizer above this many observations",
    )
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    print(
        f"bo suggestion cost, 10-parameter mixed space, failures {args.failures:.0%}, "
        f"median of {args.repeats}; cap = max_training_points={args.cap}"
    )
    print("| observations | uncapped s | capped s | uncapped peak MB | capped peak MB |")
    print("|---|---|---|---|---|")
    for count in counts:
        if args.skip_uncapped_above is not None and count > args.skip_uncapped_above:
            t_full, m_full = float("nan"), float("nan")
        else:
            t_full, m_full = measure(count, None, args.failures, args.repeats)
        t_cap, m_cap = measure(count, args.cap, args.failures, args.repeats)
        print(f"| {count} | {t_full:.3f} | {t_cap:.3f} | {m_full:.1f} | {m_cap:.1f} |", flush=True)


if __name__ == "__main__":
    main()
