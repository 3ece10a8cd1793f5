"""Tune the schedule of a 1024 x 1024 separable blur (``blur.py``) with bayestune.

    pip install -e ".[halide]"    (from the root of the bayestune clone)
    python examples/halide/tune_blur.py --budget 10 --timeout 60

Each configuration is compiled, checked against the unscheduled pipeline's output and timed
(min of 10 runs) in its own process, killed after ``--timeout`` seconds. Failed configurations
(schedule/compile errors, out-of-bounds reads, wrong output, timeouts) are recorded as failures
and the search goes on. ``--journal run.db`` keeps the trials so a killed run resumes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bayestune.integrations.halide import ComputeAt, HalideTuner, Parallel, Reorder, Split, StoreAt, Unroll, Vectorize
from bayestune.optimizer import Optimizer
from bayestune.storage import Journal

HERE = Path(__file__).resolve().parent

KNOBS = [
    Split("out", "y", "yo", "yi", (2, 4, 8, 16, 32, 64), default=8),
    Split("out", "x", "xo", "xi", (8, 16, 32, 64, 128, 256), default=64),
    Reorder("out", ("xi", "yi", "xo", "yo"), default=(3, 2, 1, 0)),  # position of each; 0 = outermost
    Vectorize("out", "xi", (1, 4, 8, 16), default=1),
    Parallel("out", "yo", default=False),
    Unroll("out", "yi", (1, 2, 4), default=1),
    ComputeAt("blur_x", "out", ("inline", "root", "xo", "yo"), default="inline"),
    StoreAt("blur_x", "out", ("same", "root"), default="same"),
]
CONSTRAINTS = ["out_vectorize_xi <= out_split_x", "out_unroll_yi <= out_split_y"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--journal", default=None, help="SQLite journal file (resume a killed run)")
    args = ap.parse_args()

    tuner = HalideTuner("blur:build", KNOBS, constraints=CONSTRAINTS, timeout=args.timeout, paths=[HERE])
    resume = bool(args.journal) and Path(args.journal).exists()
    journal = Journal(args.journal) if args.journal else None
    opt = Optimizer(tuner.space(), seed=args.seed, journal=journal, resume=resume)
    t0 = time.perf_counter()
    best = opt.optimize(
        tuner,
        budget=args.budget,
        callback=lambda t: print(
            f"#{t.trial_id:2d} {t.status.value:7s} "
            f"{t.values.get('value', float('nan')):8.3f} ms "
            f"{(t.error or '')[:70]}  {dict(t.config)}",
            flush=True,
        ),
    )
    wall = time.perf_counter() - t0
    default = next((t for t in opt.trials if t.origin == "default"), None)
    print(f"\n{opt.n_evaluated} evaluations ({opt.n_failed} failed) in {wall:.0f} s wall")
    if default is not None:
        print(f"default schedule: {default.values.get('value', float('nan')):.3f} ms  {dict(default.config)}")
    if best is not None:
        print(f"best found:       {best.values['value']:.3f} ms  {dict(best.config)}")


if __name__ == "__main__":
    main()
