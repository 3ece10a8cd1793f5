"""Where the time went: phases summed over trials, the unexplained rest as "other"."""

from __future__ import annotations

from bayestune.measurement.timing import OPTIMIZER_PHASE, OTHER_PHASE, format_breakdown, time_breakdown
from bayestune.trial import Trial, TrialStatus


def trial(
    timings: dict, started: float | None = 0.0, finished: float | None = 5.0, status: TrialStatus = TrialStatus.OK
) -> Trial:
    return Trial(1, {}, status, started_at=started, finished_at=finished, timings=timings)


def test_phases_are_summed_and_the_rest_is_other() -> None:
    trials = [
        trial({"compile": 2.0, "run": 1.0, OPTIMIZER_PHASE: 0.5}),
        trial({"compile": 1.0, "run": 2.0}, finished=3.0),
        trial({}, finished=1.0, status=TrialStatus.FAILED),
        trial({"compile": 9.0}, started=None, finished=None, status=TrialStatus.PENDING),
    ]
    breakdown = time_breakdown(trials)
    assert breakdown == {"compile": 3.0, "run": 3.0, OPTIMIZER_PHASE: 0.5, OTHER_PHASE: 3.0}
    assert list(breakdown)[-1] == OTHER_PHASE


def test_format_gives_seconds_and_shares() -> None:
    assert format_breakdown({"compile": 3.0, "run": 1.0}) == "compile 3 s (75%), run 1 s (25%)"
    assert format_breakdown({"run": 12.345}, shares=False) == "run 12.3 s"
    assert format_breakdown({}) == ""
