"""Early stop of a configuration's repeats: stop timing a configuration whose first runs are
clearly worse than the best so far, and record what is known — a bound, not a value.

Why: GPU tuners time every configuration 7–32 times (Kernel Tuner's ``iterations``), and most
configurations are hopeless after their first runs; on the recorded dedispersion spaces most of
the device time goes to re-timing them. Racing (the default) already stops losers after one
run, but a user who asked for ``repeats`` wants those repeats for every contender.

The rule, stated: after at least :data:`MIN_RUNS` runs, stop when the *second-best* run is
worse than the incumbent (the best configuration's statistic so far) by more than
:data:`MARGIN` (relative). The second-best rather than the best or the mean makes it robust to
one outlier either way: one slow spike (a load burst) cannot stop a good configuration — at
least two runs must be slow — and one lucky fast run cannot keep a hopeless one going. The
configuration is then recorded with the second-best run as its value, marked *censored*: its
true value is at least that bad. The model treats it as such (:mod:`bayestune.models.censored`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

#: Least measured runs before a configuration may be stopped early.
MIN_RUNS = 3
#: How much worse than the incumbent (relative) the second-best run must be.
MARGIN = 0.10
#: Timing phases that are not measuring time on the device.
NOT_DEVICE_PHASES = frozenset({"compile", "optimizer", "warmup"})


def early_stop_bound(
    samples: Sequence[float],
    incumbent: float | None,
    *,
    minimize: bool = True,
    min_runs: int = MIN_RUNS,
    margin: float = MARGIN,
) -> float | None:
    """The censoring bound (the second-best finite run) when the runs so far show the
    configuration clearly worse than ``incumbent`` by the rule above, else None."""
    if incumbent is None or not math.isfinite(incumbent):
        return None
    finite = sorted(float(v) for v in samples if math.isfinite(v))
    if len(finite) < max(min_runs, 2):
        return None
    if minimize:
        second = finite[1]
        threshold = incumbent + margin * abs(incumbent)
        return second if second > threshold else None
    second = finite[-2]
    threshold = incumbent - margin * abs(incumbent)
    return second if second < threshold else None


def savings_note(trials: Iterable[Any], most_runs: int) -> str | None:
    """What early stop saved, for the end of a run: the censored configurations, and the device
    time their remaining runs would have taken (each run as long as its measured ones), or None
    when nothing was stopped early."""
    spent = saved = 0.0
    stopped = 0
    for trial in trials:
        runs = max((len(v) for v in trial.repeats.values()), default=0)
        seconds = sum(s for phase, s in trial.timings.items() if phase not in NOT_DEVICE_PHASES)
        spent += seconds
        if getattr(trial, "censored", False) and 0 < runs < most_runs:
            stopped += 1
            saved += seconds / runs * (most_runs - runs)
    if not stopped:
        return None
    share = 100 * saved / (spent + saved) if spent + saved > 0 else 0.0
    return (
        f"early stop: {stopped} configuration(s) stopped after their first runs (clearly worse than the best); "
        f"their remaining runs would have taken about {saved:.1f} s of measuring, {share:.0f} % of the run's measuring time"
    )
