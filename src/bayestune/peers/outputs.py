"""One configuration's outputs, as a peer's black box returned them, made a :class:`Result`: the
objectives (numbers), the feasibility flag in the peer's words or as a Python bool, and extra
metrics (BaCO's ``std_estimate``). A malformed answer stops the run with one line naming it,
as the peers stop; a NaN objective is a recorded failure, never a best value."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bayestune.exceptions import EvaluationError
from bayestune.storage.csv_io import FlagWords
from bayestune.trial import FailureKind, Result


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            return float(value)  # numpy scalars, 0-d tensors, numeric strings
        except (TypeError, ValueError):
            raise EvaluationError(f"the black box returned {value!r} for {name!r}: expected a number") from None
    return float(value)


def _flag(name: str, value: Any, flags: FlagWords | None, *, truthy: bool) -> bool:
    """HyperMapper: True/False (== True, == False) or its declared words; BaCO (``truthy``): bool(value)."""
    if isinstance(value, str):
        word = flags.read(value) if flags is not None else None
        if word is not None:
            return word
        if truthy:
            return bool(value)
        raise EvaluationError(
            f"the black box returned {value!r} for the feasibility flag {name!r}: expected True or False"
        )
    if truthy:
        return bool(value)
    if value == True:  # noqa: E712 - HyperMapper compares with ==, so 1 and 0 count
        return True
    if value == False:  # noqa: E712
        return False
    raise EvaluationError(f"the black box returned {value!r} for the feasibility flag {name!r}: expected True or False")


def make_result(
    outputs: Mapping[str, Any],
    objectives: Sequence[str],
    *,
    feasible: str | None = None,
    flags: FlagWords | None = None,
    extras: Sequence[str] = (),
    truthy_flag: bool = False,
) -> Result:
    """The result of one configuration from ``outputs`` (every name in ``objectives``, ``feasible``, ``extras``)."""
    values = {name: _number(name, outputs[name]) for name in [*objectives, *extras]}
    bad = [name for name in objectives if not math.isfinite(values[name])]
    if bad:
        return Result(
            values={k: v for k, v in values.items() if math.isfinite(v)},
            feasible=False,
            error=f"objective {bad[0]!r} is {values[bad[0]]}",
            kind=FailureKind.NAN,
        )
    ok = _flag(feasible, outputs[feasible], flags, truthy=truthy_flag) if feasible else True
    return Result(values=values, feasible=ok)
