"""The ``bayestune`` command line: optimize / resume / show / export / validate, error paths,
and real runs of the installed console script."""

from __future__ import annotations

import csv
import json
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.storage import Journal
from bayestune.trial import FailureKind, TrialStatus

BLACKBOX = '''
import math
import os
from pathlib import Path

def run(config):
    """(x - 7)^2 + a mode offset; fails above 26, NaN at 0; Ctrl-C on a chosen call."""
    counter = Path(os.environ["BT_TEST_COUNTER"])
    calls = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(calls))
    if os.environ.get("BT_TEST_INTERRUPT_AT") == str(calls):
        raise KeyboardInterrupt
    if config["x"] > 26:
        raise RuntimeError(f"x={config['x']} does not compile")
    if config["x"] == 0:
        return math.nan
    return (config["x"] - 7) ** 2 + {"a": 0.0, "b": 0.5}[config["mode"]]
'''


def write_scenario(tmp_path: Path, *, budget: int = 5, blackbox: dict | None = None, **extra) -> Path:
    (tmp_path / "bb.py").write_text(textwrap.dedent(BLACKBOX))
    data = {
        "name": "tiny",
        "parameters": [
            {"name": "x", "type": "integer", "bounds": [0, 30]},
            {"name": "mode", "type": "categorical", "values": ["a", "b"]},
        ],
        "objectives": ["value"],
        "budget": budget,
        "seed": 0,
        "strategy": "cot_random",
        "initial_design": {"size": 3},
        "blackbox": blackbox or {"python": "bb.py:run"},
        **extra,
    }
    if blackbox and "command" in blackbox:  # these commands echo {x} as the value on purpose
        data["measurement"] = {"echo_check": False, **data.get("measurement", {})}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.setenv("BT_TEST_COUNTER", str(tmp_path / "calls"))
    monkeypatch.delenv("BT_TEST_INTERRUPT_AT", raising=False)
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def finished(journal_path: Path) -> int:
    with Journal.open(journal_path) as journal:
        return journal.n_finished()


def assert_one_line_error(result, *fragments):
    assert result.exit_code == 2, (result.output, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0]


# ---- optimize ------------------------------------------------------------------------------
def test_optimize_runs_the_budget_and_reports_best(runner, tmp_path):
    scenario = write_scenario(tmp_path, budget=6)
    result = runner.invoke(cli, ["optimize", str(scenario), "--no-progress"])
    assert result.exit_code == 0, result.output + result.stderr
    journal = tmp_path / "tiny.journal.db"  # default: <stem>.journal.db in the current directory
    assert finished(journal) == 6
    assert "best: value = " in result.stdout
    assert "  x    = " in result.stdout and "  mode = " in result.stdout
    assert f"journal: {journal}" in result.stdout
    with Journal.open(journal) as j:
        assert j.get_meta("budget") == 6
        assert j.get_meta("objectives") == [{"name": "value", "minimize": True}]


def test_budget_option_overrides_scenario_and_journal_option(runner, tmp_path):
    scenario = write_scenario(tmp_path, budget=50)
    journal = tmp_path / "runs" / "a.db"
    result = runner.invoke(cli, ["optimize", str(scenario), "--budget", "4", "--journal", str(journal)])
    assert result.exit_code == 0, result.stderr
    assert finished(journal) == 4


def test_scenario_journal_is_relative_to_the_scenario_file(runner, tmp_path):
    sub = tmp_path / "problem"
    sub.mkdir()
    scenario = write_scenario(sub, budget=3, journal="out/run.db")
    result = runner.invoke(cli, ["optimize", str(scenario)])
    assert result.exit_code == 0, result.stderr
    assert finished(sub / "out" / "run.db") == 3


