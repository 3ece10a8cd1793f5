"""Hostile inputs and faults, round four (issue 41 item 9): rows 13-17 of
``benchmarks/fault_injection.py``, each replaying a finding against real ``bayestune`` processes."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.dashboard_load import hammer
from benchmarks.fault_tools import Outcome, _bayestune, _rows, _scenario, _start

_LONG = "-O3 -funroll-loops -fomit-frame-pointer " * 8


def _cli(tmp: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(_bayestune(*args), cwd=tmp, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def _judge(runs: list[tuple[str, subprocess.CompletedProcess | None, str]]) -> Outcome:
    """Every run ended (no hang), with exit 2 and ``expected`` in its stderr, and no traceback."""
    hangs = sum(done is None for _, done, _ in runs)
    tracebacks = sum(done is not None and "Traceback" in done.stderr for _, done, _ in runs)
    wrong = [
        what
        for what, done, expected in runs
        if done is not None and not (done.returncode == 2 and expected in done.stderr)
    ]
    note = f"not as expected: {', '.join(wrong)}" if wrong else ""
    return Outcome(not wrong and not hangs, note=note, tracebacks=tracebacks, hangs=hangs)


def journal_paths(tmp: Path) -> Outcome:
    """A FIFO, a directory and a link into a missing directory given as the journal."""
    scenario = _scenario(tmp, "echo runtime: {x}", budget=2)
    os.mkfifo(tmp / "fifo.db")
    (tmp / "dir.db").mkdir()
    (tmp / "link.db").symlink_to(tmp / "nowhere" / "sub" / "j.db")
    runs = []
    for name, expected in (("fifo.db", "named pipe"), ("dir.db", "directory"), ("link.db", "missing directory")):
        runs.append((f"show {name}", _cli(tmp, "show", name, timeout=30), expected))
        if name != "dir.db":  # click refuses a directory for --journal itself
            optimize = _cli(tmp, "optimize", str(scenario), "--journal", name, "--resume", "--no-progress", timeout=30)
            runs.append((f"optimize --resume {name}", optimize, expected))
    outcome = _judge(runs)
    if (tmp / "nowhere").exists():
        return Outcome(False, note="the link's missing directory was created", hangs=outcome.hangs)
    return outcome


def _digest(path: Path) -> list[str]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in (path, Path(f"{path}-wal")) if p.exists()]


def malformed_page_and_read_only_wal(tmp: Path) -> Outcome:
    """``--resume`` on a journal with a malformed page; read-only commands on a killed run's ``-wal``."""
    scenario = _scenario(tmp, f"echo runtime: {{x}} #{_LONG}{{y}}", budget=80)
    _cli(tmp, "optimize", str(scenario), "--journal", "m.db", "--no-progress", "--no-confirm", timeout=300)
    conn = sqlite3.connect(tmp / "m.db")
    pages, size = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size"))
    conn.close()
    with open(tmp / "m.db", "r+b") as f:  # a page in the middle claims 65,535 cells
        f.seek(size * (pages // 2) + 3)
        f.write(b"\xff\xff")
    before = _digest(tmp / "m.db")
    resumed = _cli(tmp, "optimize", str(scenario), "--journal", "m.db", "--resume", "--no-progress", timeout=120)
    outcome = _judge([("--resume on a malformed page", resumed, "is damaged")])
    notes = [outcome.note] if outcome.note else []
    if _digest(tmp / "m.db") != before:
        notes.append("the damaged journal was written")
    slow = _scenario(tmp, "sleep 0.2; echo runtime: {x}", budget=40)
    proc = _start(tmp, "optimize", str(slow), "--journal", "w.db", "--no-progress")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (tmp / "w.db-wal").exists():
        time.sleep(0.1)
    time.sleep(2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    before = _digest(tmp / "w.db")
    for args in (["show", "w.db"], ["report", "w.db", "-o", "r.html"], ["export", "w.db", "--format", "json"]):
        done = _cli(tmp, *args)
        if done is None or done.returncode != 0 or "checkpoint" in done.stderr.lower():
            notes.append(f"{args[0]}: {'hung' if done is None else done.stderr.strip()[-120:]}")
    if _digest(tmp / "w.db") != before:
        notes.append("a read-only command changed the killed run's journal")
    return Outcome(not notes and outcome.clean, note="; ".join(notes), tracebacks=outcome.tracebacks)


def one_long_line(tmp: Path) -> Outcome:
    """100 MB on one line of stdout: the failure says so, not "printed nothing"."""
    scenario = _scenario(tmp, "head -c 100000000 /dev/zero | tr '\\0' a; echo; true {x}", budget=1, timeout=120)
    done = _cli(tmp, "optimize", str(scenario), "--journal", "l.db", "--no-progress", "--no-confirm", timeout=300)
    if done is None:
        return Outcome(False, hangs=1)
    said = "ending in one line longer than" in done.stdout + done.stderr
    return Outcome(said and "printed nothing" not in done.stdout + done.stderr, tracebacks="Traceback" in done.stderr)


def dashboard_burst(tmp: Path) -> Outcome:
    """300 requests at once to ``bayestune dashboard``: all answered within 60 s."""
    scenario = _scenario(tmp, "echo runtime: {x}", budget=60)
    _cli(tmp, "optimize", str(scenario), "--journal", "d.db", "--no-progress", "--no-confirm", timeout=300)
    port = 20000 + (os.getpid() + 29) % 20000
    server = subprocess.Popen(
        _bayestune("dashboard", "d.db", "--port", str(port)), cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        time.sleep(3)
        times, failed, _ = hammer(f"http://127.0.0.1:{port}/api/state", 300, 60.0)
    finally:
        server.terminate()
        server.wait(10)
    note = f"{len(times)} of 300 answered, slowest {max(times):.1f} s" if times else "none answered"
    return Outcome(failed == 0, note=note)


def _remeasured(journal: Path, group: str) -> list[tuple[int, int]]:
    conn = sqlite3.connect(f"{journal.as_uri()}?mode=ro", uri=True)  # never creates the file
    try:
        return conn.execute(f"SELECT {group}, count(*) FROM remeasurements GROUP BY {group}").fetchall()
    finally:
        conn.close()


def cut_confirmation_and_racing(tmp: Path) -> Outcome:
    """kill -9 right after the first confirmation row, then --resume: 6 rounds, 6 runs each; SIGINT
    while racing a configuration: its completed run is journaled."""
    scenario = _scenario(tmp, "sleep 0.3; echo runtime: $(( {x} + 1 ))", budget=6)
    proc = _start(tmp, "optimize", str(scenario), "--journal", "c.db", "--no-progress")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if sum(n for _, n in _remeasured(tmp / "c.db", "round")) >= 1:
                break
        except sqlite3.Error:
            pass
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    _cli(tmp, "optimize", str(scenario), "--journal", "c.db", "--resume", "--no-progress", timeout=120)
    rounds, runs = _remeasured(tmp / "c.db", "round"), _remeasured(tmp / "c.db", "trial_id")
    notes = [] if len(rounds) == 6 and {n for _, n in runs} == {6} else [f"rounds {rounds}, per candidate {runs}"]
    racing = _scenario(tmp, "echo run >> runs.txt; sleep 1; echo runtime: $(( {x} + RANDOM % 10 ))", budget=4)
    raced = _start(tmp, "optimize", str(racing), "--journal", "r.db", "--no-progress")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        (tmp / "runs.txt").exists() and len((tmp / "runs.txt").read_text().split()) >= 2
    ):
        time.sleep(0.05)
    raced.send_signal(signal.SIGINT)
    raced.communicate(timeout=60)
    if _rows(tmp / "r.db", "status = 'ok'") != 1:
        notes.append("the raced configuration's completed run was not journaled")
    return Outcome(not notes, note="; ".join(notes))


ROUND4_FAULTS: dict[str, tuple[Callable[[Path], Outcome], bool]] = {
    "13 journal: FIFO, directory, link into a missing directory": (journal_paths, False),
    "14 --resume on a malformed page; read-only commands on a killed run's WAL": (
        malformed_page_and_read_only_wal,
        False,
    ),
    "15 one 100 MB line of stdout": (one_long_line, False),
    "16 dashboard: 300 requests at once": (dashboard_burst, False),
    "17 kill -9 after the first confirmation row; SIGINT while racing": (cut_confirmation_and_racing, False),
}
