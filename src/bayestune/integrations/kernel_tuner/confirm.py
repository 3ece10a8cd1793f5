"""The Kernel Tuner strategy's confirmation: its best configurations and the default re-measured
through Kernel Tuner's own runner in interleaved rounds, after the search's budget.

Why: Kernel Tuner reports the lowest value it saw, and the lowest of many noisy measurements is
the luckiest one (the winner's curse). The rounds are :func:`bayestune.measurement.remeasure.remeasure_top`'s,
so the winner is judged by its re-measurements only, with an interval, and its speedup over the
default comes from pairs measured back to back. Each re-measurement bypasses Kernel Tuner's cache
(which would answer a known configuration without running it) and its budget (the rounds come
after it and are counted apart); the cache file is left as the search wrote it.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from bayestune.evaluators.base import Evaluator
from bayestune.integrations.kernel_tuner.outcomes import classify_exception, result_of
from bayestune.integrations.kernel_tuner.space import KernelTunerSpace
from bayestune.integrations.kernel_tuner.timeouts import time_limit
from bayestune.measurement.remeasure import (
    Remeasured,
    confirmation_done,
    evaluated_trial,
    makeup_rounds,
    remeasure_top,
)
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.run import record_confirmation
from bayestune.trial import Result

logger = logging.getLogger(__name__)

#: Result-record fields the confirmation adds (``<objective>`` is Kernel Tuner's objective name).
CONFIRMED = "bayestune_confirmed"  # {"value", "low", "high", "rounds", "samples"}
WINNER = "bayestune_winner"  # True on the confirmed winner's record
SPEEDUP = "bayestune_speedup"  # [estimate, low, high] over the default, on the winner's record
RESUMED = "bayestune_resumed"  # on a winner's record added to the results (an earlier run measured it)


class RunnerEvaluator(Evaluator):
    """One configuration through Kernel Tuner's runner (or the isolated worker), never from its
    cache and outside its budget: the evaluator the confirmation re-measures with."""

    def __init__(
        self,
        run_element: Callable[[tuple], Mapping[str, Any]],
        space: KernelTunerSpace,
        objective: str,
        timeout: float | None,
    ) -> None:
        super().__init__([objective])
        self._run, self._space, self._objective, self._timeout = run_element, space, objective, timeout

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        try:
            with time_limit(self._timeout):
                record = self._run(self._space.element(config))
        except Exception as exc:  # noqa: BLE001 - a failed round is recorded, the rounds go on
            return Result.failure(f"{type(exc).__name__}: {exc}"[:2000], classify_exception(exc))
        return result_of(record, self._objective)


@contextlib.contextmanager
def uncached(tuning_options: Any) -> Iterator[None]:
    """Kernel Tuner's options with an empty cache, no cache file and an unlimited budget while the
    rounds run (``tune_kernel`` sets some entries as attributes shadowing the dict items: both)."""
    from kernel_tuner import util

    swap = {"cache": {}, "cachefile": None, "budget": util.TuningBudget(None, None)}
    items = {k: tuning_options[k] for k in swap if k in tuning_options}
    attrs = {k: tuning_options.__dict__[k] for k in swap if k in tuning_options.__dict__}
    for key, value in swap.items():
        tuning_options[key] = value
        if key in attrs:
            tuning_options.__dict__[key] = value
    try:
        yield
    finally:
        for key in swap:
            tuning_options.pop(key, None)
        tuning_options.update(items)
        tuning_options.__dict__.update(attrs)


def in_process(runner: Any, tuning_options: Any) -> Callable[[tuple], Mapping[str, Any]]:
    """Run an element with Kernel Tuner's own runner, bypassing its cache and budget."""

    def run(element: tuple) -> Mapping[str, Any]:
        with uncached(tuning_options):
            out = runner.run([element], tuning_options)
        if not out or out[0] is None:
            raise RuntimeError("Kernel Tuner's runner returned no result")
        return out[0]

    return run


