"""An interrupt while a configuration is measured again keeps the runs it completed (issue 41
item 9): the loop journals them as the configuration's result before the run stops, for racing and
for fixed repeats; an interrupt during a first run keeps the trial pending (re-run on resume)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from bayestune.evaluators.base import Evaluator
from bayestune.execution.loop import run
from bayestune.measurement.policy import MeasuredEvaluator
from bayestune.measurement.racing import RacingEvaluator
from bayestune.measurement_spec import MeasurementPolicy
from bayestune.optimizer import Optimizer
from bayestune.space import Integer, Space
from bayestune.trial import TrialStatus


class InterruptedAt(Evaluator):
    """Answers ``1 + x / 100`` and raises KeyboardInterrupt (Ctrl-C) on call number ``at``."""

    def __init__(self, at: int) -> None:
        super().__init__(["time"])
        self.at, self.calls = at, 0

    def evaluate(self, config: Mapping[str, Any]):
        from bayestune.trial import Result

        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return Result(values={"time": 1.0 + config["x"] / 100 + self.calls / 1000})


def _run(evaluator: Evaluator) -> Optimizer:
    optimizer = Optimizer(Space([Integer("x", 0, 50)]), objectives=["time"], strategy="random", seed=3)
    with pytest.raises(KeyboardInterrupt):
        run(optimizer, evaluator, 5, stop_after_failures=None)
    return optimizer


def test_racing_keeps_the_runs_of_the_probe_cut_short() -> None:
    optimizer = _run(RacingEvaluator(InterruptedAt(3)))  # the probe's third run is interrupted
    (trial,) = optimizer.journal.trials()
    assert trial.status is TrialStatus.OK and len(trial.repeats["time"]) == 2


def test_fixed_repeats_keep_their_completed_runs() -> None:
    policy = MeasurementPolicy(repeats=4)
    optimizer = _run(MeasuredEvaluator(InterruptedAt(7), policy))  # the second configuration's third run
    first, second = optimizer.journal.trials()
    assert len(first.repeats["time"]) == 4 and len(second.repeats["time"]) == 2
    assert second.status is TrialStatus.OK


def test_an_interrupt_during_a_first_run_leaves_the_trial_pending() -> None:
    optimizer = _run(RacingEvaluator(InterruptedAt(1)))
    assert [t.status for t in optimizer.journal.trials()] == [TrialStatus.PENDING]
