"""Racing: the default measurement of a live black box — repeats spent only where they can
change which configuration is best.

Why: one run per configuration lets noise pick the winner (the search keeps the luckiest
sample); a fixed number of repeats per configuration multiplies the cost of every clear loser.
Racing runs the first configuration :data:`PROBE_RUNS` times to learn the noise, then re-runs a
configuration, up to :data:`RACE_RUNS` runs, only while its runs cannot show it worse than the
best so far: a one-sided test at level :data:`RACE_CONFIDENCE` on the mean of the log times, with the
standard deviation pooled over every repeated configuration of the run (one configuration's 2
runs say little about the noise; the run's pooled runs say a lot). A clear loser costs one run;
a contender is measured until it is beaten or has :data:`RACE_RUNS` runs; a new best has at
least :data:`NEW_BEST_RUNS`. A black box whose repeats agree within :data:`QUIET_SPREAD` is
measured once per configuration after the probe. The value kept is the policy's statistic of
the runs, and every run goes into ``Result.repeats`` (so the model sees the noise).

Failures: a first run that fails fails the configuration at once (a crash or a timeout costs
what it cost without racing); a later crash or timeout is a NaN repeat, and above
``max_failure_share`` of :data:`RACE_RUNS` the configuration is raced no further but keeps its
successful runs as its value (a flaky contender is not stored as a failure, which would teach
the feasibility model that the best region is infeasible). Values that are not all positive
are raced on their own scale instead of the log scale.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from scipy import stats

from bayestune.evaluators.base import Evaluator
from bayestune.measurement.policy import (
    DECISIVE_FAILURES,
    EVALUATE_PHASE,
    MeasuredEvaluator,
    add_timings,
    one_run,
    run_warmups,
    with_timings,
)
from bayestune.measurement.statistics import summarise
from bayestune.measurement_spec import MeasurementPolicy
from bayestune.trial import Result, TrialStatus

logger = logging.getLogger(__name__)

#: Runs of the first configuration, to learn the noise.
PROBE_RUNS = 3
#: Most runs of one configuration.
RACE_RUNS = 5
#: Least runs of a configuration that becomes the best so far.
NEW_BEST_RUNS = 3
#: One-sided level of "clearly worse than the best so far": lower stops losers sooner (fewer
#: calls) at the risk of stopping a contender; 0.8 measured better than 0.95 at fewer calls
#: (benchmarks/confirmation.py, benchmarks/results/measurement/confirmation_racing.md).
RACE_CONFIDENCE = 0.8
#: Relative spread (max / min - 1) of the probe's runs below which the black box counts as quiet.
QUIET_SPREAD = 0.005


class RacingEvaluator(MeasuredEvaluator):
    """``inner`` raced against the best configuration so far (see the module docstring).

    ``policy`` gives the warm-up, the statistic and the failure share; its repeat counts and
    the test's level are the racing constants. ``incumbent`` (the best statistic so
    far) and the noise can be seeded from earlier trials with :meth:`learn`.
    """

    def __init__(
        self,
        inner: Evaluator,
        policy: MeasurementPolicy | None = None,
        *,
        minimize: bool = True,
        incumbent: float | None = None,
    ) -> None:
        policy = replace(
            policy or MeasurementPolicy(), repeats=RACE_RUNS, max_repeats=None, precision=None, early_abort=False
        )
        super().__init__(inner, policy, minimize=minimize, incumbent=incumbent)
        self._samples: list[list[float]] = []  # finite runs of every repeated configuration (own scale)
        self._best_samples: list[float] | None = None  # the incumbent's runs
        self._quiet = False
        self.runs = 0  # measured runs of this session (warm-up excluded)
        self.configurations = 0  # configurations measured in this session

    def note(self) -> str:
        """What the user is told when a run starts: where its extra black-box calls come from."""
        return (
            f"measuring by racing: the first configuration {PROBE_RUNS} times to learn the noise, then up to "
            f"{RACE_RUNS} runs only for configurations that may be the best "
            "(`measurement: {race: false}` turns it off)"
        )

    def summary(self) -> str:
        """What racing cost, for the end of a run."""
        quiet = "; the black box is quiet: one run per configuration after the probe" if self._quiet else ""
        return f"racing: {self.runs} run(s) of {self.configurations} configuration(s){quiet}"

    # -- what the run has learnt ------------------------------------------------------------

    def learn(self, history: Iterable[Sequence[float]]) -> None:
        """Seed the noise and the incumbent from earlier configurations' runs (a resumed run)."""
        for runs in history:
            finite = [float(v) for v in runs if math.isfinite(v)]
            if not finite:
                continue
            if len(finite) >= 2:
                self._samples.append(finite)
            self._consider_best(finite)
        self._quiet = self._is_quiet()

    @property
    def _log_scale(self) -> bool:
        return all(v > 0 for runs in self._samples for v in runs) and (
            self._best_samples is None or all(v > 0 for v in self._best_samples)
        )

    def _scaled(self, values: Sequence[float], log: bool) -> np.ndarray:
        """Values on the racing scale, lower is better."""
        x = np.log(np.asarray(values, dtype=float)) if log else np.asarray(values, dtype=float)
        return x if self.minimize else -x

    def noise(self) -> tuple[float, int]:
        """``(pooled standard deviation, degrees of freedom)`` of one run on the racing scale."""
        log = self._log_scale
        squares, df = 0.0, 0
        for runs in self._samples:
            x = self._scaled(runs, log)
            squares += float(np.sum((x - x.mean()) ** 2))
            df += x.size - 1
        return (math.sqrt(squares / df), df) if df else (math.nan, 0)

    def _is_quiet(self) -> bool:
        if not self._samples or not all(v > 0 for v in self._samples[0]):
            return False
        first = self._samples[0]
        return len(self._samples) == 1 and max(first) / min(first) - 1.0 < QUIET_SPREAD

    def _consider_best(self, runs: Sequence[float]) -> bool:
        value = self._statistic(runs)
        if not math.isfinite(value):
            return False
        if (
            self.incumbent is None
            or self._best_samples is None
            or (value < self.incumbent if self.minimize else value > self.incumbent)
        ):
            self.incumbent, self._best_samples = value, list(runs)
            return True
        return False

    def _statistic(self, runs: Sequence[float]) -> float:
        return summarise(runs, self.policy.statistic) if runs else math.nan

    def _clearly_worse(self, samples: Sequence[float]) -> bool:
        """One-sided test: the mean of these runs above the incumbent's, beyond the pooled noise."""
        best = self._best_samples
        sd, df = self.noise()
        if best is None or not samples or df == 0 or not math.isfinite(sd):
            return False
        log = self._log_scale and all(v > 0 for v in samples)
        mine, theirs = self._scaled(samples, log), self._scaled(best, log)
        if sd == 0:
            return bool(mine.mean() > theirs.mean())
        t = (mine.mean() - theirs.mean()) / (sd * math.sqrt(1 / mine.size + 1 / theirs.size))
        return bool(t > stats.t.ppf(RACE_CONFIDENCE, df))

    # -- one configuration ------------------------------------------------------------------

    def _wanted(self, samples: Sequence[float]) -> bool:
        """Whether one more run of this configuration can change the race."""
        n = len(samples)
        if n >= RACE_RUNS:
            return False
        if self._best_samples is None and not self._samples:  # the probe
            return n < PROBE_RUNS
        if self._quiet:
            return False
        return not self._clearly_worse(samples)

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        timings: dict[str, float] = {}
        failed_warmup = run_warmups(self.inner, config, self.policy.warmup, timings)
        if failed_warmup is not None:
            return failed_warmup
        name = self.objectives[0]
        runs: list[Result] = []
        failed = 0
        self.configurations += 1
        while True:
            started = time.perf_counter()
            result = one_run(self.inner, config, functools.partial(self._so_far, runs, timings, failed))
            self.runs += 1
            add_timings(timings, dict(result.timings) or {EVALUATE_PHASE: time.perf_counter() - started})
            first = not runs and not failed
            if result.status is TrialStatus.FAILED and result.kind not in DECISIVE_FAILURES and not first:
                failed += 1  # after a successful first run: its runs stay its value (see MeasuredEvaluator)
                if failed > self.policy.max_failure_share * RACE_RUNS:
                    break
            elif result.status is not TrialStatus.OK:
                return with_timings(result, timings)
            else:
                runs.append(result)
            samples = [float(r.values[name]) for r in runs]
            if len(runs) + failed >= RACE_RUNS or not self._wanted(samples):
                if self._wants_new_best_runs(samples) and len(runs) + failed < RACE_RUNS:
                    continue
                break
        samples = [float(r.values[name]) for r in runs]
        if len(samples) >= 2:
            self._samples.append(samples)
            if len(self._samples) == 1:
                self._quiet = self._is_quiet()
                if self._quiet:
                    logger.info(
                        "racing: the probe's %d runs agree within %.1f %%: one run per configuration from now on",
                        len(samples),
                        100 * QUIET_SPREAD,
                    )
        self._consider_best(samples)
        return self._summary(runs, timings, failed=failed)

    def _so_far(self, runs: Sequence[Result], timings: Mapping[str, float], failed: int) -> Result | None:
        """The runs completed so far as the configuration's result (None before the first)."""
        return self._summary(runs, timings, failed=failed) if runs else None

    def _wants_new_best_runs(self, samples: Sequence[float]) -> bool:
        """A configuration that would become the best so far gets at least :data:`NEW_BEST_RUNS` runs."""
        if self._quiet or len(samples) >= NEW_BEST_RUNS or self.incumbent is None:
            return False
        value = self._statistic(samples)
        return math.isfinite(value) and (value < self.incumbent if self.minimize else value > self.incumbent)

    def __repr__(self) -> str:
        return f"RacingEvaluator({self.inner!r}, statistic={self.policy.statistic!r})"
