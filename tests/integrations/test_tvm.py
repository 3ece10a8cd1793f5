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

needs_tvm = pytest.mark.skipif(
    importlib.util.find_spec("tvm") is None,
    reason="Apache TVM is not installed (pip install -e '.[tvm]' in the bayestune checkout)",
)


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

    ctx = ms.TuneContext(
        mod=matmul,
        target=load_tvm().target.Target({"kind": "llvm", "num-cores": 2}),
        space_generator="post-order-apply",
        search_strategy="replay-trace",
        task_name="t",
    )
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


TARGET = {"kind": "llvm", "num-cores": 2}


def small_matmul(n: int) -> object:
    from bayestune.integrations.tvm import load_tvm

    tvm = load_tvm()
    from tvm import te

    a, b = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c])})


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bayestune", *args], capture_output=True, text=True, timeout=300, check=False
    )


@needs_tvm
def test_a_run_keeps_a_journal_that_show_export_and_resume_read(matmul, tmp_path):
    from bayestune.integrations.tvm import tune
    from bayestune.storage.journal import Journal

    outcome = tune(matmul, TARGET, tmp_path / "w", 4, num_trials_per_iter=2, initial_design=2, seed=0)
    assert outcome.journal == tmp_path / "w" / "bayestune.journal.db" and outcome.journal.is_file()
    shown = cli("show", str(outcome.journal), "--top", "2")
    assert shown.returncode == 0, shown.stderr
    assert "run_secs" in shown.stdout
    exported = cli("export", str(outcome.journal), str(tmp_path / "runs.csv"))
    assert exported.returncode == 0, exported.stderr
    rows = (tmp_path / "runs.csv").read_text().splitlines()
    assert len(rows) == 1 + len(outcome.record.trials) and "tile_i" in rows[0]
    first = len(outcome.record.trials)
    again = tune(matmul, TARGET, tmp_path / "w", 6, num_trials_per_iter=2, initial_design=2, seed=0)
    assert again.record.resumed == 4 and len(again.measurements) == 2 and again.record.measured == 6
    journal = Journal(outcome.journal)
    try:
        assert len(journal.trials()) == first + len(again.record.trials)
        assert len(again.record.trials) >= 2
    finally:
        journal.close()


@needs_tvm
def test_a_run_of_tvms_own_search_is_journaled_too(matmul, tmp_path):
    from bayestune.integrations.tvm import tune
    from bayestune.storage.journal import Journal

    outcome = tune(matmul, TARGET, tmp_path, 3, num_trials_per_iter=3, strategy="replay-trace")
    journal = Journal(outcome.journal)
    try:
        trials = journal.trials()
        assert journal.get_meta("strategy") == "replay-trace"
        assert sorted(t.values["run_secs"] for t in trials if t.feasible) == pytest.approx(
            sorted(m.seconds for m in outcome.measurements if m.seconds is not None)
        )
        assert len(trials) == len(outcome.measurements) == 3
    finally:
        journal.close()
    shown = cli("show", str(outcome.journal))
    assert shown.returncode == 0 and "run_secs" in shown.stdout, shown.stderr
    with pytest.raises(ValueError, match="already holds a run"):
        tune(matmul, TARGET, tmp_path, 3, num_trials_per_iter=3, strategy="replay-trace")


@needs_tvm
def test_bayestunes_own_errors_come_out_unchanged_and_no_worker_is_left(matmul, tmp_path):
    import psutil

    from bayestune.exceptions import BayestuneError
    from bayestune.integrations.tvm import tune

    bad = {"max_training_points": 250, "experimental": {"memory_policy": "nope"}}
    # Only the processes this call starts count: other tests of the same session may have left
    # workers (a Dask cluster, a pool) alive that are none of TVM's business.
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(
        BayestuneError, match=r"memory_policy in \['mixed'.*got experimental.memory_policy='nope'"
    ) as info:
        tune(matmul, TARGET, tmp_path, 4, num_trials_per_iter=2, strategy_options=bad)
    assert type(info.value) is BayestuneError  # not TVM's RuntimeError around it
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.is_running()]
    assert [p for p in left if p.status() != psutil.STATUS_ZOMBIE] == []
    with pytest.raises(BayestuneError, match="no such file or folder"):
        tune(matmul, TARGET, tmp_path, 4, num_trials_per_iter=2, prior_runs=[tmp_path / "missing"])


@needs_tvm
def test_builds_use_the_api_tvm_does_not_deprecate(matmul):
    import warnings

    from bayestune.integrations.tvm import load_tvm, measure

    load_tvm()
    from tvm.s_tir import Schedule

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        seconds, _ = measure(Schedule(matmul), TARGET, repeat=1, number=1)
    assert seconds > 0


