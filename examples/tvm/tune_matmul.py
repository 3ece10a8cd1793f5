"""Tune a 256x256x256 float32 matmul with TVM MetaSchedule on the CPU, bayestune choosing the
schedule decisions, then check the tuned kernel against numpy and time it against the untuned one.

    python examples/tvm/tune_matmul.py --trials 32
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np

from bayestune.integrations.tvm import load_tvm, measure, tune


def matmul_module(n: int):
    """C = A @ B as a TensorIR module (TVM's TE front end)."""
    tvm = load_tvm()
    from tvm import te

    a = te.placeholder((n, n), name="A")
    b = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c])})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--per-iter", type=int, default=8, help="candidates per MetaSchedule batch (ask(n))")
    parser.add_argument("--strategy", default="bo", help="a bayestune strategy, or evolutionary / replay-trace")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    tvm = load_tvm()
    from tvm.s_tir import Schedule

    target = {"kind": "llvm", "num-cores": 2}
    mod = matmul_module(args.size)
    with tempfile.TemporaryDirectory() as work_dir:
        outcome = tune(
            mod,
            target,
            work_dir,
            args.trials,
            strategy=args.strategy,
            seed=args.seed,
            num_trials_per_iter=args.per_iter,
            initial_design=min(16, args.trials // 2),
        )
    best = outcome.best_so_far(len(outcome.measurements))
    failed = sum(m.seconds is None for m in outcome.measurements)
    print(f"{len(outcome.measurements)} candidates measured ({failed} failed) in {outcome.seconds:.1f} s")
    if outcome.record is not None:
        rec = outcome.record
        print(
            f"space: {rec.spaces.space.names}; {rec.skipped_invalid} refused before building, "
            f"{rec.reused} answered from earlier measurements"
        )
        print(f"best decisions: {rec.best.config}")
    if best is None:
        raise SystemExit("no candidate ran successfully")
    seconds, (a, b, c) = measure(best.schedule, target)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    untuned, _ = measure(Schedule(mod), target)
    print(
        f"tuned: {seconds * 1e3:.2f} ms (measured during tuning {best.seconds * 1e3:.2f} ms); "
        f"untuned: {untuned * 1e3:.2f} ms; result matches numpy"
    )
    del tvm


if __name__ == "__main__":
    main()
