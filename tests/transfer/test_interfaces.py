"""Transfer through the scenario file and the command line."""

import json
import textwrap

import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.exceptions import ScenarioError
from bayestune.optimizer import Optimizer
from bayestune.scenario import load_scenario, save_scenario
from bayestune.storage import Journal

BLACKBOX = """
def run(config):
    return (config["x"] - 7) ** 2 + {"a": 0.0, "b": 0.5}[config["mode"]] + 1.0
"""


def write_scenario(tmp_path, **extra):
    (tmp_path / "bb.py").write_text(textwrap.dedent(BLACKBOX))
    data = {
        "name": "tiny",
        "objectives": ["value"],
        "budget": 4,
        "seed": 0,
        "initial_design": {"size": 3},
        "parameters": [
            {"name": "x", "type": "integer", "bounds": [0, 30]},
            {"name": "mode", "type": "categorical", "values": ["a", "b"]},
        ],
        "blackbox": {"python": "bb.py:run"},
        **extra,
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    return path


def write_prior_csv(path, rows=((7, "a", 1.0), (8, "a", 2.0), (20, "b", 170.5), (3, "b", 17.5))):
    path.write_text("x,mode,value\n" + "".join(f"{x},{m},{v}\n" for x, m, v in rows))
    return path


def test_scenario_transfer_key_is_read_relative_to_the_file_and_written_back(tmp_path):
    (tmp_path / "runs").mkdir()
    write_prior_csv(tmp_path / "runs" / "old.csv")
    scenario = load_scenario(write_scenario(tmp_path, transfer={"runs": ["runs/old.csv"], "mode": "design", "top": 2}))
    assert scenario.transfer.runs == ("runs/old.csv",) and scenario.transfer.mode == "design"
    opt = Optimizer.from_scenario(scenario)
    assert [opt.ask()[0] for _ in range(3)][1:] == [{"x": 7, "mode": "a"}, {"x": 8, "mode": "a"}]
    (tmp_path / "copy").mkdir()
    save_scenario(scenario, tmp_path / "copy" / "s.json")
    again = load_scenario(tmp_path / "copy" / "s.json")
    assert again.transfer.runs == ("../runs/old.csv",) and again.transfer.top == 2


def test_a_bad_transfer_key_names_the_path(tmp_path):
    with pytest.raises(ScenarioError, match="transfer"):
        load_scenario(write_scenario(tmp_path, transfer={"runs": ["a.csv"], "mode": "sometimes"}))
    with pytest.raises(ScenarioError, match="runs"):
        load_scenario(write_scenario(tmp_path, transfer={"mode": "both"}))


def test_cli_prior_run_opens_the_design_with_the_best_prior_configuration(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scenario = write_scenario(tmp_path)
    write_prior_csv(tmp_path / "old.csv")
    result = CliRunner().invoke(
        cli,
        [
            "optimize",
            str(scenario),
            "--no-progress",
            "--prior-run",
            "old.csv",
            "--transfer-mode",
            "both",
            "--journal",
            "new.db",
        ],
    )
    assert result.exit_code == 0, result.output
    with Journal.open(tmp_path / "new.db") as journal:
        configs = [dict(t.config) for t in journal.trials()]
    assert {"x": 7, "mode": "a"} in configs[:2]
    assert "best: value = 1" in result.stdout


def test_cli_refuses_a_prior_run_of_another_space_before_creating_a_journal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scenario = write_scenario(tmp_path)
    (tmp_path / "other.csv").write_text("y,mode,value\n1,a,2.0\n")
    result = CliRunner().invoke(
        cli, ["optimize", str(scenario), "--no-progress", "--prior-run", "other.csv", "--journal", "new.db"]
    )
    assert result.exit_code == 2
    assert "does not match the space" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "new.db").exists()


def test_cli_transfer_mode_without_prior_runs_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        cli, ["optimize", str(write_scenario(tmp_path)), "--no-progress", "--transfer-mode", "design"]
    )
    assert result.exit_code == 2 and "--transfer-mode needs prior runs" in result.stderr


def test_cli_prior_run_without_a_mode_uses_auto_and_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scenario = write_scenario(tmp_path)
    write_prior_csv(tmp_path / "old.csv")
    result = CliRunner().invoke(
        cli, ["optimize", str(scenario), "--no-progress", "--prior-run", "old.csv", "--journal", "new.db"]
    )
    assert result.exit_code == 0, result.output
    assert "while this run's measurements rank those above its other design points" in result.output
    assert "auto transfer: " in result.output and "old.csv: trusted after" in result.output  # its decision
    with Journal.open(tmp_path / "new.db") as journal:
        configs = [dict(t.config) for t in journal.trials()]
    assert configs[1] == {"x": 7, "mode": "a"}  # the default, then the source's best
    assert load_scenario(write_scenario(tmp_path, transfer={"runs": ["old.csv"]})).transfer.mode == "auto"
