"""The correctness check: a wrong answer is a VERIFICATION failure and never the best."""

from __future__ import annotations

from typing import Any

import pytest

from bayestune.evaluators.python_callable import CallableEvaluator
from bayestune.exceptions import EvaluationError
from bayestune.measurement.correctness import CheckedEvaluator
from bayestune.measurement_spec import CorrectnessCheck
from bayestune.optimizer import Optimizer
from bayestune.space import Integer, Space
from bayestune.trial import FailureKind, TrialStatus


def kernel(config: dict[str, Any]) -> dict[str, float]:
    """Faster with a bigger unroll, but unroll 8 skips the tail and gets the sum wrong."""
    unroll = config["unroll"]
    return {"time": 10.0 / unroll, "checksum": 41.0 if unroll == 8 else 42.0}


def evaluator(check: CorrectnessCheck) -> CheckedEvaluator:
    return CheckedEvaluator(CallableEvaluator(kernel, ["time"]), check)


def test_expected_outputs_within_tolerance() -> None:
    checked = evaluator(CorrectnessCheck(expected={"checksum": 42.0}))
    assert checked.evaluate({"unroll": 2}).status is TrialStatus.OK
    wrong = checked.evaluate({"unroll": 8})
    assert wrong.status is TrialStatus.FAILED and wrong.kind == FailureKind.VERIFICATION
    assert wrong.error == "wrong answer: output 'checksum' is 41.0, expected 42.0 (rtol 1e-06, atol 0.0)"
    assert (
        evaluator(CorrectnessCheck(expected={"checksum": 42.0}, atol=1.0)).evaluate({"unroll": 8}).status
        is TrialStatus.OK
    )


def test_missing_output_is_a_wrong_answer() -> None:
    wrong = evaluator(CorrectnessCheck(expected={"crc": 1.0})).evaluate({"unroll": 1})
    assert wrong.kind == FailureKind.VERIFICATION and "did not report output 'crc'" in wrong.error


def test_check_function_verdicts() -> None:
    def reason(config: dict, values: dict) -> Any:
        return None if values["checksum"] == 42 else f"sum {values['checksum']} for unroll {config['unroll']}"

    assert (
        evaluator(CorrectnessCheck(function=reason)).evaluate({"unroll": 8}).error
        == "wrong answer: sum 41.0 for unroll 8"
    )
    assert (
        evaluator(CorrectnessCheck(function=lambda c, v: False)).evaluate({"unroll": 1}).error
        == "wrong answer: the check function rejected the output"
    )
    broken = evaluator(CorrectnessCheck(function=lambda c, v: 1 / 0)).evaluate({"unroll": 1})
    assert broken.kind == FailureKind.VERIFICATION and "ZeroDivisionError" in broken.error


def test_a_wrong_answer_is_never_the_best() -> None:
    optimizer = Optimizer(Space([Integer("unroll", 1, 8)]), objectives=["time"], seed=0, strategy="random")
    optimizer.optimize(evaluator(CorrectnessCheck(expected={"checksum": 42.0})), budget=8)
    assert optimizer.best.config["unroll"] == 7
    (wrong,) = [t for t in optimizer.trials if t.config["unroll"] == 8]
    assert wrong.failure_kind == FailureKind.VERIFICATION


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "needs .expected. outputs, a .function., or both"),
        ({"expected": {"crc": "x"}}, "expected output 'crc' must be a finite number"),
        ({"expected": {"crc": 1.0}, "rtol": -1}, "check rtol must be a number >= 0"),
        ({"function": 3}, "check function must be a function"),
    ],
)
def test_bad_checks_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        CorrectnessCheck(**kwargs)
