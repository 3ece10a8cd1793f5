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


def test_without_defaults_the_default_is_a_valid_configuration_not_a_made_up_middle_one():
    """The README's snippet gives no defaults; the middle values broke its restriction, and the run
    warned about a configuration the user never gave."""
    params = {"block_size_x": [8, 16, 32], "block_size_y": [1, 2, 4, 8, 16, 32], "tile_size_y": [1, 2]}
    valid = [v for v in itertools.product(*params.values()) if v[0] == v[1] * v[2]]
    space = KernelTunerSpace(params, valid)
    default = space.space.default_config()
    assert space.element(default) in valid
    X = space.space.to_matrix([default])
    assert bool(space.space.is_feasible(X)[0])
    given = KernelTunerSpace(params, valid, {"block_size_x": 32})  # the user's values are kept
    assert given.space.default_config()["block_size_x"] == 32
    assert given.element(given.space.default_config()) in valid
