"""An optional correctness check: a configuration that computes the wrong answer is a failure.

Why: an aggressive schedule or flag set can be fast because it skips work (a race, a wrong
tile bound, fast-math gone too far). A wrong answer must never become the best result, so it
is recorded as a failure of kind ``FailureKind.VERIFICATION`` with the reason, and the
feasibility model learns to avoid its neighbourhood like any other hidden constraint.

Two ways to say what is right (:class:`~bayestune.measurement_spec.CorrectnessCheck`):
``expected`` output values (e.g. a checksum the black box prints beside its runtime) compared
with a tolerance, or a ``function`` ``(config, values) -> True | False | "reason"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator, describe_exception, evaluate_safely
from bayestune.evaluators.python_callable import load_callable
from bayestune.exceptions import EvaluationError
from bayestune.measurement_spec import CorrectnessCheck
from bayestune.trial import FailureKind, Result, TrialStatus


def wrong_answer(
    check: CorrectnessCheck, function: Callable[..., Any] | None, config: Mapping[str, Any], values: Mapping[str, float]
) -> str | None:
    """Why ``values`` are wrong for ``config`` by ``check`` (its loaded ``function``), or None when right."""
    for name, want in check.expected.items():
        if name not in values:
            return f"wrong answer: the black box did not report output {name!r} to check (expected {want!r})"
        got = float(values[name])
        if not (math.isfinite(got) and abs(got - want) <= check.atol + check.rtol * abs(want)):
            return f"wrong answer: output {name!r} is {got!r}, expected {want!r} (rtol {check.rtol}, atol {check.atol})"
    if function is None:
        return None
    try:
        verdict = function(dict(config), dict(values))
    except Exception as exc:  # noqa: BLE001 - a broken check fails the configuration, never the run
        return f"wrong answer: the check function raised {describe_exception(exc)}"
    if verdict is True or verdict is None:
        return None
    if verdict is False:
        return "wrong answer: the check function rejected the output"
    return f"wrong answer: {verdict}"


class CheckedEvaluator(Evaluator):
    """``inner`` whose measured answers are checked; a wrong one becomes a VERIFICATION failure."""

    def __init__(self, inner: Evaluator, check: CorrectnessCheck, *, base_dir: str | Path | None = None) -> None:
        super().__init__(inner.objectives)
        if not isinstance(check, CorrectnessCheck):
            raise EvaluationError(f"check must be a CorrectnessCheck, but got {check!r}")
        self.inner = inner
        self.check = check
        function = check.function
        self.function = load_callable(function, base_dir) if isinstance(function, str) else function

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        result = evaluate_safely(self.inner, config)
        if result.status is not TrialStatus.OK:
            return result
        reason = wrong_answer(self.check, self.function, config, result.values)
        if reason is None:
            return result
        return replace(Result.failure(reason, FailureKind.VERIFICATION), timings=dict(result.timings))

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"CheckedEvaluator({self.inner!r})"
