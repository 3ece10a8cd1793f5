"""Before a winner is declared: re-measure the best k configurations in interleaved rounds.

Why: the best of many noisy measurements is biased towards luck (the winner's curse), and
a machine drifts (thermal state, other tenants), so "A measured at 10:00 beat B measured at
10:05" says little. Each round measures every candidate once, in an order rotated by one
place per round, so each candidate sits in each position equally often and slow drift hits
them alike. The winner is the best by the statistic of its re-measurements only (the search's
own number is the biased one) and is reported with a confidence interval. A *baseline* (the
default configuration, or one the user names) takes part in the same rounds, so the speedup
comes from pairs measured back to back (:func:`bayestune.measurement.statistics.speedup`).
Every round is kept in the journal (``TrialJournal.record_remeasurement``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bayestune.evaluators.base import Evaluator, evaluate_safely
from bayestune.exceptions import EvaluationError
from bayestune.measurement.statistics import check_statistic, confidence_interval, speedup, summarise
from bayestune.objectives import Objective
from bayestune.trial import Remeasurement, Trial, TrialStatus

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Estimate:
    """One candidate after the rounds: its statistic over the re-measurements, with an interval."""

    trial_id: int
    value: float  # NaN when no re-measurement succeeded
    low: float
    high: float
    samples: tuple[float, ...]
    failures: int  # re-measurements that failed (e.g. a wrong answer this time)
    searched_value: float  # what the search itself measured


@dataclass(frozen=True)
class Remeasured:
    """The rounds' outcome: candidates best first (by re-measurement), the winner first of them."""

    objective: str
    statistic: str
    confidence: float
    estimates: tuple[Estimate, ...]
    rounds: int
    baseline_id: int | None = None
    #: (estimate, low, high): how many times better than the baseline the winner is, from
    #: their paired rounds (None without a baseline or a winner)
    speedup: tuple[float, float, float] | None = None
    #: a candidate with a larger share of failed rounds cannot win
    max_failure_share: float = 0.25

    @property
    def winner(self) -> Estimate | None:
        first = self.estimates[0] if self.estimates else None
        return None if first is None or _unreliable(first, self.max_failure_share) else first

    @property
    def baseline(self) -> Estimate | None:
        return next((e for e in self.estimates if e.trial_id == self.baseline_id), None)


def _unreliable(estimate: Estimate, max_failure_share: float) -> bool:
    """Whether a candidate cannot win: no value, or more than the stated share of its rounds failed."""
    return not math.isfinite(estimate.value) or estimate.failures > max_failure_share * (
        estimate.failures + len(estimate.samples)
    )


def interleaved_order(trial_ids: Sequence[int], round_number: int) -> list[int]:
    """The candidates' order in round ``round_number`` (1-based): rotated one place per round."""
    if not trial_ids:
        return []
    shift = (round_number - 1) % len(trial_ids)
    return list(trial_ids[shift:]) + list(trial_ids[:shift])


