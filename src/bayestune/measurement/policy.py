"""How a live black box is measured: warm-up runs, repeats, a statistic, adaptive repeats and
an early abort, wrapped around any evaluator.

Why: one run of a compiled kernel on a shared machine is a noisy sample, and a tuner that
keeps the luckiest sample declares noise the winner. :class:`MeasuredEvaluator` runs the
black box ``warmup`` times (discarded: cold caches, JIT, frequency ramp-up), then ``repeats``
times, and — with ``max_repeats`` — keeps going until the confidence interval of the
statistic is within ``precision`` (relative half-width). With ``early_abort`` it stops as
soon as the runs show the configuration clearly worse than the best one measured so far (the
rule of :mod:`bayestune.measurement.early_stop`): its value is then recorded as a bound
(``Result.censored``), and the saved runs go to better candidates.
Every measured sample goes into ``Result.repeats`` (and so into the journal).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from bayestune.evaluators.base import Evaluator, InterruptedWithResult, evaluate_safely
from bayestune.exceptions import EvaluationError
from bayestune.measurement.early_stop import early_stop_bound
from bayestune.measurement.statistics import relative_half_width, summarise
from bayestune.measurement_spec import MeasurementPolicy
from bayestune.trial import FailureKind, Result, TrialStatus

logger = logging.getLogger(__name__)

#: Failures that decide a configuration at once, whatever ``max_failure_share``: a wrong answer.
DECISIVE_FAILURES = (FailureKind.VERIFICATION,)

#: Phase name of the time spent in warm-up runs, and of a run whose evaluator reports no phases.
WARMUP_PHASE = "warmup"
EVALUATE_PHASE = "evaluate"


def run_warmups(inner: Evaluator, config: Mapping[str, Any], warmup: int, timings: dict[str, float]) -> Result | None:
    """Run the discarded warm-up runs, timed under their own phase; a warm-up that does not succeed
    decides the configuration at once, so it is returned (with the timings so far), else None."""
    for _ in range(warmup):
        started = time.perf_counter()
        result = evaluate_safely(inner, config)
        add_timings(timings, {WARMUP_PHASE: time.perf_counter() - started})
        if result.status is not TrialStatus.OK:
            return with_timings(result, timings)
    return None


class MeasuredEvaluator(Evaluator):
    """``inner`` run under a :class:`MeasurementPolicy`; the Result carries every sample.

    An infeasible or wrong answer in any run, and any failure in a warm-up run, is the Result.
    A measured run that crashes or times out is kept as a NaN sample. Once more than
    ``max_failure_share`` of the runs failed, the configuration is measured no further; it fails
    only when no run succeeded. A configuration with successful runs keeps their statistic as
    its value, so the model learns where good configurations are even on a flaky machine, and
    its failed runs count against it where a winner is chosen (the confirmation refuses a
    candidate above the share), not by being measured more often than a loser. ``incumbent`` is the best statistic of ``objectives[0]`` this
    evaluator has produced (seed it when resuming).
    """

    def __init__(
        self, inner: Evaluator, policy: MeasurementPolicy, *, minimize: bool = True, incumbent: float | None = None
    ) -> None:
        super().__init__(inner.objectives)
        if not isinstance(policy, MeasurementPolicy):
            raise EvaluationError(f"policy must be a MeasurementPolicy, but got {policy!r}")
        self.inner = inner
        self.policy = policy
        self.minimize = bool(minimize)
        self.incumbent = incumbent

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        timings: dict[str, float] = {}
        failed_warmup = run_warmups(self.inner, config, self.policy.warmup, timings)
        if failed_warmup is not None:
            return failed_warmup
        runs: list[Result] = []
        failures: list[Result] = []
        while True:
            started = time.perf_counter()
            result = one_run(
                self.inner, config, lambda: self._summary(runs, timings, failed=len(failures)) if runs else None
            )
            add_timings(timings, dict(result.timings) or {EVALUATE_PHASE: time.perf_counter() - started})
            if result.status is TrialStatus.FAILED and result.kind not in DECISIVE_FAILURES:
                failures.append(result)
                if len(failures) > self.policy.max_failure_share * self.policy.most_runs:
                    break  # flaky: stop spending runs on it; its successful runs stay its value
            elif result.status is not TrialStatus.OK:
                return with_timings(result, timings)
            else:
                runs.append(result)
                bound = self._early_stop(runs)
                if bound is not None:
                    logger.debug(
                        "early stop after %d run(s): at least %s, the incumbent %s", len(runs), bound, self.incumbent
                    )
                    censored = self._summary(runs, timings, failed=len(failures))
                    return replace(censored, values={**censored.values, self.objectives[0]: bound}, censored=True)
            if len(runs) + len(failures) >= self.policy.most_runs or (runs and self._enough(runs)):
                break
        if not runs:
            return with_timings(failed_result(failures), timings)
        summary = self._summary(runs, timings, failed=len(failures))
        self._update_incumbent(summary)
        return summary

    def _enough(self, runs: Sequence[Result]) -> bool:
        """Whether the runs so far settle the configuration's number (see the module docstring)."""
        policy, n = self.policy, len(runs)
        if n >= policy.most_runs:
            return True
        if n < policy.repeats or policy.precision is None:
            return False
        samples = [r.values[self.objectives[0]] for r in runs]
        return relative_half_width(samples, policy.statistic, policy.confidence) <= policy.precision

    def _early_stop(self, runs: Sequence[Result]) -> float | None:
        """The censoring bound when ``early_abort`` is on and the runs are clearly worse than the
        incumbent (:func:`~bayestune.measurement.early_stop.early_stop_bound`), else None."""
        if not self.policy.early_abort or len(runs) >= self.policy.most_runs:
            return None
        samples = [r.values[self.objectives[0]] for r in runs]
        return early_stop_bound(samples, self.incumbent, minimize=self.minimize)

    def _summary(self, runs: Sequence[Result], timings: Mapping[str, float], *, failed: int = 0) -> Result:
        """The statistic of the successful runs; a failed run is a NaN sample of every objective."""
        names = [k for k in runs[0].values if all(k in r.values for r in runs)]
        repeats = {k: tuple(float(r.values[k]) for r in runs) for k in names}
        values = {k: summarise(v, self.policy.statistic) for k, v in repeats.items()}
        repeats.update({k: repeats[k] + (math.nan,) * failed for k in self.objectives if k in repeats})
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


def one_run(inner: Evaluator, config: Mapping[str, Any], completed: Callable[[], Result | None]) -> Result:
    """One run of ``config``; an interrupt during it carries ``completed()``, the configuration's
    runs so far (None: no run completed yet), to the loop that journals them."""
    try:
        return evaluate_safely(inner, config)
    except InterruptedWithResult:
        raise
    except KeyboardInterrupt:
        done = completed()
        if done is None:
            raise
        raise InterruptedWithResult(done) from None


def failed_result(failures: Sequence[Result]) -> Result:
    """The Result of a configuration none of whose measured runs succeeded: the last failure,
    saying how many runs failed."""
    last = failures[-1]
    if len(failures) == 1:
        return last
    return replace(last, error=f"all {len(failures)} measured runs failed, the last: {last.error}")


def add_timings(total: dict[str, float], more: Mapping[str, float]) -> None:
    for phase, seconds in more.items():
        total[phase] = total.get(phase, 0.0) + float(seconds)


def with_timings(result: Result, timings: Mapping[str, float]) -> Result:
    return replace(result, timings=dict(timings))
