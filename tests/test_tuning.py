"""`tune`: one library call runs a scenario as `bayestune optimize` does (measurement section
recorded, incumbent seeded on resume, top-k re-measured), so a Python user gets the CLI's run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import bayestune
from bayestune import run as run_meta
from bayestune.cli import cli
from bayestune.exceptions import BayestuneError
from bayestune.measurement.policy import MeasuredEvaluator
from bayestune.scenario import Scenario, load_scenario
from bayestune.space import Integer, Space
from bayestune.storage import Journal
from bayestune.tuning import Execution, TuneResult, default_journal_path, tune

KERNEL = '''
def run(config):
    """Time falls with the unroll factor; unroll 9 is the fastest but sums wrongly."""
    unroll = config["unroll"]
    return {"time": 10.0 / unroll, "checksum": 41.0 if unroll == 9 else 42.0}
'''
MEASUREMENT = {
    "warmup": 1,
    "repeats": 3,
    "early_abort": True,
    "remeasure_top": 2,
    "remeasure_rounds": 6,
    "check": {"expected": {"checksum": 42}},
}


def write_scenario(tmp_path: Path, **extra) -> Path:
    (tmp_path / "kernel.py").write_text(textwrap.dedent(KERNEL))
    data = {
        "name": "kernel",
        "parameters": [{"name": "unroll", "type": "integer", "bounds": [1, 9]}],
        "objectives": ["time"],
        "budget": 9,
        "seed": 0,
        "strategy": "cot_random",
        "initial_design": {"size": 3},
        "blackbox": {"python": "kernel.py:run"},
        "measurement": MEASUREMENT,
        **extra,
    }
    path = tmp_path / "kernel.json"
    path.write_text(json.dumps(data))
    return path


def journal_facts(path: Path) -> tuple[list[int], dict, list[tuple[int, int]]]:
    """Configurations in order, the recorded measurement section, and the re-measured (trial, round) pairs."""
    with Journal.open(path) as journal:
        configs = [t.config["unroll"] for t in run_meta.measured(journal.trials())]
        rounds = sorted((r.trial_id, r.round) for r in journal.remeasurements())
        return configs, journal.get_meta(run_meta.META_MEASUREMENT), rounds


def test_tune_records_the_measurement_and_remeasures_the_top_k(tmp_path: Path) -> None:
    notes: list[str] = []
    result = tune(write_scenario(tmp_path), tmp_path / "run.db", announce=notes.append)

    assert isinstance(result, TuneResult) and not result.resumed and not result.interrupted
    assert result.journal_path == tmp_path / "run.db" and result.budget == 9
    assert result.best is not None and result.best.config == {"unroll": 8}
    configs, measurement, rounds = journal_facts(tmp_path / "run.db")
    assert sorted(configs) == list(range(1, 10))
    assert measurement == load_scenario(str(tmp_path / "kernel.json")).measurement.to_dict()
    assert len(rounds) == 18 and {n for _, n in rounds} == set(range(1, 7))  # the best 2 and the default
    assert result.remeasured is not None and result.remeasured.rounds == 6
    assert result.remeasured.winner.trial_id == result.best.trial_id == result.search_best.trial_id
    baseline = result.remeasured.baseline
    assert baseline is not None and result.optimizer.trials[baseline.trial_id - 1].config == {"unroll": 5}
    assert notes == [
        f"confirming: re-measuring the best 2 and the default configuration (trial {baseline.trial_id}) "
        "in 6 interleaved rounds (18 evaluations, 2 more round(s) at most if runs fail; "
        "`measurement: {remeasure_top: 0}` or --no-confirm turns it off)"
    ]
    with Journal.open(tmp_path / "run.db") as journal:
        confirmed = run_meta.stored_confirmation(journal.meta())
    assert confirmed["winner"]["trial_id"] == result.best.trial_id and confirmed["baseline"]["rounds"] == 6
    value, low, high = (confirmed["speedup"][k] for k in ("value", "low", "high"))
    assert low <= value <= high and value > 1.2  # unroll 8 against 5: 1.6x less the noise


def test_every_single_objective_run_ends_confirmed_unless_turned_off(tmp_path: Path) -> None:
    plain = write_scenario(tmp_path, measurement={"repeats": 1})  # no remeasure_top: the default confirmation
    result = tune(plain, tmp_path / "a.db")
    assert result.remeasured is not None and result.remeasured.speedup is not None
    assert result.remeasured.rounds == 6 and len(result.remeasured.estimates) == 3
    assert tune(plain, tmp_path / "b.db", confirm=False).remeasured is None
    off = write_scenario(tmp_path, measurement={"remeasure_top": 0})
    assert tune(off, tmp_path / "c.db").remeasured is None
    no_baseline = write_scenario(tmp_path, measurement={"baseline": None})
    assert tune(no_baseline, tmp_path / "d.db").remeasured.baseline is None


def test_tune_runs_what_the_cli_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    scenario = write_scenario(tmp_path)
    shown = CliRunner().invoke(cli, ["optimize", str(scenario), "--journal", "cli.db", "--no-progress"])
    assert shown.exit_code == 0, shown.output + shown.stderr
    tune(scenario, "python.db")
    assert journal_facts(tmp_path / "python.db") == journal_facts(tmp_path / "cli.db")


def test_a_resumed_tune_seeds_the_early_abort_incumbent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = write_scenario(tmp_path, measurement={"repeats": 3, "early_abort": True})
    first = tune(scenario, tmp_path / "run.db", budget=4)
    incumbents: list[float | None] = []
    evaluate = MeasuredEvaluator.evaluate

    def spy(self: MeasuredEvaluator, config: dict) -> object:
        incumbents.append(self.incumbent)
        return evaluate(self, config)

    monkeypatch.setattr(MeasuredEvaluator, "evaluate", spy)
    notes: list[str] = []
    resumed = tune(scenario, tmp_path / "run.db", resume=True, budget=9, announce=notes.append)

    assert resumed.resumed and resumed.optimizer.n_evaluated == 9
    assert incumbents[0] == first.best.values["time"]
    assert notes[0] == f"resuming {tmp_path / 'run.db'}: 4 of 9 evaluations done"


def test_a_scenario_record_runs_and_the_journal_defaults_like_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scenario = load_scenario(str(write_scenario(tmp_path, measurement={"repeats": 2})))
    result = bayestune.tune(scenario, budget=3)
    assert result.journal_path == tmp_path / "kernel.journal.db" and result.optimizer.n_evaluated == 3
    built = Scenario("bowl", Space([Integer("x", 0, 3)]))
    assert default_journal_path(built) == tmp_path / "bowl.journal.db"


def test_an_interrupted_or_failing_run_is_said_in_the_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken.py").write_text("def run(config):\n    raise RuntimeError('no GPU')\n")
    broken = write_scenario(tmp_path, blackbox={"python": "broken.py:run"}, measurement={"repeats": 1})
    result = tune(broken, tmp_path / "broken.db", execution={"stop_after_failures": 2})
    assert result.best is None and result.remeasured is None
    assert "no GPU" in result.stopped_early and result.optimizer.n_evaluated == 2

    monkeypatch.setattr("bayestune.tuning.run_with_progress", lambda *args, **kwargs: True)
    result = tune(write_scenario(tmp_path), tmp_path / "cut.db")
    assert result.interrupted and result.remeasured is None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"resume": True, "force": True}, "resume and force exclude each other"),
        ({"budget": 0}, "budget must be a positive integer"),
        ({"execution": {"workerz": 2}}, "execution: unknown key(s) ['workerz']"),
        ({"execution": {"workers": 0}}, "execution workers must be a positive integer, but got 0"),
    ],
)
def test_bad_arguments_name_the_field(tmp_path: Path, kwargs: dict, message: str) -> None:
    with pytest.raises(BayestuneError) as info:
        tune(write_scenario(tmp_path), tmp_path / "run.db", **kwargs)
    assert message in str(info.value)
    assert not (tmp_path / "run.db").exists()


def test_a_scenario_must_be_a_record_or_a_file() -> None:
    with pytest.raises(BayestuneError, match="scenario must be a Scenario or the path of a scenario file"):
        tune(42)  # type: ignore[arg-type]


def test_execution_picks_the_backend_as_the_cli_does() -> None:
    scenario = Scenario("s", Space([Integer("x", 0, 3)]), batch=4, time_limit=60.0)
    assert Execution().loop_options(scenario) == {
        "backend": "serial",
        "workers": None,
        "dask_client": None,
        "batch": 4,
        "stop_after_failures": 10,
        "time_limit": 60.0,
    }
    assert Execution(workers=3).backend == "pool" and Execution(workers=1).backend == "serial"
    assert Execution(dask="tcp://host:8786", workers=2).loop_options(scenario)["workers"] == 2


def test_import_bayestune_does_not_load_tune_until_asked() -> None:
    code = (
        "import sys, bayestune; light = 'bayestune.tuning' not in sys.modules; "
        "from bayestune import tune; print(light, tune.__module__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(bayestune.__file__).parents[1])},
    )
    assert out.stdout.split() == ["True", "bayestune.tuning"]


def test_a_run_that_searched_on_gets_a_fresh_confirmation(tmp_path: Path) -> None:
    """A resumed run with a larger budget re-confirms (new rounds after the old ones) when its
    best changed; a resume that only finishes an interrupted confirmation continues it."""
    scenario = write_scenario(tmp_path, measurement={"repeats": 1}, strategy="random")
    first = tune(scenario, tmp_path / "run.db", budget=4)
    again = tune(scenario, tmp_path / "run.db", resume=True, budget=9)
    with Journal.open(tmp_path / "run.db") as journal:
        rounds = journal.remeasurements()
    old_ids = {e.trial_id for e in first.remeasured.estimates}
    new_ids = {e.trial_id for e in again.remeasured.estimates}
    assert new_ids != old_ids  # seed 0 of the scenario: unroll 9 is found after the first confirmation
    assert max(r.round for r in rounds) == 12 and again.remeasured.rounds == 12
    assert {r.trial_id for r in rounds if r.round > 6} == new_ids
    assert all(len(e.samples) == 6 for e in again.remeasured.estimates)  # this confirmation's rounds only
    resumed = tune(scenario, tmp_path / "run.db", resume=True, budget=9)  # nothing new: the same candidates
    with Journal.open(tmp_path / "run.db") as journal:
        assert max(r.round for r in journal.remeasurements()) == 12
    assert {e.trial_id for e in resumed.remeasured.estimates} == new_ids


def test_a_hypermapper_scenario_leaves_its_sample_csv_and_resumes_from_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the peer writes it (<application_name>_output_samples.csv), in its header; a file with
    resume_optimization tells that CSV's evaluations first."""
    from dataclasses import replace as with_

    from bayestune.scenario.records import BlackBoxSpec

    monkeypatch.chdir(tmp_path)
    (tmp_path / "bb.py").write_text("def run(config):\n    return {'value': (config['x'] - 3) ** 2}\n")
    hm = {
        "application_name": "toy",
        "optimization_objectives": ["value"],
        "optimization_iterations": 4,
        "design_of_experiment": {"number_of_samples": 3},
        "input_parameters": {"x": {"parameter_type": "integer", "values": [0, 9]}},
    }

    def run(data: dict, journal: str) -> TuneResult:
        (tmp_path / "toy.json").write_text(json.dumps(data))
        scenario = with_(load_scenario(str(tmp_path / "toy.json")), blackbox=BlackBoxSpec("python", "bb.py:run"))
        return tune(scenario, tmp_path / journal, confirm=False)

    first = run(hm, "a.db")
    assert first.peer_csv == Path("toy_output_samples.csv") and first.peer_csv.exists()
    lines = first.peer_csv.read_text().splitlines()
    assert lines[0].startswith("x,value") and len(lines) == 1 + first.optimizer.n_evaluated
    (tmp_path / "old.csv").write_text(first.peer_csv.read_text())
    resumed = run({**hm, "resume_optimization": True, "resume_optimization_data": "old.csv"}, "b.db")
    told = [t.config["x"] for t in resumed.optimizer.trials[: first.optimizer.n_evaluated]]
    assert told == [t.config["x"] for t in first.optimizer.trials]  # the CSV's rows first, as the peer does