@needs_tvm
def test_prior_runs_from_journals_and_metaschedule_databases(matmul, tmp_path):
    from bayestune.integrations.tvm import tune

    source = tune(matmul, TARGET, tmp_path / "bo", 4, num_trials_per_iter=2, initial_design=2, seed=3)
    best = source.record.best.config
    # mode `both`: the source's best configuration opens the initial design
    warm = tune(
        matmul,
        TARGET,
        tmp_path / "warm",
        2,
        num_trials_per_iter=2,
        initial_design=2,
        seed=4,
        prior_runs=[str(tmp_path / "b*")],
        transfer_mode="both",
        journal=None,
    )
    assert best in [t.config for t in warm.record.trials[:2]]
    assert "bayestune.journal.db: 4 trial(s) of a bayestune journal" in warm.record.transfer_note
    # a MetaSchedule work directory holding records of two operators: the other one's are refused
    shared = tmp_path / "shared"
    tune(small_matmul(32), TARGET, shared, 2, num_trials_per_iter=2, strategy="replay-trace", journal=None)
    tune(matmul, TARGET, shared, 3, num_trials_per_iter=3, strategy="replay-trace", journal=None)
    read = tune(
        matmul, TARGET, tmp_path / "read", 2, num_trials_per_iter=2, initial_design=2, prior_runs=[shared], journal=None
    )
    note = read.record.transfer_note
    assert "database_tuning_record.json: 3 record(s) of this operator read, 2 of other operators refused" in note
    from bayestune.exceptions import BayestuneError

    other = tmp_path / "other"
    tune(small_matmul(32), TARGET, other, 2, num_trials_per_iter=2, strategy="replay-trace", journal=None)
    with pytest.raises(BayestuneError, match=r"no record of this operator \(2 record\(s\), 2 of other operators"):
        tune(
            matmul, TARGET, tmp_path / "x", 2, num_trials_per_iter=2, prior_runs=[other / "database_tuning_record.json"]
        )


def small_conv2d() -> object:
    """A padded 3x3 convolution: the padding stage's compute location is a decision."""
    from bayestune.integrations.tvm import load_tvm

    tvm = load_tvm()
    from tvm import te

    n, c, h, w, f = 1, 4, 8, 8, 4
    data = te.placeholder((n, c, h, w), name="data")
    kernel = te.placeholder((f, c, 3, 3), name="kernel")
    pad = te.compute(
        (n, c, h + 2, w + 2),
        lambda b, ch, y, x: te.if_then_else(te.all(y >= 1, y <= h, x >= 1, x <= w), data[b, ch, y - 1, x - 1], 0.0),
        name="pad",
    )
    rc, ry, rx = te.reduce_axis((0, c), "rc"), te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx")
    out = te.compute(
        (n, f, h, w),
        lambda b, ff, y, x: te.sum(pad[b, rc, y + ry, x + rx] * kernel[ff, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv",
    )
    return tvm.IRModule({"main": te.create_prim_func([data, kernel, out])})


@needs_tvm
def test_the_decision_space_is_the_same_whatever_the_design_spaces_sampled():
    """Issue 42: the padding stage's compute locations were probed at the design space's sampled
    tiles and differed run to run; now they and the defaults depend on the operator only."""
    import tvm
    from tvm.s_tir import meta_schedule as ms

    from bayestune.integrations.tvm.strategy import BayestuneSearchStrategy

    mod = small_conv2d()

    def space_of(rand_state: int):
        context = ms.TuneContext(
            mod=mod,
            target=tvm.target.Target(TARGET),
            space_generator="post-order-apply",
            search_strategy="replay-trace",
            task_name="main",
            rand_state=rand_state,
        )
        strategy = BayestuneSearchStrategy("random", seed=0)
        strategy._initialize_with_tune_context(context)
        strategy.pre_tuning(4, 2, context.generate_design_space())
        return strategy.record.spaces.space

    spaces = [space_of(r) for r in (1, 7, 123)]
    locations = [p for p in spaces[0].parameters if p.name.startswith("loc_")]
    assert locations and all(p.values[:2] == [-2, -1] for p in locations)
    assert all(s.to_spec() == spaces[0].to_spec() for s in spaces[1:])
    assert all(s.default_config() == spaces[0].default_config() for s in spaces[1:])


@needs_tvm
@pytest.mark.parametrize("strategy", ["bo", "evolutionary"])
def test_a_conv2d_run_journals_every_measurement_and_as_many_evaluations_as_trials(strategy, tmp_path):
    """Issue 42: evolutionary runs lost measurements that fit no configuration (the probed
    locations missed some), and a 64-trial bo run showed 65 evaluations."""
    from bayestune.integrations.tvm import tune

    outcome = tune(small_conv2d(), TARGET, tmp_path / "w", 6, num_trials_per_iter=3, strategy=strategy, seed=0)
    shown = cli("show", str(outcome.journal))
    assert shown.returncode == 0, shown.stderr
    assert f"{outcome.journal}: {len(outcome.measurements)} evaluation(s)" in shown.stdout
    assert len(outcome.measurements) == 6
