"""Fault injection: replays the reliability defects found by hostile use against real ``bayestune`` processes.

Each fault is injected ``--trials`` times (process-level faults) and judged by what a user
would check afterwards: the journal, the exit code, the processes left running. Prints a table
of trials, clean outcomes, failures (not clean) and evaluations lost.

    python -m benchmarks.fault_injection --trials 5
    python -m benchmarks.fault_injection --quick          # one trial each (what the tests run)
    python -m benchmarks.fault_injection --only "1 " "2 " # rows by name (issue 29: rows numbered 1-12)

Run from the project root; set ``PYTHONPATH=$PWD/src`` to test a working tree.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


# ---- the faults ------------------------------------------------------------------------------
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


# ---- hostile inputs, round three (issue 29): one row per item -------------------------------
def _cli(tmp: Path, *args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess | None, int]:
    """``bayestune ARGS`` in ``tmp``: the finished process (None if it hung) and its traceback count."""
    try:
        done = subprocess.run(_bayestune(*args), cwd=tmp, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, 0
    return done, done.stderr.count("Traceback")


def _refusals(tmp: Path, files: dict[str, str], seconds: float = 30) -> Outcome:
    """Every file refused by ``validate`` (exit 2), counted as tracebacks and hangs."""
    tracebacks = hangs = accepted = 0
    for name, text in files.items():
        (tmp / name).write_text(text)
        done, tb = _cli(tmp, "validate", name, timeout=seconds)
        hangs += done is None
        tracebacks += tb
        accepted += done is not None and done.returncode != 2
    return Outcome(
        accepted == 0,
        tracebacks=tracebacks,
        hangs=hangs,
        note=f"{accepted} of {len(files)} accepted" if accepted else "",
    )


def self_referencing_yaml(tmp: Path) -> Outcome:
    return _refusals(
        tmp,
        {
            "c.yaml": "&a [*a]\n",
            "d.yaml": "a: &a {b: *a}\n",
            "e.yaml": "&a [1, [2, *a]]\n",
            "f.yaml": "&a {k: [*a, *a]}\n",
        },
        seconds=20,
    )


HOSTILE_NAME = "t*\\\r/\r#define Q 1\r/*"


def names_into_exports(tmp: Path) -> Outcome:
    data = dict(_SCENARIO, budget=2, objectives=[HOSTILE_NAME], blackbox={"command": "echo {x}"})
    (tmp / "n.json").write_text(json.dumps(data))
    journal = "evil\r#define R 1\r.db"  # the journal path reaches the header too
    done, tracebacks = _cli(tmp, "optimize", "n.json", "--journal", journal, "--no-progress")
    if done is None or done.returncode != 0:
        return Outcome(False, tracebacks=tracebacks, hangs=done is None, note="the run did not finish")
    injections = 0
    header, tb = _cli(tmp, "export", journal, "--format", "c-header", "-o", "t.h")
    tracebacks += tb
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc and header is not None and header.returncode == 0:
        (tmp / "m.c").write_text(
            '#include "t.h"\nint main(void) {\n#if defined(Q) || defined(R)\n  return 1;\n'
            "#else\n  return 0;\n#endif\n}\n"
        )
        built = subprocess.run(
            [cc, "-std=c99", "-Wall", "-Werror", "-o", str(tmp / "m"), str(tmp / "m.c")], capture_output=True, text=True
        )
        injections += built.returncode != 0 or subprocess.run([str(tmp / "m")]).returncode != 0
    module, tb = _cli(tmp, "export", journal, "--format", "python", "-o", "t.py")
    tracebacks += tb
    if module is not None and module.returncode == 0:
        ran = subprocess.run(
            [sys.executable, "-c", f"import t; print(t.OBJECTIVES[0][0] == {HOSTILE_NAME!r})"],
            cwd=tmp,
            capture_output=True,
            text=True,
        )
        injections += ran.stdout.strip() != "True"
    return Outcome(
        header is not None and module is not None and header.returncode == module.returncode == 0,
        tracebacks=tracebacks,
        injections=injections,
        note="" if cc else "no C compiler: header not compiled",
    )


def values_into_shells(tmp: Path) -> Outcome:
    templates = [
        "cat <<EOF\n{c}\nEOF",
        "python3 - <<EOF\nprint({c!r})\nEOF",
        "echo \\{c}",
        "echo `echo {c}`",
        "eval echo {c}",
        "echo runtime: $(( {c} + 1 ))",
        "echo 1 # {c}",
    ]
    values = ["a", "$(touch X1)", "`touch X2`", "a'$(touch X3)'", "x ; touch X4 ; #", "1\ntouch X5", "a[$(touch X6)]"]
    accepted = tracebacks = 0
    for i, template in enumerate(templates):
        data = dict(
            _SCENARIO,
            budget=len(values),
            initial_design={"size": len(values)},
            strategy="random",
            parameters=[{"name": "c", "type": "categorical", "values": values}],
            blackbox={"command": template + "; echo runtime: 1"},
        )
        (tmp / f"s{i}.json").write_text(json.dumps(data))
        done, tb = _cli(tmp, "optimize", f"s{i}.json", "--journal", f"s{i}.db", "--no-progress")
        tracebacks += tb
        accepted += done is not None and done.returncode == 0
    injections = len(list(tmp.glob("X*")))
    return Outcome(
        True,
        tracebacks=tracebacks,
        injections=injections,
        note=f"{accepted} of {len(templates)} templates ran (arithmetic and comments take inert values only)",
    )


def symlinked_journal_beside_a_live_run(tmp: Path) -> Outcome:
    budget = 20
    scenario = _scenario(tmp, "sleep 0.3; echo runtime: $(( {x} + {y} ))", budget=budget)
    first = _start(tmp, "optimize", str(scenario), "--journal", "j.db", "--no-progress")
    if not _wait_rows(first, tmp / "j.db", 2):
        first.kill()
        return Outcome(False, note="run did not start")
    (tmp / "alias.db").symlink_to("j.db")
    (tmp / "dir").symlink_to(tmp)
    refused = 0
    for alias in ("alias.db", "dir/j.db", str(tmp / "dir" / "alias.db")):
        done, _ = _cli(tmp, "optimize", str(scenario), "--journal", alias, "--resume", "--no-progress")
        refused += done is not None and done.returncode == 2 and "is in use by" in done.stderr
    first.communicate(timeout=120)
    ok = _rows(tmp / "j.db", "status = 'ok'")
    return Outcome(
        refused == 3 and first.returncode == 0 and _rows(tmp / "j.db") == budget,
        lost=budget - ok,
        note="" if refused == 3 else f"{3 - refused} of 3 aliases not refused",
    )


def lock_file_planted_as_a_link(tmp: Path) -> Outcome:
    scenario = _scenario(tmp, "echo runtime: {x}", budget=2)
    victim = tmp / "victim.txt"
    victim.write_text("precious")
    (tmp / "j.db.lock").symlink_to(victim)
    done, tracebacks = _cli(tmp, "optimize", str(scenario), "--journal", "j.db", "--no-progress")
    intact = victim.read_text() == "precious"
    refused = done is not None and done.returncode == 2 and "symbolic link" in done.stderr
    return Outcome(
        refused,
        tracebacks=tracebacks,
        injections=0 if intact else 1,
        note="" if intact else "the link's target was truncated",
    )


_DAMAGE_DRIVER = r"""
import json, shutil, sqlite3, sys, traceback
from pathlib import Path
from click.testing import CliRunner
from bayestune.cli import cli
base, scenario = Path(sys.argv[1]), sys.argv[2]
cells = ["config", "status", "values", "error", "started_at", "finished_at", "batch", "attempt", "origin",
         "repeats", "timings"]
