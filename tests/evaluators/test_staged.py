"""Two-stage black boxes: a build writes an artefact, the run measures it; a failed build is a
compile failure that never runs; reserved names and missing artefacts are clear errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bayestune.evaluators import CallableEvaluator, CommandEvaluator
from bayestune.evaluators.staged import CallableBuild, CommandBuild, StagedEvaluator, check_reserved
from bayestune.exceptions import EvaluationError
from bayestune.measurement.build import make_evaluator, measured
from bayestune.measurement.policy import MeasuredEvaluator
from bayestune.measurement_spec import MeasurementSpec
from bayestune.scenario import scenario_from_dict
from bayestune.trial import FailureKind, TrialStatus


def _build(config: dict, artefact: str) -> None:
    if config["x"] < 0:
        raise ValueError("negative tiles do not compile")
    Path(artefact).write_text(str(config["x"] * 2))


def _run(config: dict) -> dict:
    return {"t": float(Path(config["artefact"]).read_text()), "on_cpu": float(config["device"] == "cpu")}


def test_a_python_build_and_run_pass_the_artefact_and_time_the_build() -> None:
    staged = StagedEvaluator(CallableBuild(_build), CallableEvaluator(_run, ["t"]))
    result = staged.evaluate({"x": 3})
    assert result.status is TrialStatus.OK and result.values == {"t": 6.0, "on_cpu": 1.0}
    assert result.timings["compile"] >= 0


def test_a_build_that_raises_or_writes_nothing_is_a_compile_failure_that_never_runs() -> None:
    calls = []
    run = CallableEvaluator(lambda c: calls.append(c) or 1.0, ["t"])
    failed = StagedEvaluator(CallableBuild(_build), run).evaluate({"x": -1})
    assert failed.kind == FailureKind.COMPILE and "negative tiles do not compile" in failed.error
    nothing = StagedEvaluator(CallableBuild(lambda c, a: None), run).evaluate({"x": 1})
    assert nothing.kind == FailureKind.COMPILE and "wrote no artefact" in nothing.error
    odd = StagedEvaluator(CallableBuild(lambda c, a: 42), run).evaluate({"x": 1})
    assert odd.kind == FailureKind.COMPILE and "returned 42" in odd.error
    assert calls == []


def test_a_run_that_cannot_find_its_artefact_says_so(tmp_path: Path) -> None:
    staged = StagedEvaluator(CallableBuild(_build), CallableEvaluator(_run, ["t"]))
    result = staged.measure({"x": 1}, str(tmp_path / "gone"))
    assert result.status is TrialStatus.FAILED and "cannot find its artefact" in result.error


def test_command_build_and_run_with_a_real_compiler_step(tmp_path: Path) -> None:
    build = CommandEvaluator(
        f"{sys.executable} -c \"import sys; open(sys.argv[1], 'w').write(sys.argv[2])\" {{artefact}} {{x}}",
        ["built"],
        parameter_names=["x", "artefact"],
        read_output=False,
    )
    run = CommandEvaluator("echo t: $(cat {artefact})", ["t"], parameter_names=["x", "artefact", "device"])
    staged = StagedEvaluator(CommandBuild(build), run)
    assert staged.evaluate({"x": 7}).values == {"t": 7.0}
    broken = CommandEvaluator("exit 3", ["built"], read_output=False)
    failed = StagedEvaluator(CommandBuild(broken), run).evaluate({"x": 7})
    assert failed.kind == FailureKind.COMPILE and "exit" in failed.error.lower()


def test_reserved_names_and_the_measurement_wrappers_go_around_the_run_only() -> None:
    with pytest.raises(EvaluationError, match=r"parameter\(s\) named \['device'\]"):
        check_reserved(["x", "device"])
    staged = StagedEvaluator(CallableBuild(_build), CallableEvaluator(_run, ["t"]))
    wrapped = measured(staged, MeasurementSpec.from_dict({"repeats": 3, "race": False}))
    assert isinstance(wrapped, StagedEvaluator) and isinstance(wrapped.run, MeasuredEvaluator)
    assert len(wrapped.evaluate({"x": 2}).repeats["t"]) == 3  # built once, measured three times


def test_a_scenario_with_a_build_step_reads_writes_and_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    base = {
        "name": "s",
        "parameters": [{"name": "x", "type": "integer", "bounds": [1, 4]}],
        "objectives": ["t"],
        "blackbox": {"build": {"command": "cp src {artefact}", "timeout": 9}, "command": "{artefact} {device}"},
    }
    scenario = scenario_from_dict(base)
    assert scenario.blackbox.build == "cp src {artefact}" and scenario.blackbox.build_timeout == 9
    from bayestune.scenario.native import scenario_to_dict

    again = scenario_from_dict(scenario_to_dict(scenario))
    assert again.blackbox == scenario.blackbox
    with pytest.raises(Exception, match="build"):
        scenario_from_dict({**base, "blackbox": {"build": "make", "replay": "cache.json"}})
    reserved = {**base, "parameters": [{"name": "device", "type": "integer", "bounds": [1, 4]}]}
    (tmp_path / "scenario.json").write_text(json.dumps(reserved))
    with pytest.raises(EvaluationError, match="named \\['device'\\]"):
        make_evaluator(scenario_from_dict(reserved, source=str(tmp_path / "scenario.json")))


def test_kept_artefacts_build_each_configuration_once_until_dropped() -> None:
    builds = []

    def build(config: dict, artefact: str) -> None:
        builds.append(config["x"])
        Path(artefact).write_text(str(config["x"]))

    staged = StagedEvaluator(CallableBuild(build), CallableEvaluator(_run, ["t"]), keep_artefacts=True)
    for _ in range(3):
        assert staged.evaluate({"x": 4}).values["t"] == 4.0
    assert builds == [4]
    kept = [directory for _, _, directory in staged._kept.values()]
    staged.drop_artefacts()
    assert builds == [4] and not any(Path(d).exists() for d in kept)


@pytest.mark.parametrize(
    ("blackbox", "message"),
    [
        ({"build": "make"}, "a build step needs a run step"),
        ({"build": "cc k.c -o {artefact}", "command": "./k"}, "does not name {artefact}: it would not find"),
        ({"build": "cc k.c -o k", "command": "{artefact}"}, "does not name {artefact}: a build writes"),
    ],
)
def test_a_build_without_a_run_or_without_its_artefact_is_refused_before_any_evaluation(
    tmp_path: Path, blackbox: dict, message: str
) -> None:
    data = {
        "name": "s",
        "parameters": [{"name": "x", "type": "integer", "bounds": [1, 4]}],
        "objectives": ["t"],
        "blackbox": blackbox,
    }
    with pytest.raises(Exception, match=message):
        make_evaluator(scenario_from_dict(data, source=str(tmp_path / "s.json")))


def test_a_build_that_hangs_is_killed_at_its_own_timeout() -> None:
    hang = CommandEvaluator("sleep 30 # {artefact}", ["built"], timeout=0.5, read_output=False)
    result = StagedEvaluator(CommandBuild(hang), CallableEvaluator(_run, ["t"])).evaluate({"x": 1})
    assert result.kind == FailureKind.TIMEOUT and "timed out" in result.error