def test_existing_journal_needs_resume_or_force(runner, tmp_path):
    scenario = write_scenario(tmp_path, budget=3)
    assert runner.invoke(cli, ["optimize", str(scenario)]).exit_code == 0
    again = runner.invoke(cli, ["optimize", str(scenario)])
    assert_one_line_error(again, "already holds 3 trial(s)", "--resume", "--force")
    assert finished(tmp_path / "tiny.journal.db") == 3
    forced = runner.invoke(cli, ["optimize", str(scenario), "--force", "--budget", "2"])
    assert forced.exit_code == 0, forced.stderr
    assert finished(tmp_path / "tiny.journal.db") == 2
    both = runner.invoke(cli, ["optimize", str(scenario), "--force", "--resume"])
    assert_one_line_error(both, "--resume and --force")


def test_force_never_deletes_a_file_that_is_not_a_journal(runner, tmp_path):
    scenario = write_scenario(tmp_path)
    precious = tmp_path / "data.db"
    precious.write_text("not sqlite at all")
    result = runner.invoke(cli, ["optimize", str(scenario), "--journal", str(precious), "--force"])
    assert_one_line_error(result, "not a bayestune journal")
    assert precious.read_text() == "not sqlite at all"


def test_ctrl_c_then_resume_ends_with_exactly_the_budget(runner, tmp_path, monkeypatch):
    scenario = write_scenario(tmp_path, budget=6)
    journal = tmp_path / "tiny.journal.db"
    monkeypatch.setenv("BT_TEST_INTERRUPT_AT", "6")  # racing: 3 probe runs of the first configuration
    stopped = runner.invoke(cli, ["optimize", str(scenario)])
    assert stopped.exit_code == 130
    assert "interrupted after 3 of 6 evaluations" in stopped.stderr
    assert f"--journal {journal} --resume" in stopped.stderr
    with Journal.open(journal) as j:  # intact: 3 finished, the interrupted one still pending
        assert j.n_finished() == 3 and len(j.pending()) == 1

    monkeypatch.delenv("BT_TEST_INTERRUPT_AT")
    resumed = runner.invoke(cli, ["optimize", str(scenario), "--resume"])  # the stored budget (6)
    assert resumed.exit_code == 0, resumed.stderr
    assert "resuming" in resumed.stderr and "3 of 6" in resumed.stderr
    assert "WARNING: journal" in resumed.stderr and "in flight" in resumed.stderr  # library log, via our handler
    with Journal.open(journal) as j:
        assert j.n_finished() == 6
        assert [t.failure_kind for t in j.trials()].count(FailureKind.LOST) == 1
        assert not j.pending()


def test_resume_uses_stored_budget_unless_budget_given(runner, tmp_path):
    scenario = write_scenario(tmp_path, budget=3)
    journal = tmp_path / "tiny.journal.db"
    assert runner.invoke(cli, ["optimize", str(scenario), "--budget", "4"]).exit_code == 0
    again = runner.invoke(cli, ["optimize", str(scenario), "--resume"])  # stored 4, not the scenario's 3
    assert again.exit_code == 0, again.stderr
    assert finished(journal) == 4
    more = runner.invoke(cli, ["optimize", str(scenario), "--resume", "--budget", "7"])
    assert more.exit_code == 0, more.stderr
    assert finished(journal) == 7
    with Journal.open(journal) as j:
        assert j.get_meta("budget") == 7


def test_resume_with_no_journal_starts_a_new_run(runner, tmp_path):
    scenario = write_scenario(tmp_path, budget=2)
    result = runner.invoke(cli, ["optimize", str(scenario), "--resume"])
    assert result.exit_code == 0, result.stderr
    assert "nothing to resume" in result.stderr
    assert finished(tmp_path / "tiny.journal.db") == 2


def test_resume_refuses_a_journal_of_other_objectives(runner, tmp_path):
    scenario = write_scenario(tmp_path, budget=2)
    assert runner.invoke(cli, ["optimize", str(scenario)]).exit_code == 0
    data = json.loads(scenario.read_text())
    data["objectives"] = ["latency"]
    scenario.write_text(json.dumps(data))
    result = runner.invoke(cli, ["optimize", str(scenario), "--resume", "--budget", "5"])
    assert_one_line_error(result, "objectives")