def confirm(
    opt: Optimizer,
    space: KernelTunerSpace,
    run_element: Callable[[tuple], Mapping[str, Any]],
    *,
    top: int,
    rounds: int,
    timeout: float | None,
) -> Remeasured:
    """Re-measure the best ``top`` trials and the default (the run's first configuration, when it
    ran feasibly) in ``rounds`` interleaved rounds; the outcome is journaled with the run."""
    objective: Objective = opt.objectives[0]
    baseline = evaluated_trial(opt.journal, space.space.default_config(), space.space)
    ranked = opt.journal.best(objective.name, minimize=objective.minimize, k=top)
    ids = list(dict.fromkeys([t.trial_id for t in ranked] + ([baseline.trial_id] if baseline is not None else [])))
    if confirmation_done(opt.journal, ids, rounds):
        logger.info("confirmation: already done in this journal (%d rounds); nothing re-measured", rounds)
    else:
        logger.info(
            "confirming: re-measuring the best %d%s through Kernel Tuner's runner in %d interleaved rounds "
            "(%d evaluations after the budget, %d more round(s) at most if runs fail; confirm_top=0 turns it off)",
            top,
            "" if baseline is None else f" and the default configuration (trial {baseline.trial_id})",
            rounds,
            len(ids) * rounds,
            makeup_rounds(rounds, 0.25),
        )
    evaluator = RunnerEvaluator(run_element, space, objective.name, timeout)
    outcome = remeasure_top(
        opt.journal, evaluator, objective, k=top, rounds=rounds, space=space.space, baseline=baseline
    )
    record_confirmation(opt.journal, outcome)
    winner = outcome.winner
    if winner is None:
        logger.warning("confirmation: no candidate was re-measured reliably; the search's best stands unconfirmed")
    else:
        logger.info("%s", describe(outcome, opt))
    return outcome


def describe(outcome: Remeasured, opt: Optimizer) -> str:
    """One line: the confirmed winner, its interval, the search's value, the speedup."""
    winner = outcome.winner
    if winner is None:
        return "confirmation: no reliable winner"
    config = next(t.config for t in opt.trials if t.trial_id == winner.trial_id)
    text = (
        f"confirmed winner {dict(config)}: {outcome.objective} {winner.value:.4g} "
        f"[{winner.low:.4g}, {winner.high:.4g}] ({outcome.statistic} of {len(winner.samples)} re-measurements; "
        f"the search measured {winner.searched_value:.4g})"
    )
    if outcome.speedup is not None:
        s, lo, hi = outcome.speedup
        text += f", {s:.3g}x [{lo:.3g}, {hi:.3g}] over the default"
    return text


def annotate(results: list[dict[str, Any]], outcome: Remeasured, space: KernelTunerSpace, opt: Optimizer) -> None:
    """Put the confirmation into Kernel Tuner's result records: each re-measured configuration's
    record gets ``bayestune_confirmed`` (its confirmed value, interval and re-measurements), the
    winner's ``bayestune_winner`` and its speedup over the default. The objective keeps what
    Kernel Tuner measured in the search: a confirmed value in its place would let an
    unconfirmed lucky sample of another configuration become ``env["best_config"]``."""
    by_trial = {t.trial_id: t for t in opt.trials}
    winner = outcome.winner
    for estimate in outcome.estimates:
        if not math.isfinite(estimate.value) or estimate.trial_id not in by_trial:
            continue
        config = by_trial[estimate.trial_id].config
        key = space.cache_key(space.element(config))
        mine = [r for r in results if "__error__" not in r and _key(space, r) == key]
        if not mine and winner is not None and estimate.trial_id == winner.trial_id:
            # a resumed run's winner was measured by an earlier run: its record, marked so
            mine = [{**dict(zip(space.keys, space.element(config))), RESUMED: True}]
            mine[0][outcome.objective] = float(estimate.searched_value)
            results.append(mine[0])
        for record in mine:
            record[CONFIRMED] = {
                "value": float(estimate.value),
                "low": float(estimate.low),
                "high": float(estimate.high),
                "rounds": len(estimate.samples),
                "samples": [float(x) for x in estimate.samples],
                "statistic": outcome.statistic,
            }
            if winner is not None and estimate.trial_id == winner.trial_id:
                record[WINNER] = True
                if outcome.speedup is not None:
                    record[SPEEDUP] = [float(x) for x in outcome.speedup]


def _key(space: KernelTunerSpace, record: Mapping[str, Any]) -> str | None:
    config = space.config(record)
    return None if config is None else space.cache_key(space.element(config))