values = [None, "", "x", 5, 1.5, b"\xff\x00", "[]", "{}", "[1]", '"s"', "[" * 3000, '{"runtime": NaN}',
          '{"runtime": Infinity}', '{"runtime": null}', '{"x": "a"}', "ok", 2**62]
meta = [("objectives", "5"), ("objectives", '"s"'), ("objectives", '[{"name": 5}]'), ("seed", '"s"'), ("seed", "{}"),
        ("strategy", "{}"), ("strategy_options", "5"), ("design", '{"a": 1}'), ("bayestune_version", ""), ("space", "[")]
variants = [("trials", c, v) for c in cells for v in values] + [("meta", k, v) for k, v in meta]
commands = [["show", "{j}"], ["export", "{j}", "--format", "c-header"], ["export", "{j}", "--format", "json"],
            ["optimize", scenario, "--journal", "{j}", "--resume", "--no-progress", "--budget", "6"]]
runs = tracebacks = 0
for i, (kind, key, value) in enumerate(variants):
    for command in commands:
        path = base.with_name(f"v{i}-{len(command)}-{command[0]}.db")
        shutil.copy(base, path)
        conn = sqlite3.connect(path)
        try:
            if kind == "trials":
                conn.execute(f'UPDATE trials SET "{key}" = ? WHERE trial_id = 2', (value,))
            else:
                conn.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
            conn.commit()
        except sqlite3.Error:
            continue
        finally:
            conn.close()
        result = CliRunner().invoke(cli, [a.replace("{j}", str(path)) for a in command])
        runs += 1
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            tracebacks += 1
            print("".join(traceback.format_exception(result.exception)).splitlines()[-1], file=sys.stderr)
