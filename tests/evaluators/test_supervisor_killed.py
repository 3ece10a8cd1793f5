"""Killing the evaluation's supervisor itself (kill -9) leaves no descendant running: what it held
(``setsid`` jobs, re-parented to init when it dies) is found by its evaluation marker."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from bayestune.evaluators import command as command_module
from bayestune.evaluators.command import CommandEvaluator
from bayestune.evaluators.processes import subreaper_available

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not subreaper_available(), reason="the supervisor is Linux only"
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_killed_supervisor_leaves_no_setsid_descendant(tmp_path, monkeypatch):
    started = []
    real = command_module.CommandProcesses

    def spy(*args, **kwargs):
        procs = real(*args, **kwargs)
        started.append(procs)
        return procs

    monkeypatch.setattr(command_module, "CommandProcesses", spy)
    pids = tmp_path / "pids.txt"
    ev = CommandEvaluator(
        f"setsid sleep 60 & echo $! >> {pids}; sleep 60; echo {{x}}", ["y"], workdir=tmp_path, timeout=60
    )

    def kill_supervisor():
        deadline = time.monotonic() + 20
        while not (started and pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(started[0].pid, signal.SIGKILL)

    threading.Thread(target=kill_supervisor, daemon=True).start()
    result = ev.evaluate({"x": 1})
    assert result.error and "SIGKILL" in result.error
    escaped = [int(p) for p in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in escaped) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [p for p in escaped if _alive(p)]
    for p in survivors:
        os.kill(p, signal.SIGKILL)
    assert escaped and not survivors
