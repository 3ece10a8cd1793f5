"""Where a run's time went: the phases evaluators report (compile, run, warm-up, ...), the
optimizer's suggestion time the loop measures, and what no one accounted for.

An evaluator reports its phases in ``Result.timings`` (seconds per phase name; the usual
names are ``"compile"``, ``"run"`` and ``"verify"``); the evaluation loop adds
``"optimizer"``. A trial's wall time (journal start to finish) minus its evaluator phases is
``"other"``: process start-up, queueing behind busy workers, phases nobody reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bayestune.formatting import display
from bayestune.trial import Trial

#: Phase the evaluation loop fills: the suggestion's share of time in ``Optimizer.ask``.
OPTIMIZER_PHASE = "optimizer"
#: A trial's wall time that no reported phase explains.
OTHER_PHASE = "other"


def time_breakdown(trials: Iterable[Trial]) -> dict[str, float]:
    """Seconds per phase over the finished ``trials``, largest first, ``"other"`` last."""
    totals: dict[str, float] = {}
    other = 0.0
    for trial in trials:
        if not trial.status.is_finished:
            continue
        evaluator_time = 0.0
        for phase, seconds in trial.timings.items():
            totals[phase] = totals.get(phase, 0.0) + seconds
            if phase != OPTIMIZER_PHASE:
                evaluator_time += seconds
        if trial.duration is not None:
            other += max(trial.duration - evaluator_time, 0.0)
    ordered = dict(sorted(totals.items(), key=lambda item: -item[1]))
    if other > 0:
        ordered[OTHER_PHASE] = other
    return ordered


def format_breakdown(breakdown: Mapping[str, float], *, shares: bool = True) -> str:
    """``"compile 12.1 s (52%), run 8 s (34%), optimizer 3.2 s (14%)"`` (empty when nothing is known)."""
    total = sum(breakdown.values())
    parts = []
    for phase, seconds in breakdown.items():
        text = f"{phase} {display(round(seconds, 2 if seconds < 10 else 1))} s"
        if shares and total > 0:
            text += f" ({100 * seconds / total:.0f}%)"
        parts.append(text)
    return ", ".join(parts)
