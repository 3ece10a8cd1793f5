"""End to end through the command line: a scenario's measurement section (repeats, correctness
check, top-k re-measurement), a time-only budget, and what `show` and `validate` print."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.storage import Journal
from bayestune.trial import FailureKind, TrialStatus

NOISY_KERNEL = '''
import random

_rng = random.Random(0)

def run(config):
    """Time falls with the unroll factor; unroll 9 is the fastest but sums wrongly."""
    unroll = config["unroll"]
    time = 10.0 / unroll * (1.0 + 0.05 * _rng.random())
    return {"time": time, "checksum": 41.0 if unroll == 9 else 42.0}
'''


def write_scenario(tmp_path: Path, **extra) -> Path:
    (tmp_path / "kernel.py").write_text(textwrap.dedent(NOISY_KERNEL))
    data = {
        "name": "kernel",
        "parameters": [{"name": "unroll", "type": "integer", "bounds": [1, 9]}],
        "objectives": ["time"],
        "budget": 9,
        "seed": 0,
        "strategy": "cot_random",
        "initial_design": {"size": 3},
        "blackbox": {"python": "kernel.py:run"},
        **extra,
    }
    path = tmp_path / "kernel.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    return CliRunner()


MEASUREMENT = {
    "warmup": 1,
    "repeats": 3,
    "statistic": "median",
    "remeasure_top": 2,
    "remeasure_rounds": 6,
    "check": {"expected": {"checksum": 42}},
}


def test_repeats_check_and_remeasurement_through_the_cli(runner: CliRunner, tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, measurement=MEASUREMENT)
    result = runner.invoke(cli, ["optimize", str(scenario), "--no-progress"])
    assert result.exit_code == 0, result.output + result.stderr
    assert "confirmed winner: trial" in result.stdout
    assert "(95% CI, median of 6 round(s))" in result.stdout  # 6 samples: the median's interval is their range
    journal_path = tmp_path / "kernel.journal.db"
    with Journal.open(journal_path) as journal:
        trials = journal.trials()
        rounds = journal.remeasurements()
    wrong = [t for t in trials if t.config["unroll"] == 9]
    assert wrong[0].status is TrialStatus.FAILED and wrong[0].failure_kind == FailureKind.VERIFICATION
    ok = [t for t in trials if t.status is TrialStatus.OK]
    assert ok and all(len(t.repeats["time"]) == 3 for t in ok)
    assert all(set(t.timings) >= {"warmup", "evaluate", "optimizer"} for t in ok)
    assert len(rounds) == 18 and {r.round for r in rounds} == set(range(1, 7))  # the best 2 and the baseline
    default = next(t for t in trials if t.config == {"unroll": 5})  # the space's default, the design's first
    assert {r.trial_id for r in rounds} == {t.trial_id for t in ok if t.config["unroll"] in (7, 8)} | {default.trial_id}
    assert f"baseline: trial {default.trial_id}, time = " in result.stdout
    assert "speedup over the baseline: " in result.stdout and "(95% CI, paired rounds)" in result.stdout

    shown = runner.invoke(cli, ["show", str(journal_path)])
    assert shown.exit_code == 0, shown.output + shown.stderr
    assert "repeats of time (median shown above; 95% interval):" in shown.stdout
    assert "re-measured in 6 interleaved round(s) (time):" in shown.stdout
    assert "r1" in shown.stdout and "r6" in shown.stdout
    winner_trial = next(t for t in ok if t.config["unroll"] == 8).trial_id
    assert f"confirmed winner: trial {winner_trial}, time = " in shown.stdout
    assert "time: " in shown.stdout and "optimizer" in shown.stdout and "warmup" in shown.stdout


def test_validate_describes_the_measurement(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["validate", str(write_scenario(tmp_path, measurement=MEASUREMENT))])
    assert result.exit_code == 0, result.output + result.stderr
    assert (
        "measurement: warm-up 1, median of 3 run(s); confirm: re-measure the best 2 and the default "
        "configuration in 6 interleaved rounds; "
        "correctness check: expected {'checksum': 42}"
    ) in result.stdout


def test_validate_says_when_the_rounds_cannot_bound_the_winners_interval(runner: CliRunner, tmp_path: Path) -> None:
    measurement = {"remeasure_top": 2, "remeasure_rounds": 5}
    result = runner.invoke(cli, ["validate", str(write_scenario(tmp_path, measurement=measurement))])
    assert result.exit_code == 0, result.output + result.stderr
    assert (
        "re-measure the best 2 and the default configuration in 5 interleaved rounds (too few for a 95% "
        "interval of the median: "
        "the winner comes without one; 6 rounds give it)"
    ) in result.stdout


def test_a_bad_measurement_section_is_one_line(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["validate", str(write_scenario(tmp_path, measurement={"max_repeats": 5}))])
    assert result.exit_code == 2
    assert result.stderr.strip().endswith(
        "kernel.json: $.measurement: max_repeats needs a precision to reach "
        "(e.g. 0.02 for ±2 %); for a fixed number of runs set repeats instead"
    )
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1


def test_a_time_only_budget(runner: CliRunner, tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, budget=None, time_limit=600)
    result = runner.invoke(cli, ["optimize", str(scenario), "--no-progress"])
    assert result.exit_code == 0, result.output + result.stderr
    assert "9 evaluation(s)" in result.stdout  # every configuration, well within the time limit
    no_limit = write_scenario(tmp_path, budget=None, time_limit=600)
    result = runner.invoke(cli, ["optimize", str(no_limit), "--force", "--no-progress", "--time-limit", "0.001"])
    assert result.exit_code == 0, result.output + result.stderr
    with Journal.open(tmp_path / "kernel.journal.db") as journal:
        assert 1 <= journal.n_finished() < 9 and journal.get_meta("budget") is None


def test_validate_refuses_a_baseline_outside_the_space(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["validate", str(write_scenario(tmp_path, measurement={"baseline": {"unroll": 99}}))])
    assert result.exit_code == 2 and "measurement.baseline is not a configuration of the space" in result.stderr
    result = runner.invoke(cli, ["validate", str(write_scenario(tmp_path, measurement={"baseline": "fastest"}))])
    assert result.exit_code == 2 and 'baseline must be "default", a configuration' in result.stderr


def test_validate_announces_no_confirmation_for_a_file_serve_runs(runner: CliRunner) -> None:
    """A HyperMapper client-server file has no black box: `serve` never confirms, so validate does not say it will."""
    data = Path(__file__).parent / "data" / "scenarios" / "hypermapper_branin4.json"
    result = runner.invoke(cli, ["validate", str(data)])
    assert result.exit_code == 0, result.output + result.stderr
    assert "no confirmation" in result.stdout  # a peer's file runs as the peer runs it (issue 40)
    assert "re-measured in 6 interleaved rounds" not in result.stdout
