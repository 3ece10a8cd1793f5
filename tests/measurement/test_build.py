"""A scenario's evaluator wrapped as its measurement section asks."""

from __future__ import annotations

from pathlib import Path

from bayestune.evaluators.external import ExternalEvaluator
from bayestune.evaluators.python_callable import CallableEvaluator
from bayestune.measurement.build import for_remeasurement, measured, seed_incumbent, unwrapped
from bayestune.measurement.correctness import CheckedEvaluator
from bayestune.measurement.policy import MeasuredEvaluator
from bayestune.measurement.racing import RacingEvaluator
from bayestune.measurement_spec import MeasurementSpec
from bayestune.trial import FailureKind


def test_no_section_races_and_race_false_wraps_nothing() -> None:
    inner = CallableEvaluator(lambda c: 1.0, ["time"])
    for spec in (None, MeasurementSpec(), MeasurementSpec.from_dict({"remeasure_top": 3})):
        raced = measured(inner, spec, minimize=False)
        assert isinstance(raced, RacingEvaluator) and raced.inner is inner and not raced.minimize
    assert measured(inner, MeasurementSpec.from_dict({"race": False})) is inner
    assert measured(inner, MeasurementSpec.from_dict({"race": False, "remeasure_top": 3})) is inner


def test_replays_batch_tools_and_several_objectives_are_raced_only_when_asked(tmp_path: Path) -> None:
    replay = CallableEvaluator(lambda c: 1.0, ["time"])
    replay.deterministic = True  # what a ReplayEvaluator says of itself
    external = ExternalEvaluator("true", ["time"], parameter_names=["x"], workdir=tmp_path)
    pair = CallableEvaluator(lambda c: (1.0, 2.0), ["time", "energy"])
    for box in (replay, external, pair):
        assert measured(box, None) is box
        assert isinstance(measured(box, MeasurementSpec(race=True)), RacingEvaluator)


def test_check_inside_policy_and_function_loaded_from_the_scenario_dir(tmp_path: Path) -> None:
    (tmp_path / "checks.py").write_text("def even(config, values):\n    return values['time'] % 2 == 0 or 'odd time'\n")
    inner = CallableEvaluator(lambda c: float(c["x"]), ["time"])
    spec = MeasurementSpec.from_dict({"warmup": 1, "repeats": 2, "check": {"function": "checks.py:even"}})
    wrapped = measured(inner, spec, base_dir=tmp_path)
    assert isinstance(wrapped, MeasuredEvaluator) and isinstance(wrapped.inner, CheckedEvaluator)
    assert wrapped.evaluate({"x": 2}).repeats == {"time": (2.0, 2.0)}
    odd = wrapped.evaluate({"x": 3})
    assert odd.kind == FailureKind.VERIFICATION and odd.error == "wrong answer: odd time"
    single = for_remeasurement(wrapped)
    assert single.policy.warmup == 1 and single.policy.most_runs == 1 and single.inner is wrapped.inner


def test_unwrapped_finds_the_black_box_and_the_incumbent_is_seeded_on_the_policy_only() -> None:
    inner = CallableEvaluator(lambda c: 1.0, ["time"])
    spec = MeasurementSpec.from_dict({"repeats": 3, "early_abort": True, "check": {"expected": {"time": 1.0}}})
    wrapped = measured(inner, spec)
    assert unwrapped(wrapped) is inner and unwrapped(inner) is inner
    seed_incumbent(wrapped, None)
    assert wrapped.incumbent is None
    seed_incumbent(wrapped, 0.5)
    assert wrapped.incumbent == 0.5
    seed_incumbent(inner, 0.5)  # nothing to seed: no policy, no attribute written
    assert not hasattr(inner, "incumbent")


def test_a_resumed_race_learns_from_the_journal_and_remeasures_single_runs() -> None:
    inner = CallableEvaluator(lambda c: 3.0, ["time"])
    raced = measured(inner, None)
    seed_incumbent(raced, 1.0, [(1.0, 1.1, 0.9), (2.0,)])
    assert raced.incumbent == 1.0 and raced.noise()[1] == 2
    assert raced.evaluate({"x": 0}).repeats == {"time": (3.0,)}  # clearly worse: one run
    single = for_remeasurement(raced)
    assert type(single) is MeasuredEvaluator and single.policy.most_runs == 1 and single.inner is inner
