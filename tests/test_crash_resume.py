"""Crash safety with real processes: ``kill -9`` the ``bayestune optimize`` process mid-run, then
``bayestune optimize --resume`` finishes the original budget with no evaluation lost or counted
twice, and the evaluations in flight at the crash are re-run. Also the CLI's --workers/--batch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bayestune.storage import Journal
from bayestune.trial import FailureKind, TrialStatus

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="kill -9 and process groups")

BUDGET = 30


def write_scenario(tmp_path: Path, *, sleep: float = 0.2, budget: int = BUDGET, build: bool = False) -> Path:
    data = {
        "name": "crashy",
        "parameters": [
            {"name": "x", "type": "integer", "bounds": [0, 200]},
            {"name": "y", "type": "integer", "bounds": [0, 200]},
        ],
        "objectives": ["runtime"],
        "budget": budget,
        "seed": 5,
        "strategy": "cot_random",
        "initial_design": {"size": 5},
        "blackbox": {
            "command": "echo $PPID $(sed 's/.*) //' /proc/$PPID/stat | cut -d' ' -f2) >> pids.txt; "  # supervisor, its parent
            f"sleep {sleep}; "
            "echo runtime: $(( ({x} - 50) * ({x} - 50) + {y} ))",
            "timeout": 20,
        },
        "measurement": {"echo_check": False},  # a deterministic formula: its repeats never vary
    }
    if build:  # a build step: the artefact holds the configuration, the run reads it back
        data["blackbox"]["build"] = {"command": "sleep 0.1; echo {x} {y} > {artefact}", "timeout": 20}
        data["blackbox"]["command"] = data["blackbox"]["command"].replace("{x}", "$(cut -d' ' -f1 {artefact})")
    path = tmp_path / "crashy.json"
    path.write_text(json.dumps(data))
    return path


def bayestune(*args: str) -> list[str]:
    return [sys.executable, "-m", "bayestune", *args]


def finished(journal: Path) -> int:
    with Journal.open(journal) as j:
        return j.n_finished()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def finished_and_pending(journal: Path) -> tuple[int, int]:
    with Journal.open(journal) as j:
        return j.n_finished(), len(j.pending())


def kill_after(proc: subprocess.Popen, journal: Path, n: int, timeout: float = 60.0) -> None:
    """Poll the journal (WAL: reading never blocks the writer) until ``n`` evaluations are
    finished and another is in flight, then SIGKILL the optimizer. Waiting for the in-flight one
    keeps the kill out of the short window between one trial's end and the next one's start."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the optimizer exited early: {proc.returncode}; {proc.stderr.read()}")
        if journal.exists():
            try:
                done, running = finished_and_pending(journal)
                if done >= n and running:
                    break
            except Exception:  # noqa: BLE001 - the file may still be being created
                pass
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail(f"fewer than {n} evaluations were journaled within {timeout} s")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


