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
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.fault_tools import Outcome, Row
from benchmarks.faults_hostile import HOSTILE_FAULTS
from benchmarks.faults_process import (
    ambiguous_output,
    background_job_holds_stdout,
    backup_while_running,
    daemon_after_kill9_of_both,
    damaged_row,
    dask_scheduler_lost,
    every_evaluation_fails,
    hostile_scenario_files,
    kill9_then_resume,
    orphan_after_kill9,
    quoted_placeholder,
    second_writer_force,
    second_writer_resume,
    setsid_grandchild_at_timeout,
    show_into_a_closed_pipe,
    stdout_flood,
    timeout_grace,
    validate_catches_setup_errors,
)
from benchmarks.faults_round4 import ROUND4_FAULTS

FAULTS: dict[str, tuple[Callable[[Path], Outcome], bool]] = {
    # name: (injector, repeat it --trials times (process-level, timing-dependent) or once)
    "kill -9 mid-run, then --resume": (kill9_then_resume, True),
    "second optimizer --resume on a live journal": (second_writer_resume, True),
    "second optimizer --force on a live journal": (second_writer_force, True),
    "kill -9 while a command runs (orphans)": (orphan_after_kill9, True),
    "background job holding stdout": (background_job_holds_stdout, True),
    "setsid grandchild at a timeout": (setsid_grandchild_at_timeout, True),
    "setsid daemon, kill -9 of optimizer and supervisor, then --resume": (daemon_after_kill9_of_both, True),
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
    **ROUND4_FAULTS,
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
