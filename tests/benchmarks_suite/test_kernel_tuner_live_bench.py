"""The benchmarks' live Kernel Tuner black box (PoCL on a CPU is enough): every call is a fresh
compile + answer check + timing through the integration's worker, never a cached answer."""

from __future__ import annotations

import pytest
from opencl_probe import require_opencl_device

from bayestune.trial import TrialStatus

require_opencl_device()

from benchmarks import kernel_tuner_live  # noqa: E402
from benchmarks.kernel_tuner_live import KernelTunerEvaluator, fastest, screen  # noqa: E402


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(kernel_tuner_live.KT_PIPELINES, "kt_tiny", ("matmul", 64))
    return "kt_tiny"


def test_repeated_evaluations_are_fresh_measurements(small: str) -> None:
    evaluator = KernelTunerEvaluator(small, iterations=3)
    try:
        configs = evaluator.configurations()
        assert configs and all(evaluator.space.config(c) == c for c in configs)
        first, second = (evaluator.evaluate(configs[0]) for _ in range(2))
        assert first.status is TrialStatus.OK and second.status is TrialStatus.OK
        # the worker's runner used to answer a configuration it had run from its cache: no compile, same time
        assert first.timings["compile"] > 0 and second.timings["compile"] > 0
        assert evaluator.calls == 2
    finally:
        evaluator.close()


def test_screen_measures_every_valid_configuration_once(small: str, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(KernelTunerEvaluator, "configurations", lambda self: [self.valid_default()])
    path = screen(small, tmp_path / "c.jsonl")
    assert len(fastest(path)) == 1
    screen(small, path)  # done configurations are skipped
    assert len(path.read_text().splitlines()) == 1


def test_heteroscedastic_bo_runs_end_to_end_on_the_live_kernel_with_repeats(small: str) -> None:
    from bayestune.measurement.policy import MeasuredEvaluator
    from bayestune.measurement_spec import MeasurementPolicy
    from bayestune.optimizer import Optimizer
    from bayestune.scenario.records import DesignSpec

    evaluator = KernelTunerEvaluator(small, iterations=3)
    try:
        opt = Optimizer(
            evaluator.space.space,
            objectives=["time"],
            strategy="bo",
            strategy_options={"noise": "heteroscedastic"},
            design=DesignSpec(size=3),
            seed=0,
        )
        best = opt.optimize(MeasuredEvaluator(evaluator, MeasurementPolicy(repeats=2)), 5)
    finally:
        evaluator.close()
    assert best is not None and len(opt.trials) == 5
    assert all(len(t.repeats["time"]) == 2 for t in opt.trials if t.feasible)
    # the heteroscedastic GP (fed each trial's repeat variance) proposed the trials after the design
    assert [t.origin for t in opt.trials[3:]] == ["suggested", "suggested"]
    assert evaluator.calls == 2 * len(opt.trials)
