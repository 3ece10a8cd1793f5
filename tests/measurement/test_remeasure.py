"""Top-k re-measurement in interleaved rounds: order, journal, winner and interval."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from bayestune.evaluators.base import Evaluator
from bayestune.exceptions import EvaluationError
from bayestune.measurement.remeasure import interleaved_order, remeasure_top, summarise_rounds
from bayestune.objectives import Objective
from bayestune.storage import Journal, MemoryJournal
from bayestune.trial import FailureKind, Result


class Drifting(Evaluator):
    """True times per configuration plus a drift that grows with every call; logs the call order."""

    def __init__(self, true: Mapping[int, float], drift: float = 0.01, wrong: int | None = None) -> None:
        super().__init__(["time"])
        self.true, self.drift, self.wrong = dict(true), drift, wrong
        self.order: list[int] = []

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        self.order.append(config["x"])
        if config["x"] == self.wrong:
            return Result.failure("wrong answer: checksum", FailureKind.VERIFICATION)
        return Result(values={"time": self.true[config["x"]] + self.drift * len(self.order)})


def lucky_journal(journal: Any) -> Any:
    """The search measured x=3 luckily fast; x=1 is truly the fastest."""
    for x, measured in ((1, 1.05), (2, 1.2), (3, 0.9), (4, 3.0)):
        journal.record({"x": x}, Result(values={"time": measured}))
    return journal


def test_rounds_rotate_the_order() -> None:
    assert [interleaved_order([7, 8, 9], r) for r in (1, 2, 3, 4)] == [[7, 8, 9], [8, 9, 7], [9, 7, 8], [7, 8, 9]]
    assert interleaved_order([], 1) == []


def test_the_winner_comes_from_the_remeasurements_with_an_interval() -> None:
    journal = lucky_journal(MemoryJournal())
    black_box = Drifting({1: 1.0, 2: 1.1, 3: 1.3})
    outcome = remeasure_top(journal, black_box, Objective("time"), k=3, rounds=6)
    assert black_box.order[:6] == [3, 1, 2, 1, 2, 3]  # best first as searched, then rotated
    assert len(journal.remeasurements()) == 18 and outcome.rounds == 6
    winner = outcome.winner
    assert winner.trial_id == 1 and winner.searched_value == 1.05 and len(winner.samples) == 6
    assert winner.low <= winner.value <= winner.high and winner.high < outcome.estimates[1].value
    assert [e.trial_id for e in outcome.estimates] == [1, 2, 3]


def test_a_candidate_failing_a_remeasurement_cannot_win() -> None:
    journal = lucky_journal(MemoryJournal())
    outcome = remeasure_top(journal, Drifting({1: 1.0, 2: 1.1, 3: 1.3}, wrong=1), Objective("time"), k=3, rounds=2)
    assert outcome.winner.trial_id == 2
    assert outcome.estimates[-1].trial_id == 1 and outcome.estimates[-1].failures == 2


def test_maximisation_and_interrupted_rounds_continue(tmp_path: Path) -> None:
    with lucky_journal(Journal(tmp_path / "run.db")) as journal:
        first = Drifting({4: 3.0, 2: 1.2, 1: 1.0}, drift=0.0)
        remeasure_top(journal, first, Objective("time", "maximize"), k=2, rounds=2)
        second = Drifting({4: 3.0, 2: 1.2, 1: 1.0}, drift=0.0)
        outcome = remeasure_top(journal, second, Objective("time", "maximize"), k=2, rounds=3)
    assert len(first.order) == 4 and len(second.order) == 2  # round 3 only
    assert outcome.winner.trial_id == 4 and outcome.winner.samples == (3.0, 3.0, 3.0)


def test_summary_without_rounds_has_no_winner() -> None:
    assert summarise_rounds([], [], Objective("time")).winner is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be an integer >= 1"),
        ({"rounds": 0}, "rounds must be an integer >= 1"),
        ({"statistic": "max"}, "statistic must be one of"),
    ],
)
def test_bad_settings_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        remeasure_top(MemoryJournal(), Drifting({}), Objective("time"), **kwargs)


def test_a_candidate_that_failed_a_round_now_and_then_can_still_win() -> None:
    """One failed round in six (a flaky benchmark) is within the default share; two are not."""
    from bayestune.trial import Remeasurement, Trial, TrialStatus

    def rounds(trial_id, values):
        return [
            Remeasurement(trial_id, n, {} if v is None else {"time": v}, "crash" if v is None else None, 0.0)
            for n, v in enumerate(values, start=1)
        ]

    trials = [Trial(i, {"x": i}, TrialStatus.OK, {"time": 1.0}) for i in (1, 2)]
    flaky = rounds(1, [1.0, None, 1.0, 1.0, 1.0, 1.0]) + rounds(2, [2.0] * 6)
    assert summarise_rounds(flaky, trials, Objective("time")).winner.trial_id == 1
    broken = rounds(1, [1.0, None, None, 1.0, 1.0, 1.0]) + rounds(2, [2.0] * 6)
    assert summarise_rounds(broken, trials, Objective("time")).winner.trial_id == 2


def test_confirmation_rounds_tell_the_latest_confirmation_apart() -> None:
    from bayestune.measurement.remeasure import confirmation_rounds
    from bayestune.trial import Remeasurement

    def r(trial_id, n):
        return Remeasurement(trial_id, n, {"time": 1.0}, None, 0.0)

    first = [r(t, n) for n in (1, 2, 3) for t in (1, 2, 5)]
    assert confirmation_rounds([]) == (1, 0)
    assert confirmation_rounds(first) == (1, 3)
    assert confirmation_rounds(first + [r(1, 4)]) == (1, 4)  # a fourth round cut short
    later = first + [r(t, n) for n in (4, 5) for t in (7, 2, 5)]  # the search found trial 7: a new confirmation
    assert confirmation_rounds(later) == (4, 5)


def test_a_round_cut_short_is_finished_on_resume() -> None:
    """An interrupted confirmation measured trial 1 in round 2 but not trial 2: resuming measures
    only what is missing."""
    from bayestune.measurement.remeasure import remeasure_top
    from bayestune.storage import MemoryJournal
    from bayestune.trial import Result

    journal = MemoryJournal()
    for config, value in (({"x": 1}, 1.0), ({"x": 2}, 2.0)):
        journal.record(config, Result({"time": value}))
    for trial_id, n in ((1, 1), (2, 1), (1, 2)):
        journal.record_remeasurement(trial_id, n, Result({"time": float(trial_id)}))
    calls = []

    class Counting(Evaluator):
        def evaluate(self, config):
            calls.append(config["x"])
            return Result({"time": float(config["x"])})

    outcome = remeasure_top(journal, Counting(["time"]), Objective("time"), k=2, rounds=3)
    assert calls.count(1) == 1 and calls.count(2) == 2  # round 2's trial 2, and round 3 for both
    assert all(len(e.samples) == 3 for e in outcome.estimates)


def test_a_confirmation_cut_after_its_first_row_is_continued() -> None:
    """A kill -9 right after the first confirmation row: the resumed confirmation goes on in round 1
    (6 rounds, 6 runs per candidate), it does not start over at round 2 (7 rounds)."""
    journal = lucky_journal(MemoryJournal())
    journal.record_remeasurement(3, 1, Result({"time": 1.3}))  # round 1 measures the searched best first
    black_box = Drifting({1: 1.0, 2: 1.1, 3: 1.3}, drift=0.0)
    outcome = remeasure_top(journal, black_box, Objective("time"), k=3, rounds=6)
    assert black_box.order[:2] == [1, 2] and len(black_box.order) == 17
    assert {r.round for r in journal.remeasurements()} == set(range(1, 7)) and outcome.rounds == 6
    assert all(len(e.samples) == 6 for e in outcome.estimates)


def test_another_candidate_in_round_one_is_a_new_confirmation() -> None:
    journal = lucky_journal(MemoryJournal())
    journal.record_remeasurement(4, 1, Result({"time": 3.0}))  # not a candidate now
    outcome = remeasure_top(journal, Drifting({1: 1.0, 2: 1.1, 3: 1.3}), Objective("time"), k=3, rounds=2)
    assert {r.round for r in journal.remeasurements() if r.trial_id != 4} == {2, 3} and outcome.rounds == 3


class Crashing(Drifting):
    """``Drifting`` without drift whose calls number ``crashes`` (1-based), and every call of
    configuration ``broken``, crash."""

    def __init__(self, true: Mapping[int, float], crashes: set[int], broken: int | None = None) -> None:
        super().__init__(true, drift=0.0)
        self.crashes, self.broken = crashes, broken

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        result = super().evaluate(config)
        if len(self.order) in self.crashes or config["x"] == self.broken:
            return Result.failure("crashed", FailureKind.CRASH)
        return result


def test_a_failed_run_of_the_winner_gets_a_makeup_round() -> None:
    """One crash in six rounds left the winner 5 runs, too few for the median's 95 % interval: a
    make-up round gives it 6; without crashes, or when only a loser crashed, no round is added."""
    from bayestune.measurement.remeasure import makeup_rounds

    assert makeup_rounds(6, 0.25) == 2 and makeup_rounds(2, 0.25) == 1 and makeup_rounds(6, 0.0) == 0
    # rounds' orders: 3 1 2 | 1 2 3 | 2 3 1 | ...: trial 1 is calls 2, 4, 9, 11, 13, 18, then 20, 22
    for crashes, calls in ((set(), 18), ({3}, 18), ({2}, 21), ({2, 5}, 21)):
        journal = lucky_journal(MemoryJournal())
        black_box = Crashing({1: 1.0, 2: 1.1, 3: 1.3}, crashes)
        winner = remeasure_top(journal, black_box, Objective("time"), k=3, rounds=6).winner
        assert len(black_box.order) == calls and winner is not None and winner.trial_id == 1, crashes
        assert len(winner.samples) == 6 and -math.inf < winner.low <= winner.value <= winner.high < math.inf


def test_the_baseline_short_of_runs_gets_makeup_rounds_up_to_the_limit() -> None:
    from bayestune.trial import Trial, TrialStatus

    baseline = Trial(4, {"x": 4}, TrialStatus.OK, {"time": 3.0})
    true = {1: 1.0, 2: 1.1, 3: 1.3, 4: 3.0}
    black_box = Crashing(true, {4})  # round 1: 3, 1, 2, then the baseline
    outcome = remeasure_top(
        lucky_journal(MemoryJournal()), black_box, Objective("time"), k=3, rounds=6, baseline=baseline
    )
    assert len(black_box.order) == 28 and len(outcome.baseline.samples) == 6 and outcome.speedup is not None
    black_box = Crashing(true, set(), broken=4)  # the baseline never runs: two make-up rounds, then it stops
    outcome = remeasure_top(
        lucky_journal(MemoryJournal()), black_box, Objective("time"), k=3, rounds=6, baseline=baseline
    )
    assert len(black_box.order) == 32 and outcome.baseline.failures == 8 and outcome.winner.trial_id == 1