def test_seed_and_strategy_overrides(runner, tmp_path, monkeypatch):
    from bayestune.optimizer import Optimizer

    used = []
    original = Optimizer.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        used.append((self.seed, self.strategy.name))

    monkeypatch.setattr(Optimizer, "__init__", spy)
    scenario = write_scenario(tmp_path, budget=4)
    ok = runner.invoke(cli, ["optimize", str(scenario), "--seed", "3", "--strategy", "random"])
    assert ok.exit_code == 0, ok.stderr
    with Journal.open(tmp_path / "tiny.journal.db") as j:
        assert j.get_meta("seed") == 3 and j.get_meta("strategy") == "random"
    resumed = runner.invoke(cli, ["optimize", str(scenario), "--resume", "--budget", "6"])
    assert resumed.exit_code == 0, resumed.stderr
    assert used == [(3, "random"), (3, "random")]  # a resumed run keeps its seed and strategy
    assert finished(tmp_path / "tiny.journal.db") == 6
    bad = runner.invoke(cli, ["optimize", str(scenario), "--strategy", "nope", "--journal", "other.db"])
    assert_one_line_error(bad, "unknown strategy 'nope'")


def test_csv_option_writes_every_evaluation(runner, tmp_path):
    scenario = write_scenario(tmp_path, budget=5)
    result = runner.invoke(cli, ["optimize", str(scenario), "--csv", "out.csv"])
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader((tmp_path / "out.csv").open()))
    assert len(rows) == 5 and {"x", "mode", "value", "Valid"} <= set(rows[0])


# ---- error paths -----------------------------------------------------------------------------
def test_missing_scenario_file(runner):
    assert_one_line_error(runner.invoke(cli, ["optimize", "no/such/scenario.json"]), "no/such/scenario.json")
    assert_one_line_error(runner.invoke(cli, ["validate", "no/such/scenario.json"]), "no such file")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ('{"parameters": [', "tiny.json"),
        ('{"parameters": [{"name": "x", "type": "integer", "bounds": [5, 2]}], "objectives": ["y"]}', "bounds"),
        (
            '{"parameters": [{"name": "x", "type": "integer", "bounds": [0, 2]}], "objectives": ["y"], '
            '"constraints": ["x +* 2"]}',
            "x +* 2",
        ),
    ],
)
def test_malformed_scenario_is_one_line_exit_2(runner, tmp_path, text, fragment):
    (tmp_path / "tiny.json").write_text(text)
    for command in ("optimize", "validate"):
        assert_one_line_error(runner.invoke(cli, [command, str(tmp_path / "tiny.json")]), fragment)
    assert not (tmp_path / "tiny.journal.db").exists()


def test_bad_black_box_is_one_line_and_leaves_no_journal(runner, tmp_path):
    scenario = write_scenario(tmp_path, blackbox={"python": "bb.py:no_such_function"})
    assert_one_line_error(runner.invoke(cli, ["optimize", str(scenario)]), "no_such_function")
    assert not (tmp_path / "tiny.journal.db").exists()
    scenario = write_scenario(tmp_path, blackbox={"command": "./bench --tile {tile}"})
    assert_one_line_error(runner.invoke(cli, ["validate", str(scenario)]), "{tile}", "['x', 'mode']")


def test_debug_shows_the_traceback(runner, tmp_path):
    result = runner.invoke(cli, ["optimize", "missing.json", "--debug"])
    assert result.exit_code != 0
    from bayestune.exceptions import ScenarioError

    assert isinstance(result.exception, ScenarioError)


# ---- show / export / validate ----------------------------------------------------------------
@pytest.fixture
def finished_journal(runner, tmp_path):
    scenario = write_scenario(tmp_path, budget=40)
    result = runner.invoke(cli, ["optimize", str(scenario)])
    assert result.exit_code == 0, result.stderr
    return tmp_path / "tiny.journal.db"


