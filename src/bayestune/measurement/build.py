"""A scenario's evaluator under its ``measurement`` section: the correctness check innermost
(every run is checked), the repeat policy around it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bayestune.evaluators.base import Evaluator
from bayestune.measurement.correctness import CheckedEvaluator
from bayestune.measurement.policy import MeasuredEvaluator
from bayestune.measurement.settings import MeasurementSpec


def measured(evaluator: Evaluator, spec: MeasurementSpec | None, *, minimize: bool = True,
             base_dir: str | Path | None = None) -> Evaluator:
    """``evaluator`` wrapped as ``spec`` asks (returned unchanged when it asks for nothing)."""
    if spec is None:
        return evaluator
    if spec.check is not None:
        evaluator = CheckedEvaluator(evaluator, spec.check, base_dir=base_dir)
    if spec.policy.is_single_run:
        return evaluator
    return MeasuredEvaluator(evaluator, spec.policy, minimize=minimize)


def for_remeasurement(evaluator: Evaluator) -> Evaluator:
    """The evaluator one re-measurement round calls: the policy's warm-up, then a single run.

    A round is one sample per candidate; the statistic is taken over the rounds.
    """
    if isinstance(evaluator, MeasuredEvaluator):
        single = replace(evaluator.policy, repeats=1, max_repeats=None, precision=None, early_abort=False)
        return MeasuredEvaluator(evaluator.inner, single, minimize=evaluator.minimize)
    return evaluator
