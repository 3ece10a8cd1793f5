"""How a live black box is measured: warm-up runs, repeats, a statistic, adaptive repeats and
an early abort, wrapped around any evaluator.

Why: one run of a compiled kernel on a shared machine is a noisy sample, and a tuner that
keeps the luckiest sample declares noise the winner. :class:`MeasuredEvaluator` runs the
black box ``warmup`` times (discarded: cold caches, JIT, frequency ramp-up), then ``repeats``
times, and — with ``max_repeats`` — keeps going until the confidence interval of the
statistic is within ``precision`` (relative half-width). With ``early_abort`` it stops as
soon as the interval says the configuration is worse than the best one measured so far:
its number is then good enough to rank it, and the saved runs go to better candidates.
Every measured sample goes into ``Result.repeats`` (and so into the journal).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from bayestune.evaluators.base import Evaluator, evaluate_safely
from bayestune.exceptions import EvaluationError
from bayestune.measurement_spec import MeasurementPolicy
from bayestune.measurement.statistics import confidence_interval, relative_half_width, summarise
from bayestune.trial import Result, TrialStatus

logger = logging.getLogger(__name__)

#: Phase name of the time spent in warm-up runs, and of a run whose evaluator reports no phases.
WARMUP_PHASE = "warmup"
EVALUATE_PHASE = "evaluate"


class MeasuredEvaluator(Evaluator):
    """``inner`` run under a :class:`MeasurementPolicy`; the Result carries every sample.

    A failure or an infeasible answer in any run (warm-up included) is the Result: a black box
    that crashes one time in five is not a working configuration. ``incumbent`` is the best
    statistic of ``objectives[0]`` this evaluator has produced (seed it when resuming).
    """

    def __init__(self, inner: Evaluator, policy: MeasurementPolicy, *, minimize: bool = True,
                 incumbent: float | None = None) -> None:
        super().__init__(inner.objectives)
        if not isinstance(policy, MeasurementPolicy):
            raise EvaluationError(f"policy must be a MeasurementPolicy, but got {policy!r}")
        self.inner = inner
        self.policy = policy
        self.minimize = bool(minimize)
        self.incumbent = incumbent

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        timings: dict[str, float] = {}
        for _ in range(self.policy.warmup):
            started = time.perf_counter()
            result = evaluate_safely(self.inner, config)
            _add(timings, {WARMUP_PHASE: time.perf_counter() - started})
            if result.status is not TrialStatus.OK:
                return _with_timings(result, timings)
        runs: list[Result] = []
        while True:
            started = time.perf_counter()
            result = evaluate_safely(self.inner, config)
            _add(timings, dict(result.timings) or {EVALUATE_PHASE: time.perf_counter() - started})
            if result.status is not TrialStatus.OK:
                return _with_timings(result, timings)
            runs.append(result)
            if self._enough(runs):
                break
        summary = self._summary(runs, timings)
        self._update_incumbent(summary)
        return summary

    def _enough(self, runs: Sequence[Result]) -> bool:
        """Whether the runs so far settle the configuration's number (see the module docstring)."""
        policy, n = self.policy, len(runs)
        if n >= policy.most_runs:
            return True
        samples = [r.values[self.objectives[0]] for r in runs]
        if policy.early_abort and self.incumbent is not None and n >= 2 and self._clearly_worse(samples):
            logger.debug("early abort after %d run(s): clearly worse than the incumbent %s", n, self.incumbent)
            return True
        if n < policy.repeats or policy.precision is None:
            return False
        return relative_half_width(samples, policy.statistic, policy.confidence) <= policy.precision

    def _clearly_worse(self, samples: Sequence[float]) -> bool:
        low, high = confidence_interval(samples, self.policy.statistic, self.policy.confidence)
        incumbent = float(self.incumbent)  # type: ignore[arg-type]  # checked by the caller
        return low > incumbent if self.minimize else high < incumbent

    def _summary(self, runs: Sequence[Result], timings: Mapping[str, float]) -> Result:
        names = [k for k in runs[0].values if all(k in r.values for r in runs)]
        repeats = {k: tuple(float(r.values[k]) for r in runs) for k in names}
        values = {k: summarise(v, self.policy.statistic) for k, v in repeats.items()}
        return Result(values=values, repeats=repeats, timings=dict(timings))

    def _update_incumbent(self, result: Result) -> None:
        value = result.values.get(self.objectives[0])
        if value is None or not math.isfinite(value):
            return
        if self.incumbent is None or (value < self.incumbent if self.minimize else value > self.incumbent):
            self.incumbent = value

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"MeasuredEvaluator({self.inner!r}, {self.policy})"


def _add(total: dict[str, float], more: Mapping[str, float]) -> None:
    for phase, seconds in more.items():
        total[phase] = total.get(phase, 0.0) + float(seconds)


def _with_timings(result: Result, timings: Mapping[str, float]) -> Result:
    return replace(result, timings=dict(timings))