def test_a_default_run_races_and_a_resumed_one_learns_the_noise_from_its_journal(tmp_path: Path) -> None:
    """Racing is the default; the journal's runs tell a resumed run the noise (here: none), so it
    does not probe again."""
    scenario = write_scenario(tmp_path, measurement={"remeasure_top": 0})
    notes: list[str] = []
    first = tune(scenario, tmp_path / "run.db", budget=4, announce=notes.append)
    repeats = [len(t.repeats["time"]) for t in first.optimizer.trials]
    assert repeats == [3, 1, 1, 1]  # the probe, then one run each: the black box is deterministic
    assert (
        notes[0].startswith("measuring by racing")
        and notes[1]
        == "racing: 6 run(s) of 4 configuration(s); the black box is quiet: one run per configuration after the probe"
    )
    resumed = tune(scenario, tmp_path / "run.db", resume=True, budget=6)
    assert [len(t.repeats["time"]) for t in resumed.optimizer.trials] == [3, 1, 1, 1, 1, 1]


def test_without_a_failure_share_the_confirmation_announces_no_makeup_rounds(tmp_path: Path) -> None:
    notes: list[str] = []
    measurement = {**MEASUREMENT, "max_failure_share": 0.0}
    tune(write_scenario(tmp_path, measurement=measurement), tmp_path / "run.db", announce=notes.append)
    assert [n for n in notes if n.startswith("confirming:")] == [
        "confirming: re-measuring the best 2 and the default configuration (trial 1) in 6 interleaved rounds "
        "(18 evaluations; `measurement: {remeasure_top: 0}` or --no-confirm turns it off)"
    ]


def test_a_finished_run_resumed_does_not_announce_its_confirmation_again(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, measurement={"repeats": 1}, strategy="random")
    tune(scenario, tmp_path / "run.db", budget=4)
    notes: list[str] = []
    again = tune(scenario, tmp_path / "run.db", resume=True, budget=4, announce=notes.append)
    assert not [n for n in notes if n.startswith("confirming:")]
    assert any(n.startswith("confirmed already: the best 2") for n in notes) and again.remeasured.winner is not None


def test_tune_on_an_existing_journal_names_its_python_arguments(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, measurement={"repeats": 1, "remeasure_top": 0}, strategy="random")
    tune(scenario, tmp_path / "run.db", budget=3)
    with pytest.raises(BayestuneError, match=r"continue it with resume=True or start over with force=True"):
        tune(scenario, tmp_path / "run.db", budget=3)
