"""What the fault-injection rows share (``benchmarks/fault_injection.py``): the faulty scenario,
the outcome records, and starting and watching ``bayestune`` processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

#: A command black box whose value is cheap but takes ``{sleep}`` seconds.
_SCENARIO = {
    "name": "faulty",
    "parameters": [
        {"name": "x", "type": "integer", "bounds": [0, 300]},
        {"name": "y", "type": "integer", "bounds": [0, 300]},
    ],
    "objectives": ["runtime"],
    "seed": 5,
    "strategy": "cot_random",
    "initial_design": {"size": 4},
    "measurement": {"echo_check": False},  # the faults' commands print fixed or echoed values on purpose
}


@dataclass
class Outcome:
    clean: bool
    lost: int = 0
    note: str = ""
    tracebacks: int = 0
    hangs: int = 0
    injections: int = 0


@dataclass
class Row:
    fault: str
    trials: int = 0
    clean: int = 0
    lost: int = 0
    notes: str = ""
    tracebacks: int = 0
    hangs: int = 0
    injections: int = 0

    @property
    def failures(self) -> int:
        return self.trials - self.clean


def _scenario(tmp: Path, command: str, *, budget: int, timeout: float = 30) -> Path:
    data = dict(_SCENARIO, budget=budget, blackbox={"command": command, "timeout": timeout})
    path = tmp / "faulty.json"
    path.write_text(json.dumps(data))
    return path


def _bayestune(*args: str) -> list[str]:
    return [sys.executable, "-m", "bayestune", *args]


def _start(tmp: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(_bayestune(*args), cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _rows(journal: Path, where: str = "1") -> int:
    conn = sqlite3.connect(journal)
    try:
        return conn.execute(f"SELECT count(*) FROM trials WHERE {where}").fetchone()[0]
    finally:
        conn.close()


def _finished(journal: Path) -> int:
    try:
        return _rows(journal, "status != 'pending' AND coalesce(failure_kind, '') != 'lost'")
    except sqlite3.Error:
        return 0


def _wait_rows(proc: subprocess.Popen, journal: Path, n: int, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and _finished(journal) >= n:
            return True
        time.sleep(0.05)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False
    except OSError:
        return True


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)
