"""The process-level faults and the first rounds of hostile use (issues 20, 24), one injector
a row of ``benchmarks/fault_injection.py``: each returns what a user would check afterwards."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.fault_tools import (
    _SCENARIO,
    Outcome,
    _bayestune,
    _finished,
    _gone_within,
    _rows,
    _scenario,
    _start,
    _wait_rows,
)


def kill9_then_resume(tmp: Path) -> Outcome:
    budget = 16
    scenario = _scenario(tmp, "sleep 0.1; echo runtime: $(( {x} + {y} ))", budget=budget)
    journal = tmp / "run.db"
    proc = _start(tmp, "optimize", str(scenario), "--journal", str(journal), "--no-progress")
    if not _wait_rows(proc, journal, 6):
        proc.kill()
        return Outcome(False, note="run did not start")
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    before = _finished(journal)
    resumed = subprocess.run(
        _bayestune("optimize", str(scenario), "--journal", str(journal), "--resume", "--no-progress"),
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
    )
    after = _finished(journal)
    ok = _rows(journal, "status = 'ok'")
    clean = resumed.returncode == 0 and after == budget and ok == budget and before < budget
    return Outcome(clean, lost=max(0, budget - ok), note="" if clean else f"{after} of {budget} after resume")


def _second_writer(tmp: Path, extra: list[str]) -> Outcome:
    budget = 30  # ~12 s left after the first rows: margin for the second process's start on a loaded machine
    scenario = _scenario(tmp, "sleep 0.4; echo runtime: $(( {x} + {y} ))", budget=budget)
    journal = tmp / "run.db"
    first = _start(tmp, "optimize", str(scenario), "--journal", str(journal), "--no-progress")
    if not _wait_rows(first, journal, 2):
        first.kill()
        return Outcome(False, note="run did not start")
    started_at = _finished(journal)
    second = subprocess.run(
        _bayestune("optimize", str(scenario), "--journal", str(journal), "--no-progress", *extra),
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
    )
    first.communicate(timeout=120)
    rows = _rows(journal) if journal.exists() else 0
    lost = max(0, budget - _finished(journal)) if journal.exists() else budget
    if _finished(journal) >= budget and started_at >= budget:
        return Outcome(False, note="the first run ended before the second started (too fast to test)")
    clean = second.returncode != 0 and "is in use by" in second.stderr and first.returncode == 0 and rows == budget
    note = f"{rows} rows for a budget of {budget}" if rows != budget else ""
    if second.returncode == 0:
        note = (note + "; " if note else "") + "second optimizer not refused"
    return Outcome(clean, lost=lost, note=note)


def second_writer_resume(tmp: Path) -> Outcome:
    return _second_writer(tmp, ["--resume"])


def second_writer_force(tmp: Path) -> Outcome:
    return _second_writer(tmp, ["--force"])


def background_job_holds_stdout(tmp: Path) -> Outcome:
    scenario = _scenario(tmp, "sleep 600 & echo {x}.5", budget=1, timeout=20)
    start = time.monotonic()
    done = subprocess.run(
        _bayestune("optimize", str(scenario), "--journal", "bg.db", "--no-progress"),
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
    )
    ok = _rows(tmp / "bg.db", "status = 'ok'") if (tmp / "bg.db").exists() else 0
    return Outcome(done.returncode == 0 and ok == 1 and time.monotonic() - start < 15, lost=1 - ok)


def _wait_for_text(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not (path.exists() and path.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)


def _survivors(pids_file: Path) -> tuple[list[int], list[int]]:
    """The pids listed in ``pids_file`` and those still alive 5 s on (killed now)."""
    pids = [int(p) for p in pids_file.read_text().split()] if pids_file.exists() else []
    survivors = [p for p in pids if not _gone_within(p, 5)]
    for p in survivors:
        os.kill(p, signal.SIGKILL)
    return pids, survivors


def orphan_after_kill9(tmp: Path) -> Outcome:
    scenario = _scenario(tmp, "sleep 60 & echo $! >> children.txt; wait; echo {x}", budget=3, timeout=120)
    proc = _start(tmp, "optimize", str(scenario), "--journal", "o.db", "--no-progress")
    children = tmp / "children.txt"
    _wait_for_text(children, 30)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    pids, survivors = _survivors(children)
    return Outcome(bool(pids) and not survivors, note=f"{len(survivors)} stray command(s)" if survivors else "")


def setsid_grandchild_at_timeout(tmp: Path) -> Outcome:
    """A command that starts a job in a new session (out of its process group), then times out."""
    scenario = _scenario(tmp, "setsid sleep 60 & echo $! >> escaped.txt; sleep 30; echo {x}", budget=1, timeout=0.5)
    subprocess.run(
        _bayestune("optimize", str(scenario), "--journal", "s.db", "--no-progress"),
        cwd=tmp,
        capture_output=True,
        timeout=60,
    )
    escaped = tmp / "escaped.txt"
    pids, survivors = _survivors(escaped)
    timed_out = (tmp / "s.db").exists() and _rows(tmp / "s.db", "failure_kind = 'timeout'") == 1
    note = (
        f"{len(survivors)} setsid grandchild(ren) survived the timeout"
        if survivors
        else ("" if pids and timed_out else "the command did not start or did not time out")
    )
    return Outcome(bool(pids) and timed_out and not survivors, note=note)


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return out


def daemon_after_kill9_of_both(tmp: Path) -> Outcome:
    """A black box's setsid daemon, then kill -9 of the optimizer and its supervisor at once
    (``pkill -9 -f bayestune``), then ``--resume``: the daemon must not outlive the resume."""
    command = (
        "if [ -e fast ]; then echo runtime: {x}; else "
        "setsid sh -c 'echo $$ >> daemon.txt; exec sleep 300' & sleep 120; echo runtime: {x}; fi"
    )
    scenario = _scenario(tmp, command, budget=1, timeout=200)
    proc = _start(tmp, "optimize", str(scenario), "--journal", "d.db", "--no-progress")
    _wait_for_text(tmp / "daemon.txt", 60)
    os.kill(proc.pid, signal.SIGSTOP)  # as pkill: neither may react to the other's death
    supervisors = _children(proc.pid)
    for pid in [*supervisors, proc.pid]:
        os.kill(pid, signal.SIGKILL)
    proc.wait(10)
    pids = [int(p) for p in (tmp / "daemon.txt").read_text().split()] if (tmp / "daemon.txt").exists() else []
    outlived = bool(pids) and bool(supervisors) and not _gone_within(pids[0], 0.5)
    (tmp / "fast").touch()
    resumed = subprocess.run(
        _bayestune("optimize", str(scenario), "--journal", "d.db", "--resume", "--no-progress"),
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
    )
    pids, survivors = _survivors(tmp / "daemon.txt")
    ok = resumed.returncode == 0 and _rows(tmp / "d.db", "status = 'ok'") == 1
    note = f"{len(survivors)} daemon(s) outlived --resume" if survivors else ""
    if not outlived:
        note = "the daemon did not start or did not outlive the kill -9 (nothing tested)"
    return Outcome(outlived and ok and not survivors, note=note, tracebacks=int("Traceback" in resumed.stderr))


def ambiguous_output(tmp: Path) -> Outcome:
    lines = ["[GPU 0]", "12,345", "+- 0.3", "CI 1.4-1.6", "\\001\\002\\377 7"]
    wrong = 0
    for i, line in enumerate(lines):
        scenario = _scenario(tmp, f"printf '%b\\n' '{line}' #{{x}}", budget=1)
        subprocess.run(
            _bayestune(
                "optimize", str(scenario), "--journal", f"amb{i}.db", "--no-progress", "--stop-after-failures", "0"
            ),
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=60,
        )
        wrong += _rows(tmp / f"amb{i}.db", "status = 'ok'")
    return Outcome(wrong == 0, note=f"{wrong} of {len(lines)} lines read as a number" if wrong else "")


def quoted_placeholder(tmp: Path) -> Outcome:
    data = dict(
        _SCENARIO,
        budget=1,
        parameters=[{"name": "c", "type": "categorical", "values": ["a", "x'; touch pwned; '"]}],
        blackbox={"command": "echo '{c}' >/dev/null; echo 1"},
    )
    (tmp / "q.json").write_text(json.dumps(data))
    done = subprocess.run(
        _bayestune("optimize", "q.json", "--journal", "q.db", "--no-progress"),
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Outcome(done.returncode == 2 and "inside '...' quotes" in done.stderr and not (tmp / "pwned").exists())


def damaged_row(tmp: Path) -> Outcome:
    scenario = _scenario(tmp, "echo runtime: {x}", budget=3)
    subprocess.run(
        _bayestune("optimize", str(scenario), "--journal", "d.db", "--no-progress"),
        cwd=tmp,
        capture_output=True,
        timeout=60,
    )
    conn = sqlite3.connect(tmp / "d.db")
    conn.execute("UPDATE trials SET status = 'weird' WHERE trial_id = 2")
    conn.commit()
    conn.close()
    shown = subprocess.run(_bayestune("show", "d.db"), cwd=tmp, capture_output=True, text=True, timeout=60)
    return Outcome(shown.returncode == 2 and "trial 2 is damaged" in shown.stderr and "Traceback" not in shown.stderr)


def timeout_grace(tmp: Path) -> Outcome:
    scenario = _scenario(
        tmp, "trap 'echo cleaned > done.txt; exit 1' TERM; sleep 30 & wait; echo {x}", budget=1, timeout=0.5
    )
    subprocess.run(
        _bayestune("optimize", str(scenario), "--journal", "t.db", "--no-progress"),
        cwd=tmp,
        capture_output=True,
        timeout=60,
    )
    done = tmp / "done.txt"
    return Outcome(
        done.exists() and done.read_text().strip() == "cleaned" and _rows(tmp / "t.db", "failure_kind = 'timeout'") == 1
    )


def every_evaluation_fails(tmp: Path) -> Outcome:
    scenario = _scenario(tmp, "echo 'ld: cannot find -lfoo' >&2; exit 1 #{x}", budget=40)
    done = subprocess.run(
        _bayestune("optimize", str(scenario), "--journal", "f.db", "--no-progress"),
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
    )
    spent = _rows(tmp / "f.db")
    return Outcome(
        done.returncode == 3 and spent == 10 and "cannot find -lfoo" in done.stderr,
        note=f"spent {spent} of 40" if spent != 10 else "",
    )


def stdout_flood(tmp: Path) -> Outcome:
    scenario = _scenario(tmp, "head -c 100000000 /dev/zero | tr '\\0' 'x'; echo; echo {x}", budget=1, timeout=60)
    code = (
        "import resource, subprocess, sys; "
        f"r = subprocess.run({_bayestune('optimize', str(scenario), '--journal', 'flood.db', '--no-progress')!r}); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp, capture_output=True, text=True, timeout=180)
    peak_mb = int(done.stdout.strip().splitlines()[-1]) / 1024 if done.stdout.strip() else float("nan")
    ok = _rows(tmp / "flood.db", "status = 'ok'") if (tmp / "flood.db").exists() else 0
    return Outcome(ok == 1 and peak_mb < 300, lost=1 - ok, note=f"peak RSS {peak_mb:.0f} MB")


def _refused(tmp: Path, name: str, text: str, *, seconds: float = 30) -> str:
    """'' when ``bayestune validate`` refuses the file with exit 2 and no traceback in time, else why not."""
    (tmp / name).write_text(text)
    try:
        done = subprocess.run(_bayestune("validate", name), cwd=tmp, capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        return f"{name}: no answer in {seconds:.0f} s"
    if done.returncode != 2 or "Traceback" in done.stderr:
        return f"{name}: exit {done.returncode}{' with a traceback' if 'Traceback' in done.stderr else ''}"
    return ""


def hostile_scenario_files(tmp: Path) -> Outcome:
    yaml_bomb = 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
        f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)
    )
    deep = "[" * 5000 + "]" * 5000
    t1 = {
        "General": {"BenchmarkName": "t"},
        "ConfigurationSpace": {"Conditions": [], "TuningParameters": [{"Name": "x", "Type": "int", "Values": None}]},
    }
    binop, bomb = json.loads(json.dumps(t1)), json.loads(json.dumps(t1))
    binop["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "+".join(["1"] * 20000)
    bomb["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "sum([[1]*999999 for i in range(500)], [])"
    huge_memory = dict(_SCENARIO, budget=1, blackbox={"command": "echo {x}", "memory_limit_mb": 1e30})
    problems = [
        _refused(tmp, "bomb.yaml", yaml_bomb),
        _refused(tmp, "deep.json", deep),
        _refused(tmp, "t1_binop.json", json.dumps(binop)),
        _refused(tmp, "t1_bomb.json", json.dumps(bomb)),
        _refused(tmp, "memory.json", json.dumps(huge_memory)),
    ]
    perm = dict(
        _SCENARIO,
        budget=1,
        parameters=[{"name": "p", "type": "permutation", "n": 22}],
        blackbox={"command": "echo 1 #{p}"},
    )
    (tmp / "perm.json").write_text(json.dumps(perm))
    done = subprocess.run(_bayestune("validate", "perm.json"), cwd=tmp, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        problems.append(f"permutation of 22: exit {done.returncode}")
    problems = [p for p in problems if p]
    return Outcome(not problems, note="; ".join(problems))


def validate_catches_setup_errors(tmp: Path) -> Outcome:
    missing = _scenario(tmp, "/no/such/program {x}", budget=1)
    first = subprocess.run(_bayestune("validate", str(missing)), cwd=tmp, capture_output=True, text=True, timeout=60)
    data = dict(
        _SCENARIO, budget=1, strategy="bo", strategy_options={"aquisition": "ei"}, blackbox={"command": "echo {x}"}
    )
    (tmp / "opt.json").write_text(json.dumps(data))
    second = subprocess.run(_bayestune("validate", "opt.json"), cwd=tmp, capture_output=True, text=True, timeout=60)
    problems = [
        f"{what}: exit {done.returncode}"
        for what, done in (("missing program", first), ("misspelled strategy option", second))
        if done.returncode != 2
    ]
    return Outcome(not problems, note="; ".join(problems))


def show_into_a_closed_pipe(tmp: Path) -> Outcome:
    scenario = _scenario(tmp, "echo runtime: {x}", budget=30)
    subprocess.run(
        _bayestune("optimize", str(scenario), "--journal", "h.db", "--no-progress"),
        cwd=tmp,
        capture_output=True,
        timeout=120,
    )
    cmd = " ".join(f"'{a}'" for a in _bayestune("show", "h.db", "--all")) + " | head -n 2"
    done = subprocess.run(["bash", "-c", cmd], cwd=tmp, capture_output=True, text=True, timeout=60)
    return Outcome(
        "BrokenPipe" not in done.stderr and "Traceback" not in done.stderr,
        note="error text on a closed pipe" if done.stderr.strip() else "",
    )


def backup_while_running(tmp: Path) -> Outcome:
    scenario = _scenario(tmp, "sleep 0.2; echo runtime: {x}", budget=30)
    proc = _start(tmp, "optimize", str(scenario), "--journal", "live.db", "--no-progress")
    if not _wait_rows(proc, tmp / "live.db", 5):
        proc.kill()
        return Outcome(False, note="the run did not get going")
    done = subprocess.run(
        _bayestune("backup", "live.db", "copy.db"), cwd=tmp, capture_output=True, text=True, timeout=60
    )
    copied = _finished(tmp / "copy.db") if done.returncode == 0 else 0
    proc.wait(120)
    return Outcome(
        done.returncode == 0 and copied >= 5 and proc.returncode == 0 and _finished(tmp / "live.db") == 30,
        note="" if copied >= 5 else f"the copy holds {copied} finished evaluations",
    )


def _dask_scheduler(tmp: Path, offset: int) -> tuple[str, subprocess.Popen]:
    port = 20000 + (os.getpid() + offset) % 20000
    return f"tcp://127.0.0.1:{port}", subprocess.Popen(
        ["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp,
    )


def _dask_worker(tmp: Path, address: str) -> subprocess.Popen:
    return subprocess.Popen(
        ["dask", "worker", address, "--nworkers", "1", "--nthreads", "2", "--dashboard-address", ":0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp,
    )


def _dask_run(tmp: Path, address: str) -> tuple[Path, subprocess.Popen | None]:
    """A run of 30 evaluations on the cluster, once 3 are done (None if it did not get going)."""
    scenario = _scenario(tmp, "sleep 0.3; echo runtime: {x}", budget=30)
    proc = _start(tmp, "optimize", str(scenario), "--journal", "dask.db", "--no-progress", "--dask", address)
    if not _wait_rows(proc, tmp / "dask.db", 3, timeout=90):
        proc.kill()
        return scenario, None
    return scenario, proc


def dask_scheduler_lost(tmp: Path) -> Outcome:
    if shutil.which("dask") is None:
        return Outcome(False, note="dask is not installed")
    return _on_dask(tmp, 0, _lose_the_scheduler)


def _on_dask(tmp: Path, offset: int, fault: Callable[..., Outcome]) -> Outcome:
    """``fault(tmp, cluster, scenario, proc)`` on a run going on a fresh local Dask cluster; the
    cluster (``address``, ``scheduler``, ``worker``: a fault may replace the worker) is stopped after."""
    address, scheduler = _dask_scheduler(tmp, offset)
    cluster = {"address": address, "scheduler": scheduler, "worker": _dask_worker(tmp, address)}
    try:
        scenario, proc = _dask_run(tmp, address)
        if proc is None:
            return Outcome(False, note="the run did not get going on the cluster")
        return fault(tmp, cluster, scenario, proc)
    finally:
        for p in (cluster["worker"], scheduler):
            p.kill()
            p.wait(30)


def _lose_the_scheduler(tmp: Path, cluster: dict, scenario: Path, proc: subprocess.Popen) -> Outcome:
    cluster["scheduler"].kill()
    try:
        _, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        return Outcome(False, note="the run hung after the scheduler was lost")
    resumed = subprocess.run(
        _bayestune("optimize", str(scenario), "--journal", "dask.db", "--resume", "--no-progress"),
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=180,
    )
    finished = _finished(tmp / "dask.db")
    clean = (
        proc.returncode not in (0, None)
        and "Traceback" not in err
        and "scheduler" in err
        and resumed.returncode == 0
        and finished == 30
    )
    return Outcome(
        clean,
        lost=max(0, 30 - finished),
        note="" if clean else f"exit {proc.returncode}: {err.strip().splitlines()[-1:]}, resumed to {finished} of 30",
    )