@pytest.mark.parametrize(
    "extra",
    [[], ["--workers", "3"], ["--build-workers", "3", "--devices", "gpu0"]],
    ids=["serial", "pool", "pipeline"],
)
def test_kill_9_then_resume_finishes_the_budget_and_reruns_in_flight(tmp_path, extra):
    scenario = write_scenario(tmp_path, build="--build-workers" in extra)
    journal = tmp_path / "run.db"
    proc = subprocess.Popen(
        bayestune("optimize", str(scenario), "--journal", str(journal), "--no-progress", *extra),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    kill_after(proc, journal, 8)
    assert proc.returncode == -signal.SIGKILL
    # the processes that ran the black box (the optimizer, or its pool workers) are all gone soon
    pids = {int(p) for p in (tmp_path / "pids.txt").read_text().split()}
    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(p) for p in pids), "orphaned worker processes outlived the optimizer"

    with Journal.open(journal) as j:
        done_at_crash = j.n_finished()
        in_flight = j.pending()
        before = {t.trial_id: t for t in j.trials() if t.status.is_finished}
    assert 8 <= done_at_crash < BUDGET
    assert in_flight, "an evaluation was running when the optimizer was killed"

    resumed = subprocess.run(
        bayestune("optimize", str(scenario), "--journal", str(journal), "--resume", "--no-progress", *extra),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming {journal}: {done_at_crash} of {BUDGET} evaluations done" in resumed.stderr

    with Journal.open(journal) as j:
        trials = j.trials()
        assert j.n_finished() == BUDGET and not j.pending()
    counted = [t for t in trials if t.status.is_finished and t.failure_kind != FailureKind.LOST]
    assert len(counted) == BUDGET and all(t.status is TrialStatus.OK for t in counted)
    # nothing measured before the crash was lost or changed
    after = {t.trial_id: t for t in trials}
    assert all(after[i] == t for i, t in before.items())
    # the evaluations in flight were marked lost and re-run, each exactly once
    lost = [t for t in trials if t.failure_kind == FailureKind.LOST]
    assert sorted(t.trial_id for t in lost) == sorted(t.trial_id for t in in_flight)
    reruns = [t for t in trials if t.origin == "rerun"]
    lost_configs = sorted(json.dumps(dict(t.config), sort_keys=True) for t in lost)
    assert sorted(json.dumps(dict(t.config), sort_keys=True) for t in reruns) == lost_configs
    assert all(t.status is TrialStatus.OK for t in reruns)
    # no configuration was measured twice
    keys = [json.dumps(dict(t.config), sort_keys=True) for t in counted]
    assert len(set(keys)) == BUDGET


@pytest.mark.parametrize("args", [["--workers", "2"], ["--batch", "4"], ["--workers", "2", "--batch", "3"]])
def test_cli_workers_and_batch_run_the_budget(tmp_path, monkeypatch, args):
    from click.testing import CliRunner

    from bayestune.cli import cli

    monkeypatch.chdir(tmp_path)
    scenario = write_scenario(tmp_path, sleep=0.0, budget=9)
    out = CliRunner().invoke(
        cli, ["optimize", str(scenario), "--journal", str(tmp_path / "run.db"), "--no-progress", *args]
    )
    assert out.exit_code == 0, out.output
    assert "best: runtime = " in out.stdout
    assert finished(tmp_path / "run.db") == 9


# ---- one writer per journal ---------------------------------------------
def wait_for_rows(proc: subprocess.Popen, journal: Path, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the first optimizer exited early: {proc.stderr.read()}"
        try:
            if journal.exists() and finished(journal) >= n:
                return
        except Exception:  # noqa: BLE001 - the file may still be being created
            pass
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"fewer than {n} evaluations within {timeout} s")


@pytest.mark.parametrize("second", [["--resume"], ["--force"], []], ids=["resume", "force", "plain"])
def test_a_second_optimizer_on_a_live_journal_is_refused(tmp_path, second):
    """Before: two writers interleaved (80 rows for a budget of 40), --force deleted the live
    journal, --resume killed the live run. Now the second process is refused, naming the first."""
    budget = 16
    scenario = write_scenario(tmp_path, sleep=0.4, budget=budget)
    journal = tmp_path / "run.db"
    first = subprocess.Popen(
        bayestune("optimize", str(scenario), "--journal", str(journal), "--no-progress"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_rows(first, journal, 2)
    other = subprocess.run(
        bayestune("optimize", str(scenario), "--journal", str(journal), "--no-progress", *second),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert other.returncode != 0
    assert f"is in use by bayestune pid {first.pid} on host" in other.stderr, other.stderr
    assert "Traceback" not in other.stderr
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    with Journal.open(journal) as j:
        assert len(j.trials()) == budget and j.n_finished() == budget


def test_two_optimizers_started_together_never_both_write(tmp_path):
    scenario = write_scenario(tmp_path, sleep=0.1, budget=6)
    journal = tmp_path / "run.db"
    procs = [
        subprocess.Popen(
            bayestune("optimize", str(scenario), "--journal", str(journal), "--no-progress"),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    codes = [p.wait(120) for p in procs]
    assert sorted(c == 0 for c in codes) == [False, True], [p.stderr.read() for p in procs]
    with Journal.open(journal) as j:
        assert len(j.trials()) == 6


def test_a_stale_lock_of_a_killed_run_is_reported_and_taken_over(tmp_path):
    scenario = write_scenario(tmp_path, sleep=0.2)
    journal = tmp_path / "run.db"
    proc = subprocess.Popen(
        bayestune("optimize", str(scenario), "--journal", str(journal), "--no-progress"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    kill_after(proc, journal, 3)
    resumed = subprocess.run(
        bayestune("optimize", str(scenario), "--journal", str(journal), "--resume", "--no-progress"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"took over the stale lock of bayestune pid {proc.pid}" in resumed.stderr
    assert resumed.stderr.count(f"pid {proc.pid}") == 1  # said once, not by the lock and the run both