def remeasure_top(
    journal: Any,
    evaluator: Evaluator,
    objective: Objective,
    *,
    k: int = 3,
    rounds: int = 5,
    statistic: str = "median",
    confidence: float = 0.95,
    space: Any = None,
    baseline: Trial | None = None,
    max_failure_share: float = 0.25,
) -> Remeasured:
    """Re-measure the ``k`` best feasible trials of ``journal`` in ``rounds`` interleaved rounds,
    with the ``baseline`` trial (see :func:`evaluated_trial`) among them when given.

    When runs fail, up to :func:`makeup_rounds` more rounds follow, while the winner or the
    baseline has fewer than ``rounds`` successful runs. An interrupted confirmation of the same
    candidates is continued, its rounds not repeated; a run that searched on since its last
    confirmation gets a fresh one, numbered after the rounds in the journal
    (:func:`confirmation_rounds` tells one confirmation's rounds apart).
    """
    for name, value, least in (("k", k, 1), ("rounds", rounds, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise EvaluationError(f"re-measurement {name} must be an integer >= {least}, but got {value!r}")
    check_statistic(statistic)
    top = journal.best(objective.name, minimize=objective.minimize, k=k)
    if baseline is not None and baseline.trial_id not in {t.trial_id for t in top}:
        top = [*top, baseline]
    ids = [t.trial_id for t in top]
    earlier = journal.remeasurements()
    first = confirmation_rounds(earlier)[0] if earlier else 1
    latest = [r for r in earlier if r.round >= first]
    if earlier and set(ids) != {r.trial_id for r in latest} and not _started(latest, ids, first):
        first = max(r.round for r in earlier) + 1  # other candidates: a new confirmation
        latest = []
    done = {(r.trial_id, r.round) for r in latest}  # a round cut short is finished, not repeated
    configs = {t.trial_id: (t.config if space is None else space.validate_config(t.config)) for t in top}

    def outcome() -> Remeasured:
        return summarise_rounds(
            [r for r in journal.remeasurements() if r.round >= first],
            top,
            objective,
            statistic=statistic,
            confidence=confidence,
            baseline_id=None if baseline is None else baseline.trial_id,
            max_failure_share=max_failure_share,
        )

    last = first + rounds - 1 + makeup_rounds(rounds, max_failure_share)
    for round_number in range(first, last + 1):
        if round_number >= first + rounds and not _short(outcome(), rounds):
            break
        if all((i, round_number) in done for i in ids):
            continue
        for trial_id in interleaved_order(ids, round_number):
            if (trial_id, round_number) in done:
                continue
            result = evaluate_safely(evaluator, configs[trial_id])
            journal.record_remeasurement(trial_id, round_number, result)
        if round_number < first + rounds:
            logger.info("re-measurement round %d of %d done", round_number - first + 1, rounds)
        else:
            logger.info("re-measurement make-up round %d done (runs of a leading candidate failed)", round_number)
    return outcome()


def _started(latest: Sequence[Remeasurement], ids: Sequence[int], first: int) -> bool:
    """Whether ``latest`` is the start of round ``first`` of these candidates, cut short (a kill
    right after the confirmation's first rows): it is continued, not taken for other candidates."""
    measured = [r.trial_id for r in latest]
    return all(r.round == first for r in latest) and measured == interleaved_order(ids, first)[: len(measured)]


def makeup_rounds(rounds: int, max_failure_share: float) -> int:
    """Most rounds added after ``rounds`` when runs failed: as many as the rounds a candidate may
    lose and still win (a winner with one failed round of 6 had 5 runs, too few for the median's
    95 % interval)."""
    return math.ceil(max_failure_share * rounds)


def _short(outcome: Remeasured, rounds: int) -> bool:
    """Whether the winner (the best candidate when none is reliable yet) or the baseline has fewer
    successful runs than ``rounds``."""
    leaders = [outcome.winner or (outcome.estimates[0] if outcome.estimates else None), outcome.baseline]
    return any(e is not None and len(e.samples) < rounds for e in leaders)


def confirmation_rounds(remeasurements: Sequence[Remeasurement]) -> tuple[int, int]:
    """``(first, last)`` round of the latest confirmation among ``remeasurements`` ((1, 0) when
    none): consecutive rounds of one candidate set (the last one may be cut short); a later
    confirmation of other candidates starts a new run of rounds."""
    by_round: dict[int, set[int]] = {}
    for r in remeasurements:
        by_round.setdefault(r.round, set()).add(r.trial_id)
    if not by_round:
        return 1, 0
    numbers = sorted(by_round)
    last = first = numbers[-1]
    full = by_round[last]
    for n in reversed(numbers[:-1]):
        if n != first - 1:
            break
        if first == last and full <= by_round[n]:  # the last round may have been interrupted
            full = by_round[n]
        elif by_round[n] != full:
            break
        first = n
    return first, last


def confirmation_done(journal: Any, trial_ids: Sequence[int], rounds: int) -> bool:
    """Whether the journal's latest confirmation re-measured exactly ``trial_ids`` in at least
    ``rounds`` complete rounds: a finished run resumed has nothing left to confirm (and says so
    instead of announcing the rounds again)."""
    earlier = journal.remeasurements()
    first, last = confirmation_rounds(earlier)
    latest = [r for r in earlier if first <= r.round <= last]
    wanted = set(trial_ids)
    if not latest or {r.trial_id for r in latest} != wanted:
        return False
    complete = [n for n in range(first, last + 1) if {r.trial_id for r in latest if r.round == n} == wanted]
    return len(complete) >= rounds


def evaluated_trial(journal: Any, config: Mapping[str, Any], space: Any) -> Trial | None:
    """The feasible evaluated trial of ``config`` in ``journal`` (the first), or None."""
    key = space.row_keys(space.to_matrix([space.validate_config(dict(config))]))[0]
    for trial in journal.trials():
        if trial.status is TrialStatus.OK and space.row_keys(space.to_matrix([trial.config]))[0] == key:
            return trial
    return None


def summarise_rounds(
    remeasurements: Sequence[Remeasurement],
    trials: Sequence[Trial],
    objective: Objective,
    *,
    statistic: str = "median",
    confidence: float = 0.95,
    baseline_id: int | None = None,
    max_failure_share: float = 0.25,
) -> Remeasured:
    """The estimates of the re-measured ``trials`` (those without re-measurements are left out);
    with ``baseline_id``, the winner's speedup over that trial from their paired rounds. A
    candidate more than ``max_failure_share`` of whose rounds failed cannot win: it is not
    reliably right or runnable (a benchmark that fails now and then loses only those rounds)."""
    by_trial = {t.trial_id: t for t in trials}
    estimates = []
    for trial_id in dict.fromkeys(r.trial_id for r in remeasurements):
        if trial_id not in by_trial:
            continue
        mine = [r for r in remeasurements if r.trial_id == trial_id]
        samples = tuple(r.values[objective.name] for r in mine if r.error is None and objective.name in r.values)
        low, high = confidence_interval(samples, statistic, confidence) if samples else (math.nan, math.nan)
        estimates.append(
            Estimate(
                trial_id,
                summarise(samples, statistic),
                low,
                high,
                samples,
                sum(1 for r in mine if r.error is not None),
                by_trial[trial_id].values.get(objective.name, math.nan),
            )
        )
    sign = 1.0 if objective.minimize else -1.0
    estimates.sort(
        key=lambda e: (_unreliable(e, max_failure_share), sign * e.value if math.isfinite(e.value) else 0.0, e.trial_id)
    )
    rounds = max((r.round for r in remeasurements), default=0)
    outcome = Remeasured(
        objective.name,
        statistic,
        confidence,
        tuple(estimates),
        rounds,
        baseline_id,
        max_failure_share=max_failure_share,
    )
    winner, base = outcome.winner, outcome.baseline
    if winner is None or base is None:
        return outcome
    per_round = {
        (r.trial_id, r.round): r.values.get(objective.name, math.nan) for r in remeasurements if r.error is None
    }
    paired = [
        (per_round[base.trial_id, n], per_round[winner.trial_id, n])
        for n in range(1, rounds + 1)
        if (base.trial_id, n) in per_round and (winner.trial_id, n) in per_round
    ]
    b, w = [p[0] for p in paired], [p[1] for p in paired]
    ratio = speedup(b, w, confidence) if objective.minimize else speedup(w, b, confidence)
    return replace(outcome, speedup=ratio)


def latest_confirmation(
    remeasurements: Sequence[Remeasurement], trials: Sequence[Trial], objective: Objective, **options: Any
) -> Remeasured | None:
    """The latest confirmation's outcome among a journal's ``remeasurements`` (None without any;
    ``options`` are :func:`summarise_rounds`'): what every view ranks by (:func:`confirmed_first`)."""
    if not remeasurements:
        return None
    first, _ = confirmation_rounds(remeasurements)
    return summarise_rounds([r for r in remeasurements if r.round >= first], trials, objective, **options)


def confirmed_first(trials: Sequence[Trial], outcome: Remeasured | None, objective: Objective) -> list[Trial]:
    """The feasible trials of ``objective`` best first: the confirmed winner, then the others by
    their confirmed value where they have one, else by the search's value (the search's best
    sample is biased towards luck; a re-measured candidate is judged by its re-measurements)."""
    sign = 1.0 if objective.minimize else -1.0
    ok = [t for t in trials if t.status is TrialStatus.OK and math.isfinite(t.values.get(objective.name, math.nan))]
    confirmed = {} if outcome is None else {e.trial_id: e.value for e in outcome.estimates if math.isfinite(e.value)}
    winner = None if outcome is None or outcome.winner is None else outcome.winner.trial_id

    def value(t: Trial) -> float:
        return sign * confirmed.get(t.trial_id, t.values[objective.name])

    return sorted(ok, key=lambda t: (t.trial_id != winner, value(t), t.trial_id))
