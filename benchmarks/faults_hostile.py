"""Hostile inputs, round three (issue 29): one injector per item, rows 1-12 of
``benchmarks/fault_injection.py``."""

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
    _rows,
    _scenario,
    _start,
    _wait_rows,
)
from benchmarks.faults_process import (
    _dask_worker,
    _on_dask,
    _survivors,
    _wait_for_text,
)


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
