"""A command's processes: the supervisor finds every descendant, and says where it cannot run."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time

import pytest

from bayestune.evaluators import _supervisor, processes

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")


@linux_only
def test_descendants_are_found_through_every_generation():
    shell = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & sleep 30 & wait"])
    try:
        deadline = time.monotonic() + 10
        sleeps: list[int] = []
        while len(sleeps) < 2 and time.monotonic() < deadline:
            sleeps = _supervisor.descendants(shell.pid)
            time.sleep(0.02)
        assert len(sleeps) == 2 and shell.pid not in sleeps  # the shell's two sleeps
        # two generations below this process (which may have other children of earlier tests)
        found = _supervisor.descendants(os.getpid())
        assert {shell.pid, *sleeps} <= set(found) and os.getpid() not in found
    finally:
        for pid in _supervisor.descendants(shell.pid):
            os.kill(pid, 9)
        shell.kill()
        shell.wait()


def test_without_prctl_the_fallback_is_announced(monkeypatch, caplog):
    processes.subreaper_available.cache_clear()
    monkeypatch.setattr(sys, "platform", "darwin")
    try:
        with caplog.at_level(logging.WARNING, logger="bayestune.evaluators.processes"):
            assert processes.subreaper_available() is False
        assert "setsid" in caplog.text
    finally:
        processes.subreaper_available.cache_clear()


@linux_only
def test_the_supervisor_exits_as_its_program_did():
    run = [sys.executable, "-I", "-S", _supervisor.__file__, "2", "0", "/bin/sh", "-c"]
    assert subprocess.run([*run, "exit 7"]).returncode == 7
    assert subprocess.run([*run, "kill -SEGV $$"]).returncode == -11
    missing = subprocess.run([*run[:-2], "/nonexistent/program"], capture_output=True, text=True)
    assert missing.returncode == _supervisor.CANNOT_START and "/nonexistent/program" in missing.stderr
