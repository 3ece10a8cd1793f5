"""The repeat policy: warm-up, repeats, statistic, adaptive repeats and early abort."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from bayestune.evaluators.base import Evaluator
from bayestune.exceptions import EvaluationError
from bayestune.measurement.policy import EVALUATE_PHASE, WARMUP_PHASE, MeasuredEvaluator
from bayestune.measurement_spec import MeasurementPolicy
from bayestune.trial import FailureKind, Result, TrialStatus


class Scripted(Evaluator):
    """Answers from a script of values per configuration name, counting its calls."""

    def __init__(self, script: Mapping[str, list[Any]], timings: Mapping[str, float] | None = None) -> None:
        super().__init__(["time"])
        self.runs: dict[str, Iterator[Any]] = {k: iter(v) for k, v in script.items()}
        self.calls: dict[str, int] = {k: 0 for k in script}
        self.timings = dict(timings or {})

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        name = config["name"]
        self.calls[name] += 1
        answer = next(self.runs[name])
        if isinstance(answer, Result):
            return answer
        return Result(values={"time": answer, "checksum": 7.0}, timings=self.timings)


def test_warmup_runs_are_discarded_and_repeats_kept() -> None:
    inner = Scripted({"a": [100.0, 5.0, 3.0, 4.0]})
    result = MeasuredEvaluator(inner, MeasurementPolicy(warmup=1, repeats=3)).evaluate({"name": "a"})
    assert result.status is TrialStatus.OK
    assert result.values == {"time": 4.0, "checksum": 7.0}  # median of the three measured runs
    assert result.repeats == {"time": (5.0, 3.0, 4.0), "checksum": (7.0, 7.0, 7.0)}
    assert inner.calls["a"] == 4
    assert set(result.timings) == {WARMUP_PHASE, EVALUATE_PHASE}


@pytest.mark.parametrize(("statistic", "value"), [("median", 4.0), ("min", 3.0), ("mean", 4.0)])
def test_the_statistic_is_the_one_asked_for(statistic: str, value: float) -> None:
    inner = Scripted({"a": [5.0, 3.0, 4.0]})
    result = MeasuredEvaluator(inner, MeasurementPolicy(repeats=3, statistic=statistic)).evaluate({"name": "a"})
    assert result.values["time"] == value


def test_evaluator_phases_are_summed_over_runs() -> None:
    inner = Scripted({"a": [1.0, 1.0]}, timings={"compile": 0.5, "run": 0.25})
    result = MeasuredEvaluator(inner, MeasurementPolicy(repeats=2)).evaluate({"name": "a"})
    assert result.timings == {"compile": 1.0, "run": 0.5}


def test_adaptive_repeats_stop_once_precise() -> None:
    policy = MeasurementPolicy(repeats=3, max_repeats=20, precision=0.05, statistic="mean")
    steady = Scripted({"a": [10.0, 10.1, 9.9, 10.0] + [10.0] * 20})
    noisy = Scripted({"b": [10.0, 14.0, 6.0, 12.0, 8.0] * 4})
    assert len(MeasuredEvaluator(steady, policy).evaluate({"name": "a"}).repeats["time"]) == 3
    assert len(MeasuredEvaluator(noisy, policy).evaluate({"name": "b"}).repeats["time"]) == 20


def test_early_abort_when_clearly_worse_than_the_incumbent_records_a_bound() -> None:
    policy = MeasurementPolicy(repeats=10, statistic="mean", early_abort=True)
    inner = Scripted({"good": [1.0, 1.01, 0.99] * 4, "bad": [5.0, 5.01, 4.99] * 4, "close": [1.0, 1.2, 0.9] * 4})
    evaluator = MeasuredEvaluator(inner, policy)
    good = evaluator.evaluate({"name": "good"})
    assert len(good.repeats["time"]) == 10 and not good.censored  # no incumbent yet
    assert evaluator.incumbent == pytest.approx(1.0, abs=0.02)
    bad = evaluator.evaluate({"name": "bad"})
    assert len(bad.repeats["time"]) == 3 and bad.censored and bad.values["time"] == 5.0  # the second-best run
    assert evaluator.incumbent == pytest.approx(1.0, abs=0.02)  # a bound never becomes the incumbent
    close = evaluator.evaluate({"name": "close"})
    assert len(close.repeats["time"]) == 10 and not close.censored  # not clearly worse


def test_early_abort_respects_maximisation() -> None:
    policy = MeasurementPolicy(repeats=6, statistic="mean", early_abort=True)
    evaluator = MeasuredEvaluator(
        Scripted({"low": [1.0, 1.01, 0.99, 1.0, 1.0, 1.0]}), policy, minimize=False, incumbent=50.0
    )
    low = evaluator.evaluate({"name": "low"})
    assert len(low.repeats["time"]) == 3 and low.censored and low.values["time"] == 1.0
    assert evaluator.incumbent == 50.0


def test_a_failed_or_infeasible_run_is_the_result() -> None:
    crash = Result.failure("segfault", FailureKind.CRASH)
    inner = Scripted({"a": [crash, crash], "w": [crash], "i": [Result(values={"time": 1.0}, feasible=False)]})
    policy = MeasurementPolicy(repeats=3)
    failed = MeasuredEvaluator(inner, policy).evaluate({"name": "a"})
    assert failed.status is TrialStatus.FAILED and failed.kind == FailureKind.CRASH and EVALUATE_PHASE in failed.timings
    warm = MeasuredEvaluator(inner, MeasurementPolicy(warmup=1, repeats=2)).evaluate({"name": "w"})
    assert warm.error == "segfault" and set(warm.timings) == {WARMUP_PHASE}
    assert MeasuredEvaluator(inner, policy).evaluate({"name": "i"}).status is TrialStatus.INFEASIBLE


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"repeats": 0}, "repeats must be an integer >= 1, but got 0"),
        ({"warmup": -1}, "warmup must be an integer >= 0, but got -1"),
        ({"statistic": "p90"}, "statistic must be one of"),
        ({"repeats": 5, "max_repeats": 3, "precision": 0.1}, r"`max_repeats >= repeats` must hold"),
        ({"max_repeats": 3}, "max_repeats needs a precision"),
        ({"precision": 0}, "precision must be a positive fraction"),
        ({"confidence": 1.0}, r"confidence must lie in \(0, 1\)"),
    ],
)
def test_bad_policies_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        MeasurementPolicy(**kwargs)


def test_a_flaky_configuration_keeps_every_successful_run_and_fails_only_with_none() -> None:
    crash = Result.failure("bus error", FailureKind.CRASH)
    inner = Scripted({"ok": [1.0, crash, 1.2, 1.1, 1.3], "bad": [1.0, crash, crash, 1.1, 1.3], "none": [crash] * 5})
    policy = MeasurementPolicy(repeats=5)  # max_failure_share 0.25: one failure in five is tolerated
    ok = MeasuredEvaluator(inner, policy).evaluate({"name": "ok"})
    assert ok.status is TrialStatus.OK and ok.values["time"] == pytest.approx(1.15)  # the median of the four
    assert len(ok.repeats["time"]) == 5 and sum(math.isnan(v) for v in ok.repeats["time"]) == 1
    bad = MeasuredEvaluator(inner, policy).evaluate({"name": "bad"})  # over the share: measured no further
    assert bad.status is TrialStatus.OK and bad.values["time"] == 1.0 and inner.calls["bad"] == 3
    assert bad.repeats["time"][0] == 1.0 and sum(math.isnan(v) for v in bad.repeats["time"]) == 2
    none = MeasuredEvaluator(inner, policy).evaluate({"name": "none"})
    assert none.status is TrialStatus.FAILED and none.error.startswith(
        "all 2 measured runs failed, the last: bus error"
    )
    strict = MeasuredEvaluator(Scripted({"a": [1.0, crash]}), MeasurementPolicy(repeats=5, max_failure_share=0.0))
    result = strict.evaluate({"name": "a"})
    assert result.status is TrialStatus.OK and len(result.repeats["time"]) == 2  # its one good run kept


def test_a_wrong_answer_decides_at_once_whatever_the_share() -> None:
    wrong = Result.failure("checksum 41 != 42", FailureKind.VERIFICATION)
    inner = Scripted({"a": [1.0, wrong, 1.0, 1.0, 1.0]})
    result = MeasuredEvaluator(inner, MeasurementPolicy(repeats=5)).evaluate({"name": "a"})
    assert result.kind == FailureKind.VERIFICATION and inner.calls["a"] == 2


def test_early_abort_is_robust_to_one_outlier_either_way() -> None:
    """One slow spike cannot stop a good configuration; one lucky run cannot keep a hopeless one going."""
    policy = MeasurementPolicy(repeats=10, early_abort=True)
    inner = Scripted({"spike": [1.0, 9.0, 1.0] + [1.0] * 7, "lucky": [2.0, 0.5, 2.0] + [2.0] * 7})
    spike = MeasuredEvaluator(inner, policy, incumbent=1.0).evaluate({"name": "spike"})
    assert inner.calls["spike"] == 10 and not spike.censored
    lucky = MeasuredEvaluator(inner, policy, incumbent=1.0).evaluate({"name": "lucky"})
    assert inner.calls["lucky"] == 3 and lucky.censored and lucky.values["time"] == 2.0