def test_show_best_counts_and_failure_kinds(runner, finished_journal):
    with Journal.open(finished_journal) as j:
        trials = j.trials()
    n_exc = sum(t.failure_kind == "exception" for t in trials)
    n_nan = sum(t.failure_kind == "nan" for t in trials)
    n_ok = sum(t.status is TrialStatus.OK for t in trials)
    assert n_exc > 0  # x > 26 fails: 4 of 31 values, 40 draws

    result = runner.invoke(cli, ["show", str(finished_journal), "--top", "3"])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "40 evaluation(s) of budget 40" in out
    assert f"ok {n_ok}, infeasible 0, failed {n_exc + n_nan}" in out
    assert f"exception {n_exc}" in out
    # confirmed (a python black box is re-measured too): the winner first, a column beside the search's value
    title = "best 3 feasible by value (minimize); the confirmed winner first, then by the confirmed value where there is one:\n"
    table = out.split(title)[1].splitlines()
    assert table[0].split() == ["rank", "trial", "value", "confirmed", "value", "x", "mode"]
    ranked = [line.split() for line in table[2:5]]
    assert [r[0] for r in ranked] == ["1", "2", "3"]
    values = [float(r[2]) for r in ranked]
    assert values == sorted(values)
    assert values[0] == min(t.values["value"] for t in trials if t.feasible)


def test_show_all_and_failures(runner, finished_journal):
    result = runner.invoke(cli, ["show", str(finished_journal), "--all", "--failures"])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "failed:exception" in out
    assert "RuntimeError: x=" in out and "does not compile" in out
    listed = out.split("failed or infeasible trials")[0]
    assert sum(1 for line in listed.splitlines() if line.strip()[:1].isdigit()) == 40


def test_show_missing_journal(runner):
    assert_one_line_error(runner.invoke(cli, ["show", "nope.db"]), "nope.db")


def test_export_hypermapper_csv(runner, finished_journal, tmp_path):
    out = tmp_path / "samples.csv"
    result = runner.invoke(cli, ["export", str(finished_journal), str(out), "--errors"])
    assert result.exit_code == 0, result.stderr
    rows = list(csv.reader(out.open()))
    assert rows[0][:4] == ["x", "mode", "value", "Valid"] and rows[0][-1] == "Error"
    assert len(rows) == 1 + 40
    assert any(r[3] == "False" and "does not compile" in r[-1] for r in rows[1:])


def test_validate_describes_the_scenario(runner, tmp_path):
    scenario = write_scenario(tmp_path, constraints=["x * 2 <= 40"])
    result = runner.invoke(cli, ["validate", str(scenario)])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "parameters (2):" in out and "constraints (1):" in out and "x * 2 <= 40" in out
    assert "feasible configurations: 42 of 62" in out
    assert "black box: python" in out and out.rstrip().endswith("OK")


def test_validate_reports_an_empty_space(runner, tmp_path):
    scenario = write_scenario(tmp_path, constraints=["x > 40"])
    assert_one_line_error(runner.invoke(cli, ["validate", str(scenario)]))


# ---- the installed console script, in real processes -------------------------------------------
def console_script() -> str:
    script = Path(sys.executable).with_name("bayestune")
    found = str(script) if script.exists() else shutil.which("bayestune")
    if not found:
        pytest.fail("the 'bayestune' console script is not installed: run pip install -e '.[test]'")
    return found


COMMAND_BLACKBOX = (
    f"{shlex.quote(sys.executable)} -c 'import sys; x = int(sys.argv[1]); "
    'print("compiled"); print("value:", (x - 7) ** 2 + (sys.argv[2] == "b"))\' {x} {mode}'
)


