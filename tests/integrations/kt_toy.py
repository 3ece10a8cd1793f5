"""A small recorded kernel in Kernel Tuner's cache format, shared by the Kernel Tuner integration tests."""

from __future__ import annotations

import itertools
import json
import math

TUNE_PARAMS = {"bx": [1, 2, 4, 8, 16, 32, 64], "by": [1, 2, 4, 8, 16], "unroll": [0, 1], "arch": [80]}


def restriction_string(p: dict) -> bool:
    return p["bx"] * p["by"] <= 256


def restriction_callable(bx: int, by: int, unroll: int, arch: int) -> bool:
    """Kernel Tuner calls a callable restriction with every parameter's value, in tune_params order."""
    return by <= 4 * bx


def recorded_time(bx: int, by: int, unroll: int) -> float:
    """A smooth bowl with its optimum at bx=16, by=4, unroll=1 (time 1.0)."""
    return 1.0 + (math.log2(bx) - 4) ** 2 * 0.3 + (math.log2(by) - 2) ** 2 * 0.5 + (1 - unroll) * 0.4


def failure_of(bx: int, by: int, unroll: int) -> str | None:
    if bx == 64 and unroll == 1:
        return "CompilationFailedConfig"
    if bx == 32 and by == 8:
        return "RuntimeFailedConfig"
    return None


def write_cache(path):
    """Write the toy kernel's cache: every configuration that passes both restrictions."""
    cache = {}
    for bx, by, unroll, arch in itertools.product(*TUNE_PARAMS.values()):
        p = {"bx": bx, "by": by, "unroll": unroll, "arch": arch}
        if not (restriction_string(p) and restriction_callable(**p)):
            continue
        failure = failure_of(bx, by, unroll)
        t = failure if failure else recorded_time(bx, by, unroll)
        cache[f"{bx},{by},{unroll},{arch}"] = {
            **p,
            "time": t,
            "times": [t] * 3 if not failure else t,
            "compile_time": 100.0,
            "verification_time": 0,
            "benchmark_time": 10.0,
            "strategy_time": 0,
            "framework_time": 0,
            "timestamp": "2026-11-24 00:00:00",
        }
    data = {
        "device_name": "Simulated",
        "kernel_name": "toy",
        "problem_size": [1024],
        "tune_params_keys": list(TUNE_PARAMS),
        "tune_params": TUNE_PARAMS,
        "objective": "time",
        "cache": cache,
    }
    path.write_text(json.dumps(data))
    return path
