"""Kernel Tuner's result records as the optimizer's results: failure markers, failure kinds and
the hidden constraint an exception reveals."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bayestune.integrations.kernel_tuner.timeouts import ConfigTimeout
from bayestune.trial import FailureKind, Result

#: Failure kinds this integration reports besides the core vocabulary.
COMPILE, VERIFICATION = FailureKind.COMPILE, FailureKind.VERIFICATION
#: Kernel Tuner's failure markers -> failure kinds, and back.
_MARKER_KIND = {
    "InvalidConfig": FailureKind.INVALID,
    "CompilationFailedConfig": COMPILE,
    "RuntimeFailedConfig": FailureKind.RUNTIME,
    "ErrorConfig": FailureKind.RUNTIME,
}
_COMPILE_HINTS = ("clbuildprogram", "build_program_failure", "compil", "nvrtc", "nvcc", "ptxas")


def failure_kind_of(record: Mapping[str, Any], objective: str) -> str | None:
    """The failure kind of a Kernel Tuner result/cache record, None if it holds a measurement."""
    if record.get("bayestune_failure"):  # our own kinds (verification, timeout) outlive the cache marker
        return str(record["bayestune_failure"])
    value = record.get(objective)
    marker = record.get("__error__", value if isinstance(value, str) else None)
    if marker is not None:
        name = marker if type(marker) is str else type(marker).__name__
        return _MARKER_KIND.get(name, FailureKind.RUNTIME)
    if value is None:
        return FailureKind.PARSE
    try:
        number = float(value)
    except (TypeError, ValueError):
        return FailureKind.PARSE
    if not math.isfinite(number) or number >= 1e20:  # very old caches mark failures with 1e20
        return FailureKind.RUNTIME
    return None


def result_of(record: Mapping[str, Any], objective: str | Sequence[str]) -> Result:
    """A Kernel Tuner record as the optimizer's Result (``objective``: one name or several)."""
    names = [objective] if isinstance(objective, str) else list(objective)
    for name in names:
        kind = failure_kind_of(record, name)
        if kind is None:
            continue
        if kind == FailureKind.PARSE and name not in record:
            return Result.failure(
                f"Kernel Tuner's result has no objective {name!r} (it has {sorted(record)}); "
                "a derived objective must be defined in tune_kernel's metrics=",
                kind,
            )
        return Result.failure(str(record.get("bayestune_error") or record.get("__error__") or record.get(name)), kind)
    values = {name: float(record[name]) for name in names}
    for extra in ("compile_time", "verification_time", "benchmark_time"):
        if isinstance(record.get(extra), (int, float)):
            values[extra] = float(record[extra])
    return Result(values=values)


def classify_exception(exc: BaseException) -> str:
    """Which hidden constraint an exception out of Kernel Tuner's runner reveals."""
    if isinstance(exc, ConfigTimeout):
        return FailureKind.TIMEOUT
    text = f"{type(exc).__name__}: {exc}".lower()
    if "verification failed" in text:
        return VERIFICATION
    if any(h in text for h in _COMPILE_HINTS):
        return COMPILE
    return FailureKind.RUNTIME


def error_marker(kind: str) -> Any:
    """Kernel Tuner's own failure marker for a failure of ``kind`` (what its cache stores)."""
    from kernel_tuner import util

    return util.CompilationFailedConfig() if kind == COMPILE else util.RuntimeFailedConfig()
