"""A setsid daemon started by a black box survives a kill -9 of the optimizer and of its supervisor,
but not the run's --resume: the journal's process marker finds it (issue 41 item 8)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bayestune.evaluators import leftovers
from bayestune.evaluators.leftovers import _alive
from bayestune.evaluators.processes import subreaper_available
from bayestune.storage import Journal

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not subreaper_available(), reason="/proc and the supervisor: Linux only"
)


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                if entry.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not (path.exists() and path.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)


def _marked_sleep(env_value: str) -> subprocess.Popen:
    return subprocess.Popen(["sleep", "60"], env={**os.environ, leftovers.RUN_MARKER: env_value})


def test_only_processes_with_the_exact_marker_are_killed(tmp_path):
    with Journal(tmp_path / "j.db") as journal:
        previous, marker = leftovers.run_marker(journal, tmp_path / "j.db")
        assert previous is None  # a new journal: nothing of an earlier run to look for
        assert leftovers.run_marker(journal, tmp_path / "j.db") == (marker, marker)
    ours, longer, other = _marked_sleep(marker), _marked_sleep(marker + "0"), _marked_sleep("x" + marker)
    try:
        time.sleep(0.2)
        assert leftovers.kill_leftovers(marker) == [ours.pid]
        assert ours.wait(5) == -signal.SIGKILL
        assert longer.poll() is None and other.poll() is None
    finally:
        for p in (ours, longer, other):
            p.kill()
            p.wait()


def test_a_copy_of_the_journal_is_another_run(tmp_path):
    with Journal(tmp_path / "j.db") as journal:
        _, marker = leftovers.run_marker(journal, tmp_path / "j.db")
    (tmp_path / "copy.db").write_bytes((tmp_path / "j.db").read_bytes())
    with Journal(tmp_path / "copy.db") as copy:
        previous, _ = leftovers.run_marker(copy, tmp_path / "copy.db")
    assert previous is not None and previous != marker  # same token, another file


def test_resume_kills_the_daemon_of_an_evaluation_lost_with_optimizer_and_supervisor(tmp_path):
    daemon = tmp_path / "daemon.txt"
    command = (
        "if [ -e fast ]; then echo runtime: {x}; else "
        f"setsid sh -c 'echo $$ > {daemon}; exec sleep 300' & sleep 120; echo runtime: {{x}}; fi"
    )
    scenario = {
        "name": "daemon",
        "parameters": [{"name": "x", "type": "integer", "bounds": [0, 10]}],
        "objectives": ["runtime"],
        "budget": 1,
        "seed": 1,
        "blackbox": {"command": command, "timeout": 200},
        "measurement": {"echo_check": False},
    }
    (tmp_path / "s.json").write_text(json.dumps(scenario))
    cli = [sys.executable, "-m", "bayestune", "optimize", "s.json", "--journal", "j.db", "--no-progress"]
    optimizer = subprocess.Popen(cli, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(daemon, 60)
        pid = int(daemon.read_text())
        os.kill(optimizer.pid, signal.SIGSTOP)  # it cannot react: the kill -9 of both is at once
        supervisors = _children(optimizer.pid)
        for child in supervisors:
            os.kill(child, signal.SIGKILL)
        os.kill(optimizer.pid, signal.SIGKILL)
        optimizer.wait(10)
        time.sleep(0.5)
        assert supervisors and _alive(pid), "the daemon should have outlived optimizer and supervisor"
        (tmp_path / "fast").touch()
        resumed = subprocess.run([*cli, "--resume"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        assert not _alive(pid)
        assert "left running" in resumed.stderr
    finally:
        optimizer.kill()
        with Journal.open(tmp_path / "j.db") as journal:  # whatever a failure left running
            leftovers.kill_leftovers(leftovers.run_marker(journal, tmp_path / "j.db")[1])
