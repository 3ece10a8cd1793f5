"""The Kernel Tuner integration's pure parts (no Kernel Tuner needed): space conversion, failure kinds."""

from __future__ import annotations

import itertools

from kt_toy import TUNE_PARAMS, restriction_callable, restriction_string

from bayestune.integrations.kernel_tuner import (
    COMPILE,
    VERIFICATION,
    ConfigTimeout,
    KernelTunerSpace,
    classify_exception,
    failure_kind_of,
)
from bayestune.space.parameters import Ordinal
from bayestune.trial import FailureKind


def _valid() -> list[tuple]:
    return [
        v
        for v in itertools.product(*TUNE_PARAMS.values())
        if restriction_string(dict(zip(TUNE_PARAMS, v))) and restriction_callable(*v)
    ]


def test_space_uses_log_ordinals_drops_constants_and_keeps_exactly_the_valid_set():
    space = KernelTunerSpace(TUNE_PARAMS, _valid())
    assert space.names == ["bx", "by", "unroll"] and space.constants == {"arch": 80}
    bx = space.space["bx"]
    assert isinstance(bx, Ordinal) and bx.log  # powers of two: log scale (replay's rule)
    assert not space.space["unroll"].log
    assert space.space.count_feasible() == len(_valid()) == space.n_valid
    assert space.config({"bx": 64, "by": 16, "unroll": 0, "arch": 80}) is None  # 1024 > 256: restricted
    config = space.config({"bx": 16, "by": 4, "unroll": 1, "arch": 80})
    element = space.element(config)
    assert element == (16, 4, 1, 80) and all(type(v) is int for v in element)
    assert space.cache_key(element) == "16,4,1,80"


def test_failure_kinds_from_markers_and_exceptions():
    assert failure_kind_of({"time": 1.5}, "time") is None
    assert failure_kind_of({"time": "CompilationFailedConfig"}, "time") == COMPILE
    assert failure_kind_of({"time": "InvalidConfig"}, "time") == FailureKind.INVALID
    assert failure_kind_of({"time": "RuntimeFailedConfig", "bayestune_failure": "timeout"}, "time") == "timeout"
    assert failure_kind_of({"time": 1e20}, "time") == FailureKind.RUNTIME
    assert classify_exception(RuntimeError("clBuildProgram failed: BUILD_PROGRAM_FAILURE")) == COMPILE
    assert classify_exception(RuntimeError("Kernel result verification failed for: bx=4")) == VERIFICATION
    assert classify_exception(RuntimeError("CL_OUT_OF_RESOURCES")) == FailureKind.RUNTIME
    assert classify_exception(ConfigTimeout("late")) == FailureKind.TIMEOUT
