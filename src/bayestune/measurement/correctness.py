"""An optional correctness check: a configuration that computes the wrong answer is a failure.

Why: an aggressive schedule or flag set can be fast because it skips work (a race, a wrong
tile bound, fast-math gone too far). A wrong answer must never become the best result, so it
is recorded as a failure of kind ``FailureKind.VERIFICATION`` with the reason, and the
feasibility model learns to avoid its neighbourhood like any other hidden constraint.

Two ways to say what is right: ``expected`` output values (e.g. a checksum the black box
prints beside its runtime) compared with a tolerance, or a ``check`` function
``(config, values) -> True | False | "reason"`` given in Python or as ``"module:function"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from bayestune.evaluators.base import Evaluator, describe_exception, evaluate_safely
from bayestune.exceptions import EvaluationError
from bayestune.trial import FailureKind, Result, TrialStatus

#: A check: None when the answer is right, else why it is wrong.
CheckFunction = Callable[[Mapping[str, Any], Mapping[str, float]], Any]


@dataclass(frozen=True)
class CorrectnessCheck:
    """What a right answer looks like: ``expected`` outputs within ``rtol``/``atol``, and/or ``check``."""

    expected: Mapping[str, float] = field(default_factory=dict)
    rtol: float = 1e-6
    atol: float = 0.0
    check: CheckFunction | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.expected, Mapping):
            raise EvaluationError(f"expected must map output names to numbers, but got {self.expected!r}")
        for name, value in self.expected.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise EvaluationError(f"expected output {name!r} must be a finite number, but got {value!r}")
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise EvaluationError(f"{name} must be a number >= 0, but got {value!r}")
        if self.check is not None and not callable(self.check):
            raise EvaluationError(f"check must be a function (config, values) -> bool or reason, but got {self.check!r}")
        if not self.expected and self.check is None:
            raise EvaluationError("a correctness check needs expected outputs, a check function, or both")

    def wrong_answer(self, config: Mapping[str, Any], values: Mapping[str, float]) -> str | None:
        """Why ``values`` are wrong for ``config``, or None when they are right."""
        for name, want in self.expected.items():
            if name not in values:
                return f"wrong answer: the black box did not report output {name!r} to check (expected {want!r})"
            got = float(values[name])
            if not (math.isfinite(got) and abs(got - want) <= self.atol + self.rtol * abs(want)):
                return f"wrong answer: output {name!r} is {got!r}, expected {want!r} (rtol {self.rtol}, atol {self.atol})"
        if self.check is None:
            return None
        try:
            verdict = self.check(dict(config), dict(values))
        except Exception as exc:  # noqa: BLE001 - a broken check fails the configuration, never the run
            return f"wrong answer: the check function raised {describe_exception(exc)}"
        if verdict is True or verdict is None:
            return None
        if verdict is False:
            return "wrong answer: the check function rejected the output"
        return f"wrong answer: {verdict}"


class CheckedEvaluator(Evaluator):
    """``inner`` whose measured answers are checked; a wrong one becomes a VERIFICATION failure."""

    def __init__(self, inner: Evaluator, check: CorrectnessCheck) -> None:
        super().__init__(inner.objectives)
        if not isinstance(check, CorrectnessCheck):
            raise EvaluationError(f"check must be a CorrectnessCheck, but got {check!r}")
        self.inner = inner
        self.check = check

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        result = evaluate_safely(self.inner, config)
        if result.status is not TrialStatus.OK:
            return result
        reason = self.check.wrong_answer(config, result.values)
        if reason is None:
            return result
        return replace(Result.failure(reason, FailureKind.VERIFICATION), timings=dict(result.timings))

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"CheckedEvaluator({self.inner!r})"