def test_console_script_runs_a_command_black_box(tmp_path):
    scenario = write_scenario(tmp_path, budget=5, blackbox={"command": COMMAND_BLACKBOX, "timeout": 30})
    journal = tmp_path / "run.db"
    proc = subprocess.run(
        [console_script(), "optimize", str(scenario), "--journal", str(journal)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "best: value = " in proc.stdout
    with Journal.open(journal) as j:
        trials = j.trials()
    assert len(trials) == 5 and all(t.status is TrialStatus.OK for t in trials)
    assert all(t.values["value"] == (t.config["x"] - 7) ** 2 + (t.config["mode"] == "b") for t in trials)


def test_console_script_sigint_then_resume(tmp_path):
    # The 6th call (racing runs the first configuration 3 times, so: the 4th evaluation) sends
    # SIGINT to bayestune itself, like Ctrl-C: the parent of the
    # command's supervisor ($PPID of the command's shell is the supervisor).
    template = (
        "n=$(cat calls 2>/dev/null || echo 0); n=$((n + 1)); echo $n > calls; "
        "if [ $n -eq 6 ]; then kill -INT $(sed 's/.*) //' /proc/$PPID/stat | cut -d' ' -f2); sleep 30; fi; "
        "echo value: {x}"
    )
    scenario = write_scenario(tmp_path, budget=6, blackbox={"command": template})
    journal = tmp_path / "run.db"
    cmd = [console_script(), "optimize", str(scenario), "--journal", str(journal)]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert first.returncode == 130, first.stderr
    assert "--resume" in first.stderr and "Traceback" not in first.stderr
    assert finished(journal) == 3
    second = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert finished(journal) == 6


def test_python_dash_m_bayestune(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "bayestune", "show", str(tmp_path / "none.db")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: journal {str(tmp_path / 'none.db')!r} does not exist"]


def test_show_on_a_journal_with_a_damaged_row_names_the_row(runner, tmp_path):
    """Before: a ValueError traceback ("'weird' is not a valid TrialStatus")."""
    import sqlite3

    from bayestune.optimizer import Optimizer
    from bayestune.space import Integer, Space
    from bayestune.storage.journal import Journal

    path = tmp_path / "bad.db"
    with Journal(path) as journal:
        Optimizer(Space([Integer("x", 0, 9)]), objectives=["t"], journal=journal, seed=0).optimize(
            lambda c: float(c["x"]), 4
        )
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE trials SET status = 'weird' WHERE trial_id = 3")
    conn.close()
    result = runner.invoke(cli, ["show", str(path)])
    assert result.exit_code != 0
    assert "trial 3 is damaged (status 'weird'" in result.stderr
    assert "Traceback" not in result.stderr


# ---- runs that fail, piped progress --------------------------------
def test_a_run_where_every_evaluation_fails_stops_early_quoting_the_error(runner, tmp_path):
    """Before: the whole budget was spent, 'no feasible configuration found', exit 0."""
    scenario = write_scenario(
        tmp_path, budget=30, blackbox={"command": "echo 'ld: cannot find -lfoo' >&2; exit 1 #{x}"}
    )
    result = runner.invoke(cli, ["optimize", str(scenario), "--no-progress", "--stop-after-failures", "5"])
    assert result.exit_code == 3, result.output + result.stderr
    assert finished(tmp_path / "tiny.journal.db") == 5
    assert "the first 5 evaluations of this run all failed" in result.stderr
    assert "most common error (5 of 5 failures, kind crash)" in result.stderr
    assert "ld: cannot find -lfoo" in result.stderr


def test_a_short_run_that_only_fails_exits_non_zero_with_the_error(runner, tmp_path):
    scenario = write_scenario(tmp_path, budget=3, blackbox={"command": "echo boom >&2; exit 4 #{x}"})
    result = runner.invoke(cli, ["optimize", str(scenario), "--no-progress"])
    assert result.exit_code == 3
    assert "no feasible configuration found" in result.stdout
    assert "every evaluation failed" in result.stderr and "boom" in result.stderr


def test_stop_after_failures_zero_spends_the_budget(runner, tmp_path):
    scenario = write_scenario(tmp_path, budget=12, blackbox={"command": "exit 1 #{x}"})
    result = runner.invoke(cli, ["optimize", str(scenario), "--no-progress", "--stop-after-failures", "0"])
    assert result.exit_code == 3 and finished(tmp_path / "tiny.journal.db") == 12


def test_piped_progress_prints_one_line_per_evaluation(runner, tmp_path):
    """Before: with stderr piped, the progress bar printed nothing until the end."""
    scenario = write_scenario(tmp_path, budget=4)
    result = runner.invoke(cli, ["optimize", str(scenario)])  # CliRunner's stderr is not a terminal
    assert result.exit_code == 0, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("[")]
    assert [ln.split("]")[0] for ln in lines] == ["[1/4", "[2/4", "[3/4", "[4/4"]
    assert all(" | best value=" in ln for ln in lines)


def test_validate_lists_what_became_of_each_hypermapper_key(runner):
    scenario = Path(__file__).parent / "data" / "scenarios" / "hypermapper_branin4.json"
    result = runner.invoke(cli, ["validate", str(scenario)])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "HyperMapper/BaCO keys" in out
    assert "mapped: time_budget -> time_limit" in out
    assert "mapped: output_data_file -> the samples are written to" in out
    assert "read as HyperMapper 2.0 (HyperMapper 2.0-only evaluations_per_optimization_iteration" in out
    assert "time limit" in out and out.rstrip().endswith("OK")


def test_validate_names_the_override_for_a_file_both_schemas_accept(runner, tmp_path):
    """BaCO's chakong_haimes example has the keys, values and types of HyperMapper's: read as
    HyperMapper 2.0's, and validate says how to have BaCO's defaults instead."""
    data = {
        "application_name": "chakong_haimes",
        "optimization_objectives": ["f1_value", "f2_value"],
        "optimization_iterations": 50,
        "design_of_experiment": {"doe_type": "random sampling", "number_of_samples": 10},
        "input_parameters": {
            "x1": {"parameter_type": "real", "values": [-20, 20]},
            "x2": {"parameter_type": "real", "values": [-20, 20]},
        },
    }
    path = tmp_path / "chakong_haimes_scenario.json"
    path.write_text(json.dumps(data))
    result = runner.invoke(cli, ["validate", str(path)])
    assert result.exit_code == 0, result.stderr
    assert (
        "read as HyperMapper 2.0 (only keys both schemas share; BAYESTUNE_READ_AS=baco (or the key "
        "bayestune_read_as) for BaCO's defaults): strategy parego, random forest (10 trees)"
    ) in result.stdout
    path.write_text(json.dumps({**data, "bayestune_read_as": "baco"}))
    result = runner.invoke(cli, ["validate", str(path)])
    assert "read as BaCO (bayestune_read_as = 'baco'): strategy parego, Gaussian process" in result.stdout


def test_resume_after_editing_the_space_says_what_differs(runner, tmp_path):
    """Before: "configuration lacks parameter(s)"."""
    scenario = write_scenario(tmp_path, budget=3)
    assert runner.invoke(cli, ["optimize", str(scenario), "--no-progress"]).exit_code == 0
    data = json.loads(scenario.read_text())
    data["parameters"][0]["bounds"] = [0, 40]
    data["parameters"].append({"name": "z", "type": "integer", "bounds": [0, 2]})
    data["budget"] = 6
    scenario.write_text(json.dumps(data))
    result = runner.invoke(cli, ["optimize", str(scenario), "--resume", "--no-progress"])
    assert_one_line_error(
        result,
        "was recorded with a different search space",
        "added ['z']",
        "changed 'x': type=integer, bounds=[0, 30] -> type=integer, bounds=[0, 40]",
    )


# ---- validate, show --failures, show | head --------------------------------
@pytest.mark.parametrize(
    "command, fragment",
    [
        ("./missing-bench --tile {x}", "'./missing-bench' does not exist"),
        ("no-such-program-bt {x}", "'no-such-program-bt' is not on PATH"),
        ("OMP_NUM_THREADS=1 no-such-program-bt {x}", "'no-such-program-bt' is not on PATH"),
    ],
)
def test_validate_refuses_a_command_whose_program_does_not_exist(runner, tmp_path, command, fragment):
    """Before: 'set up OK'."""
    scenario = write_scenario(tmp_path, blackbox={"command": command})
    assert_one_line_error(runner.invoke(cli, ["validate", str(scenario)]), fragment)


def test_validate_accepts_shell_words_and_existing_programs(runner, tmp_path):
    (tmp_path / "bench.sh").write_text("#!/bin/sh\necho 1\n")
    (tmp_path / "bench.sh").chmod(0o755)
    for command in ["./bench.sh {x}", "echo {x}", "python3 -c 'print(1)' {x}", "cd . && ./bench.sh {x}"]:
        scenario = write_scenario(tmp_path, blackbox={"command": command})
        result = runner.invoke(cli, ["validate", str(scenario)])
        assert result.exit_code == 0, (command, result.stderr)


def test_validate_refuses_unknown_strategy_options(runner, tmp_path):
    scenario = write_scenario(tmp_path, strategy="bo", strategy_options={"kapa": 2})
    assert_one_line_error(runner.invoke(cli, ["validate", str(scenario)]), "unknown option(s) ['kapa']")


def test_show_failures_prints_the_whole_error_with_stderr(runner, tmp_path):
    """Before: one line of 100 characters; 'Segmentation fault' on stderr was cut off."""
    scenario = write_scenario(
        tmp_path,
        budget=2,
        blackbox={
            "command": "echo 'a long first line of diagnostics that says nothing useful yet, padding padding padding' >&2;"
            " echo 'Segmentation fault (core dumped)' >&2; exit 139 #{x}"
        },
    )
    runner.invoke(cli, ["optimize", str(scenario), "--no-progress"])
    result = runner.invoke(cli, ["show", "tiny.journal.db", "--failures"])
    assert result.exit_code == 0
    assert "Segmentation fault (core dumped)" in result.stdout and "[crash]" in result.stdout


def test_show_into_a_closed_pipe_is_quiet(tmp_path, finished_journal):
    """Before: `bayestune show run.db | head -1` printed a BrokenPipeError."""
    import subprocess

    # `true` leaves at once, so every write of `show` meets a closed pipe
    proc = subprocess.run(
        f"{sys.executable} -m bayestune show {shlex.quote(str(finished_journal))} --all | true; "
        "exit ${PIPESTATUS[0]}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode in (0, 1) and proc.stderr == "", (
        proc.stderr and "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    )


def test_backup_copies_what_is_still_in_the_wal_file(runner, tmp_path):
    """Before: copying the .db of a crashed (or running) run lost what sat in the -wal file."""
    from bayestune.trial import Result

    journal = Journal(tmp_path / "live.db")  # left open: a live run, nothing checkpointed yet
    for x in range(5):
        journal.finish(journal.start({"x": x}), Result({"value": float(x)}))
    import sqlite3

    naive = tmp_path / "naive.db"
    shutil.copy(tmp_path / "live.db", naive)
    conn = sqlite3.connect(naive)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'trials'").fetchone()[0] == 0  # the defect
    conn.close()
    result = runner.invoke(cli, ["backup", str(tmp_path / "live.db"), str(tmp_path / "copy.db")])
    assert result.exit_code == 0, result.stderr
    assert "5 finished evaluation(s)" in result.stdout
    journal.close()
    assert finished(tmp_path / "copy.db") == 5
    assert not (tmp_path / "copy.db-wal").exists()  # one self-contained file


def test_show_failures_says_which_output_constraint_a_trial_breaks(runner, tmp_path):
    """Before: an output-constraint infeasibility printed an empty error."""
    scenario = write_scenario(
        tmp_path, budget=12, blackbox={"command": "echo value: {x}; echo area: {x}"}, output_constraints=["area <= 10"]
    )
    assert runner.invoke(cli, ["optimize", str(scenario), "--no-progress"]).exit_code == 0
    with Journal.open(tmp_path / "tiny.journal.db") as j:
        broken = [t for t in j.trials() if t.failure_kind == "output_constraint"]
    assert broken, "the design should have tried some x > 10"
    result = runner.invoke(cli, ["show", "tiny.journal.db", "--failures"])
    assert result.exit_code == 0
    x = int(broken[0].config["x"])
    assert f"breaks the output constraint(s) area <= 10 (area={x})" in result.stdout


# ---- dag -----------------------------------------------------------------------------------
def _logged_journal(path: Path, n: int = 14) -> Path:
    from bayestune import Real
    from bayestune.optimizer import Optimizer
    from bayestune.space import Space

    def box(c):
        m = 3 * c["a"] + 0.1 * c["b"]
        return {"y": m**2 + c["b"], "comp.m": m, "comp.m2": 2 * m + 0.01 * c["b"]}

    with Journal(path) as journal:
        opt = Optimizer(
            Space([Real("a", 0, 1), Real("b", 0, 1)]), objectives=["y"], strategy="random", seed=0, journal=journal
        )
        opt.optimize(box, n)
    return path


def test_dag_draws_the_learned_graph_with_fit_quality(runner, tmp_path):
    journal = _logged_journal(tmp_path / "run.db")
    result = runner.invoke(cli, ["dag", str(journal), "-o", str(tmp_path / "dag.svg")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "dag.svg").read_text().lstrip().startswith("<?xml")
    assert "effective dimension" in result.output and "fit R²" in result.output
    # comp.m2 is 2 comp.m up to 0.01 b: a function of it, set aside and named with the reason
    assert "set aside, never parents of y" in result.output
    assert "comp.m2" in result.output and "a function of comp.m (rank correlation +" in result.output


def test_dag_of_a_too_short_run_is_one_clear_error(runner, tmp_path):
    journal = _logged_journal(tmp_path / "run.db", n=2)
    assert_one_line_error(runner.invoke(cli, ["dag", str(journal)]), "at least 3 feasible evaluations")


def test_old_and_experimental_strategy_options_are_one_line_warnings(runner, tmp_path):
    scenario = write_scenario(tmp_path, strategy="bo", strategy_options={"local_every": 0, "stall_after": 4})
    result = runner.invoke(cli, ["validate", str(scenario)])
    assert result.exit_code == 0
    assert "warning: strategy 'bo': option 'local_every' is now spelled 'trust_region.every'" in result.output
    assert "warning: strategy 'bo': experimental option(s) ['experimental.stall'] set" in result.output


def test_show_counts_what_ran_and_does_not_add_up_overlapping_batch_trials(runner, tmp_path):
    """Issue 42 (TVM): a batch measured at once is not its trials' times added up, and trials told
    without running (a refused schedule, a measured program's twin) are not evaluations."""
    import time as clock

    from bayestune.objectives import Objective
    from bayestune.run import META_NOT_RUN, describe_run
    from bayestune.scenario.records import DesignSpec
    from bayestune.space import Integer, Space
    from bayestune.trial import Result

    path = tmp_path / "batch.db"
    with Journal(path) as journal:
        describe_run(
            journal,
            objectives=[Objective("t")],
            space=Space([Integer("x", 0, 9)]),
            strategy="random",
            strategy_options=None,
            seed=0,
            design=DesignSpec(),
        )
        ids = [journal.start({"x": x}, batch=1) for x in range(5)]
        clock.sleep(0.4)
        for i in ids:
            journal.finish(i, Result({"t": 1.0 + i}))
        journal.set_meta(META_NOT_RUN, [ids[-1]])
    out = runner.invoke(cli, ["show", str(path)]).stdout
    assert f"{path}: 4 evaluation(s), and 1 trial(s) told without running" in out
    line = next(x for x in out.splitlines() if x.startswith("time: "))
    assert "s wall, trials overlapping (their own times add up to 2" in line and "other" not in line
