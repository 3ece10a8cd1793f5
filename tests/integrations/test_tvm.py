"""bayestune as MetaSchedule's search strategy, live: a few trials of a small matmul through
TVM (skipped without TVM; run in a virtualenv with ``pip install -e ".[tvm,test]"``:
``python -m pytest tests/integrations/test_tvm*.py``)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from bayestune.trial import FailureKind

needs_tvm = pytest.mark.skipif(importlib.util.find_spec("tvm") is None,
                               reason="Apache TVM is not installed (pip install 'bayestune[tvm]')")


def test_importing_the_integration_does_not_import_tvm():
    code = "import sys, bayestune.integrations.tvm as t; print('tvm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.fixture(scope="module")
def matmul():
    from bayestune.integrations.tvm import load_tvm
    tvm = load_tvm()
    from tvm import te
    a, b = te.placeholder((64, 64), name="A"), te.placeholder((64, 64), name="B")
    k = te.reduce_axis((0, 64), name="k")
    c = te.compute((64, 64), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c])})


@needs_tvm
def test_a_few_trials_through_metaschedule_give_a_correct_kernel(matmul, tmp_path):
    from bayestune.integrations.tvm import measure, tune
    target = {"kind": "llvm", "num-cores": 2}
    outcome = tune(matmul, target, tmp_path, 6, num_trials_per_iter=3, initial_design=3, seed=1)
    assert len(outcome.measurements) == 6
    rec = outcome.record
    assert rec.measured == 6 and rec.spaces.space.names[:2] == ["design", "tile_i"]
    measured = [t for t in rec.trials if t.failure_kind != FailureKind.SCHEDULE]
    assert len(measured) == 6
    told = sorted(t.values["run_secs"] for t in measured if t.feasible)
    seen = sorted(m.seconds for m in outcome.measurements if m.seconds is not None)
    assert told == pytest.approx(seen)
    best = outcome.best_so_far(6)
    seconds, (x, y, z) = measure(best.schedule, target, repeat=2)
    assert seconds > 0
    np.testing.assert_allclose(z, x @ y, rtol=1e-4, atol=1e-4)


@needs_tvm
def test_invalid_decisions_are_known_infeasible_without_a_build(matmul, tmp_path):
    from bayestune.integrations.tvm import BayestuneSearchStrategy, load_tvm
    load_tvm()
    from tvm.s_tir import meta_schedule as ms
    ctx = ms.TuneContext(mod=matmul, target=load_tvm().target.Target({"kind": "llvm", "num-cores": 2}),
                         space_generator="post-order-apply", search_strategy="replay-trace", task_name="t")
    strategy = BayestuneSearchStrategy("random", seed=0)
    strategy._initialize_with_tune_context(ctx)
    strategy.pre_tuning(4, 2, ctx.generate_design_space())
    spaces = strategy.record.spaces
    config = spaces.space.default_config()
    assert not isinstance(strategy._schedule(config), type(None))
    # a categorical index TVM refuses (as an out-of-range unroll choice would be)
    strategy.record.spaces.decisions = lambda c: [[64, 1, 1, 1], [64, 1, 1, 1], [64, 1], 9]
    refused = strategy._schedule(config)
    assert refused.kind == FailureKind.SCHEDULE and strategy.record.skipped_invalid == 1


@needs_tvm
def test_runner_errors_become_hidden_constraint_failures():
    from bayestune.integrations.tvm import load_tvm
    load_tvm()
    from bayestune.integrations.tvm.strategy import failure_kind
    assert failure_kind("LocalBuilder: Timeout, killed after 2 seconds") == FailureKind.TIMEOUT
    assert failure_kind("LocalBuilder: An exception occurred\nTraceback ...") == FailureKind.COMPILE
    assert failure_kind("LocalRunner: An exception occurred\nsegfault") == FailureKind.RUNTIME
