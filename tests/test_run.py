"""Run metadata and resume: one owner for the CLI and Python, so either can continue the other's run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bayestune import run as run_meta
from bayestune.cli import cli
from bayestune.exceptions import JournalError
from bayestune.measurement.build import make_evaluator
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.scenario import load_scenario
from bayestune.space import Integer, Space
from bayestune.storage import Journal, MemoryJournal
from bayestune.trial import Result

BUDGET = 12


def write_scenario(tmp_path: Path) -> Path:
    (tmp_path / "bb.py").write_text("def run(c):\n    return (c['x'] - 11) ** 2 + 3 * (c['y'] - 4) ** 2\n")
    data = {
        "name": "bowl",
        "parameters": [
            {"name": "x", "type": "integer", "bounds": [0, 20]},
            {"name": "y", "type": "integer", "bounds": [0, 9]},
        ],
        "objectives": ["cost"],
        "budget": BUDGET,
        "seed": 5,
        "strategy": "annealing",
        "strategy_options": {"cooling": 0.8},
        "initial_design": {"size": 3},
        "blackbox": {"python": "bb.py:run"},
    }
    path = tmp_path / "bowl.json"
    path.write_text(json.dumps(data))
    return path


def cli_optimize(scenario: Path, journal: Path, *args: str) -> None:
    result = CliRunner().invoke(cli, ["optimize", str(scenario), "--journal", str(journal), "--no-progress", *args])
    assert result.exit_code == 0, result.output + result.stderr


def python_resume(scenario_path: Path, journal_path: Path) -> Optimizer:
    scenario = load_scenario(str(scenario_path))
    with Journal.open(journal_path) as journal, make_evaluator(scenario) as evaluator:
        optimizer = Optimizer(scenario.space, objectives=scenario.objectives, journal=journal, resume=True)
        optimizer.optimize(evaluator, BUDGET)
    return optimizer


def configs(journal_path: Path) -> list[tuple[int, int]]:
    with Journal.open(journal_path) as journal:
        return [(t.config["x"], t.config["y"]) for t in run_meta.measured(journal.trials())]


def test_a_run_resumes_alike_from_the_cli_and_from_python(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scenario_path = write_scenario(tmp_path)
    scenario = load_scenario(str(scenario_path))

    cli_optimize(scenario_path, tmp_path / "whole.db")
    cli_optimize(scenario_path, tmp_path / "cli_cli.db", "--budget", "6")
    cli_optimize(scenario_path, tmp_path / "cli_cli.db", "--resume", "--budget", str(BUDGET))

    cli_optimize(scenario_path, tmp_path / "cli_py.db", "--budget", "6")
    resumed = python_resume(scenario_path, tmp_path / "cli_py.db")
    assert (resumed.seed, resumed.strategy.name, resumed.strategy.settings.cooling) == (5, "annealing", 0.8)

    with Journal(tmp_path / "py_cli.db") as journal, make_evaluator(scenario) as evaluator:
        Optimizer.from_scenario(scenario, journal=journal).optimize(evaluator, 6)
    cli_optimize(scenario_path, tmp_path / "py_cli.db", "--resume", "--budget", str(BUDGET))

    whole = configs(tmp_path / "whole.db")
    halves = [configs(tmp_path / name) for name in ("cli_cli.db", "cli_py.db", "py_cli.db")]
    assert len(whole) == BUDGET
    assert halves[0] == halves[1] == halves[2]
    assert halves[0][:6] == whole[:6] and len(set(halves[0])) == BUDGET


def test_python_resume_defaults_come_from_the_journal_and_explicit_values_win():
    space = Space([Integer("x", 0, 50)])
    journal = MemoryJournal()
    first = Optimizer(
        space, objectives=["t"], strategy="annealing", strategy_options={"cooling": 0.5}, seed=9, journal=journal
    )
    first.optimize(lambda c: float(c["x"]), 4)
    assert journal.get_meta(run_meta.META_BUDGET) == 4
    again = Optimizer(space, objectives=["t"], journal=journal, resume=True)
    assert (again.seed, again.strategy.name, again.strategy.settings.cooling) == (9, "annealing", 0.5)
    other = Optimizer(space, objectives=["t"], journal=journal, resume=True, strategy="random", seed=1)
    assert (other.seed, other.strategy.name) == (1, "random")
    with pytest.raises(JournalError, match="objectives"):
        Optimizer(space, objectives=[Objective("t", "maximize")], journal=journal, resume=True)


def test_stored_objectives_fall_back_to_the_first_measured_trial():
    journal = MemoryJournal()
    trials = [journal.record({"x": 1}, Result.failure("crash")), journal.record({"x": 2}, Result({"speed": 3.0}))]
    assert [o.name for o in run_meta.stored_objectives(journal, trials)] == ["speed"]
    assert run_meta.stored_parameters(journal, trials) == ["x"]


def test_force_deletes_the_journal_with_its_side_files_and_never_a_foreign_file(tmp_path):
    path = tmp_path / "run.db"
    with Journal(path) as journal:
        journal.record({"x": 1}, Result({"t": 1.0}))
    with pytest.raises(JournalError, match="already holds 1 trial"):
        run_meta.open_run_journal(path, resume=False, force=False)
    Path(str(path) + "-wal").write_text("stale")
    journal, resumed, note = run_meta.open_run_journal(path, resume=False, force=True)
    with journal:
        assert not resumed and "deleted" in note and journal.trials() == []
    assert not Path(str(path) + "-wal").exists() or Path(str(path) + "-wal").read_text() != "stale"
    foreign = tmp_path / "notes.db"
    foreign.write_text("not a journal")
    with pytest.raises(JournalError, match="not a bayestune journal"):
        run_meta.open_run_journal(foreign, resume=False, force=True)
    assert foreign.read_text() == "not a journal"


def test_the_measurement_section_is_kept_and_read_back_with_defaults_when_unreadable():
    from bayestune.measurement_spec import MeasurementSpec

    journal = MemoryJournal()
    run_meta.record_measurement(journal, None)
    assert run_meta.META_MEASUREMENT not in journal.meta()
    assert run_meta.stored_measurement(journal.meta()) == MeasurementSpec()
    spec = MeasurementSpec.from_dict({"repeats": 3, "statistic": "mean", "remeasure_top": 2})
    run_meta.record_measurement(journal, spec)
    assert run_meta.stored_measurement(journal.meta()) == spec
    assert run_meta.stored_measurement({run_meta.META_MEASUREMENT: {"statistic": "mode"}}) == MeasurementSpec()
