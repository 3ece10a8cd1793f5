"""The benchmarks' live Kernel Tuner black box (PoCL on a CPU is enough): every call is a fresh
compile + answer check + timing through the integration's worker, never a cached answer."""

from __future__ import annotations

import pytest

from bayestune.trial import TrialStatus

pytest.importorskip("kernel_tuner", reason="kernel_tuner is not installed")
cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed")


def _opencl_devices() -> list:
    try:
        return [d for p in cl.get_platforms() for d in p.get_devices()]
    except Exception:  # noqa: BLE001 - no ICD loader / no platform: no device
        return []


if not _opencl_devices():
    pytest.skip("no OpenCL device", allow_module_level=True)

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