print(json.dumps({"variants": len(variants), "runs": runs, "tracebacks": tracebacks}))
"""


def damaged_journals(tmp: Path) -> Outcome:
    scenario = _scenario(tmp, "echo runtime: {x}", budget=4)
    done, _ = _cli(tmp, "optimize", str(scenario), "--journal", "base.db", "--no-progress")
    if done is None or done.returncode != 0:
        return Outcome(False, note="the base run failed")
    ran = subprocess.run(
        [sys.executable, "-c", _DAMAGE_DRIVER, str(tmp / "base.db"), str(scenario)],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=900,
    )
    try:
        counts = json.loads(ran.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Outcome(False, tracebacks=1, note=ran.stderr.strip()[-200:])
    return Outcome(
        counts["tracebacks"] == 0,
        tracebacks=counts["tracebacks"],
        note=f"{counts['variants']} damaged variants, {counts['runs']} command runs (show, export, "
        "resume); NaN/inf in an ok row resumes",
    )


def stdout_on_disk(tmp: Path) -> Outcome:
    probe = (
        "head -c 500000000 /dev/zero; sleep 0.3; echo; "
        "echo \"disk_mb: $(( $(stat -L -c '%b*%B' /proc/$$/fd/1) / 1000000 ))\"; echo runtime: {x}"
    )
    data = dict(_SCENARIO, budget=1, blackbox={"command": probe, "timeout": 120, "options": {"max_output_mb": 1}})
    (tmp / "o.json").write_text(json.dumps(data))
    done, tracebacks = _cli(tmp, "optimize", "o.json", "--journal", "o.db", "--no-progress", timeout=180)
    rows = (
        sqlite3.connect(tmp / "o.db").execute("SELECT \"values\" FROM trials WHERE status = 'ok'").fetchall()
        if (tmp / "o.db").exists()
        else []
    )
    disk = json.loads(rows[0][0]).get("disk_mb") if rows else None
    return Outcome(
        disk is not None and disk < 20,
        lost=1 - len(rows),
        tracebacks=tracebacks,
        hangs=done is None,
        note=f"500 MB of stdout took {disk} MB on disk" if disk is not None else "no result",
    )


def journal_on_read_only_storage(tmp: Path) -> Outcome:
    src, mnt = tmp / "src", tmp / "ro"
    src.mkdir()
    mnt.mkdir()
    scenario = _scenario(tmp, "echo runtime: {x}", budget=3)
    _cli(tmp, "optimize", str(scenario), "--journal", str(src / "run.db"), "--no-progress")
    mounted = (
        subprocess.run(
            f"mount --bind {src} {mnt} && mount -o remount,ro,bind {mnt}", shell=True, capture_output=True
        ).returncode
        == 0
    )
    if not mounted:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        return Outcome(True, note="skipped: no rights to make a read-only mount")
    try:
        failed, tracebacks = [], 0
        for args in (
            ["show", "ro/run.db"],
            ["export", "ro/run.db", "--format", "json"],
            ["report", "ro/run.db", "-o", "r.html"],
            ["backup", "ro/run.db", "copy.db"],
        ):
            done, tb = _cli(tmp, *args)
            tracebacks += tb
            if done is None or done.returncode != 0:
                failed.append(args[0])
        return Outcome(not failed, tracebacks=tracebacks, note=f"failed: {failed}" if failed else "")
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def dask_workers_gone(tmp: Path) -> Outcome:
    if shutil.which("dask") is None:
        return Outcome(True, note="skipped: dask is not installed")
    return _on_dask(tmp, 7, _lose_every_worker)


def _lose_every_worker(tmp: Path, cluster: dict, scenario: Path, proc: subprocess.Popen) -> Outcome:
    address = cluster["address"]
    cluster["worker"].kill()
    cluster["worker"].wait(30)
    said = _stderr_says(proc, "no worker is connected", 30)
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        return Outcome(False, hangs=1, note="Ctrl-C did not stop the waiting run")
    cluster["worker"] = _dask_worker(tmp, address)
    resumed, tracebacks = _cli(
        tmp,
        "optimize",
        str(scenario),
        "--journal",
        "dask.db",
        "--resume",
        "--no-progress",
        "--dask",
        address,
        timeout=180,
    )
    finished = _finished(tmp / "dask.db")
    return Outcome(
        said and resumed is not None and resumed.returncode == 0 and finished == 30,
        lost=max(0, 30 - finished),
        tracebacks=tracebacks,
        hangs=not said,
        note="" if said else "no line within 30 s of losing the last worker",
    )


def _stderr_says(proc: subprocess.Popen, text: str, seconds: float) -> bool:
    """Whether ``proc`` writes ``text`` on stderr within ``seconds`` (read line by line, non-blocking)."""
    import selectors

    selector = selectors.DefaultSelector()
    selector.register(proc.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if selector.select(timeout=0.5) and text in proc.stderr.readline():
            return True
    return False


def dashboard_hostile_clients(tmp: Path) -> Outcome:
    import http.client
    import socket

    scenario = _scenario(tmp, "echo runtime: {x}", budget=20)
    _cli(tmp, "optimize", str(scenario), "--journal", "d.db", "--no-progress")
    port = 20000 + (os.getpid() + 13) % 20000
    server = subprocess.Popen(
        _bayestune("dashboard", "d.db", "--port", str(port)),
        cwd=tmp,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(3)
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
        time.sleep(1)
        threads = len(os.listdir(f"/proc/{server.pid}/task"))
        for s in idle:
            s.close()
        for _ in range(20):  # clients that hang up before the answer
            s = socket.create_connection(("127.0.0.1", port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.sendall(b"GET /api/state HTTP/1.1\r\nHost: localhost\r\n\r\n")
            s.close()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.putrequest("GET", "/api/state", skip_host=True)
        conn.putheader("Host", "rebound.example")
        conn.endheaders()
        rebinding = conn.getresponse().status
        conn.close()
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=30)
    tracebacks = err.count("Traceback")
    clean = threads <= 40 and rebinding == 421
    return Outcome(
        clean,
        tracebacks=tracebacks,
        injections=rebinding == 200,
        note=f"{threads} threads for 300 idle connections; a foreign Host got {rebinding}",
    )


def sizes(tmp: Path) -> Outcome:
    def scenario(parameter: dict) -> str:
        return json.dumps(
            dict(
                _SCENARIO,
                budget=2,
                parameters=[parameter],
                blackbox={"command": f"echo runtime: 1 #{{{parameter['name']}}}"},
            )
        )

    return _refusals(
        tmp,
        {
            "int64.json": scenario({"name": "x", "type": "integer", "bounds": [0, 10**20]}),
            "digits.json": scenario({"name": "x", "type": "integer", "bounds": [0, 10**3999]}),
            "real.json": scenario({"name": "x", "type": "real", "bounds": [-1e308, 1e308]}),
            "perm6.json": scenario({"name": "p", "type": "permutation", "n": 10**6}),
            "perm12.json": scenario({"name": "p", "type": "permutation", "n": 10**12}),
        },
        seconds=30,
    )


def odd_lock_backup_supervisor(tmp: Path) -> Outcome:
    notes, tracebacks = [], 0
    scenario = _scenario(tmp, "echo runtime: {x}", budget=2)
    (tmp / "j.db.lock").write_bytes(b"\xff\xfe\x00 not UTF-8")
    done, tb = _cli(tmp, "optimize", str(scenario), "--journal", "j.db", "--no-progress")
    tracebacks += tb
    if done is None or done.returncode != 0:
        notes.append("a non-UTF-8 stale lock blocked the run")
    done, tb = _cli(tmp, "backup", "j.db", "missing/dir/copy.db")
    tracebacks += tb
    if done is None or done.returncode != 2 or "directory does not exist" not in done.stderr:
        notes.append("backup to a missing directory not refused by name")
    (tmp / "notes.txt").write_text("not a journal")
    done, tb = _cli(tmp, "optimize", str(scenario), "--journal", "notes.txt", "--resume", "--no-progress")
    tracebacks += tb
    if (tmp / "notes.txt.lock").exists() or done is None or done.returncode != 2:
        notes.append("a refused --journal target left its .lock file")
    survivors = _supervisor_killed(tmp)
    if survivors:
        notes.append(f"{survivors} setsid descendant(s) of a killed supervisor survived")
    return Outcome(not notes, tracebacks=tracebacks, note="; ".join(notes))


def _supervisor_killed(tmp: Path) -> int:
    scenario = _scenario(tmp, "setsid sleep 60 & echo $! >> escaped.txt; sleep 60; echo {x}", budget=1, timeout=120)
    proc = _start(tmp, "optimize", str(scenario), "--journal", "sv.db", "--no-progress")
    escaped = tmp / "escaped.txt"
    _wait_for_text(escaped, 30)
    supervisors = [
        int(p) for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    ]
    for pid in supervisors:
        os.kill(pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    pids, survivors = _survivors(escaped)
    return len(survivors) if pids and supervisors else 1


HOSTILE_FAULTS: dict[str, tuple[Callable[[Path], Outcome], bool]] = {
    "1 self-referencing YAML (4 forms)": (self_referencing_yaml, False),
    "2 names into the C header / Python module": (names_into_exports, False),
    "3 values into here-documents, after a backslash, eval (7 templates x 7 values)": (values_into_shells, False),
    "4 --resume through a symlinked journal beside a live run": (symlinked_journal_beside_a_live_run, False),
    "5 lock file planted as a link to a victim": (lock_file_planted_as_a_link, False),
    "6 damage in journal cells and metadata x show/export/resume": (damaged_journals, False),
    "7 500 MB of stdout on disk": (stdout_on_disk, False),
    "8 journal on read-only storage": (journal_on_read_only_storage, False),
    "9 every Dask worker gone": (dask_workers_gone, False),
    "10 dashboard: 300 idle, hang-ups, foreign Host": (dashboard_hostile_clients, False),
    "11 sizes: int64, 4,000 digits, real span, permutations": (sizes, False),
    "12 non-UTF-8 lock, backup to a missing dir, refused target, killed supervisor": (
        odd_lock_backup_supervisor,
        False,
    ),
}


FAULTS: dict[str, tuple[Callable[[Path], Outcome], bool]] = {
    # name: (injector, repeat it --trials times (process-level, timing-dependent) or once)
    "kill -9 mid-run, then --resume": (kill9_then_resume, True),
    "second optimizer --resume on a live journal": (second_writer_resume, True),
    "second optimizer --force on a live journal": (second_writer_force, True),
    "kill -9 while a command runs (orphans)": (orphan_after_kill9, True),
    "background job holding stdout": (background_job_holds_stdout, True),
    "setsid grandchild at a timeout": (setsid_grandchild_at_timeout, True),
    "ambiguous output lines (5 forms)": (ambiguous_output, False),
    "quoted placeholder injection": (quoted_placeholder, False),
    "damaged journal row": (damaged_row, False),
    "timeout: SIGTERM before SIGKILL": (timeout_grace, False),
    "every evaluation fails": (every_evaluation_fails, False),
    "100 MB of stdout": (stdout_flood, False),
    "Dask scheduler lost, then --resume": (dask_scheduler_lost, True),
    "hostile scenario files (6 forms)": (hostile_scenario_files, False),
    "validate: missing program, misspelled option": (validate_catches_setup_errors, False),
    "show piped into head": (show_into_a_closed_pipe, False),
    "backup of a running journal": (backup_while_running, False),
    **HOSTILE_FAULTS,
}


def run_faults(trials: int, only: list[str] | None = None) -> list[Row]:
    rows = []
    for name, (inject, repeat) in FAULTS.items():
        if only and not any(o in name for o in only):
            continue
        row = Row(name)
        for _ in range(trials if repeat else 1):
            tmp = Path(tempfile.mkdtemp(prefix="bt-fault-"))
            try:
                outcome = inject(tmp)
            except Exception as exc:  # noqa: BLE001 - a crashed injector is a failure of the row
                outcome = Outcome(False, note=f"{type(exc).__name__}: {exc}")
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            row.trials += 1
            row.clean += outcome.clean and not (outcome.tracebacks or outcome.hangs or outcome.injections)
            row.lost += outcome.lost
            row.tracebacks += outcome.tracebacks
            row.hangs += outcome.hangs
            row.injections += outcome.injections
            if outcome.note and outcome.note not in row.notes:
                row.notes = f"{row.notes}; {outcome.note}" if row.notes else outcome.note
        rows.append(row)
    return rows


def table(rows: list[Row]) -> str:
    out = [
        "| fault | trials | clean | failures | tracebacks | hangs | injections | evaluations lost | notes |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    out += [
        f"| {r.fault} | {r.trials} | {r.clean} | {r.failures} | {r.tracebacks} | {r.hangs} | {r.injections} | "
        f"{r.lost} | {r.notes} |"
        for r in rows
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="repeats of each process-level fault")
    parser.add_argument("--quick", action="store_true", help="one trial of each fault")
    parser.add_argument("--only", nargs="*", help="faults whose name contains one of these words")
    args = parser.parse_args(argv)
    start = time.monotonic()
    rows = run_faults(1 if args.quick else args.trials, args.only)
    print(table(rows))
    print(
        f"\n{sum(r.trials for r in rows)} injections, {sum(r.failures for r in rows)} not clean, "
        f"{sum(r.tracebacks for r in rows)} tracebacks, {sum(r.hangs for r in rows)} hangs, "
        f"{sum(r.injections for r in rows)} code injections, "
        f"{sum(r.lost for r in rows)} evaluations lost; {time.monotonic() - start:.0f} s"
    )
    return 0 if all(r.failures == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
