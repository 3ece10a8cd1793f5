"""What a run looks like while it goes: the one-line-per-evaluation log with the time breakdown."""

from __future__ import annotations

from bayestune.console import progress_line
from bayestune.trial import FailureKind, Trial, TrialStatus


def test_a_log_line_shows_the_count_the_value_and_where_the_time_went() -> None:
    trial = Trial(
        3, {"x": 1}, TrialStatus.OK, values={"time": 1.25}, timings={"compile": 0.5, "run": 2.0, "optimizer": 0.125}
    )
    assert (
        progress_line(trial, "time", 3, 40, "1.1")
        == "[3/40] trial 3 ok time=1.25 | best time=1.1 | compile 0.5 s, run 2 s, optimizer 0.12 s"
    )


def test_a_time_only_run_counts_without_a_total_and_failures_say_why() -> None:
    trial = Trial(
        7, {}, TrialStatus.FAILED, error="wrong answer: checksum 41\nmore", failure_kind=FailureKind.VERIFICATION
    )
    assert (
        progress_line(trial, "time", 7, None, "-")
        == "[7] trial 7 failed (verification): wrong answer: checksum 41 | best time=-"
    )


def test_the_pipeline_line_shows_builds_waiting_device_use_and_time_left(monkeypatch) -> None:
    import time as clock

    from bayestune.console import pipeline_text

    status = {"building": 6, "built": 1, "device_use": 0.92}
    monkeypatch.setattr(clock, "monotonic", lambda: 100.0)
    assert pipeline_text(status, 10, 40.0, 40, 10) == "building 6, 1 built waiting, device use 92%, ~3 min left"
    assert pipeline_text(status, 0, 40.0, 40, 0) == "building 6, 1 built waiting, device use 92%"
    assert pipeline_text(status, 10, 90.0, None, 10) == "building 6, 1 built waiting, device use 92%"
