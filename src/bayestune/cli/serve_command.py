"""``bayestune serve``: HyperMapper 2.0 / BaCO's client-server mode (:mod:`bayestune.peer_server`).

stdout carries the protocol only, and the peers' clients never read stderr (a full pipe would
stall the run), so everything else the run says goes to the peer's log file (the scenario's
``log_file`` under its ``run_directory``; absent: ``hypermapper_logfile.log`` /
``baco_logfile.log``), as the peers' own client-server mode logs only to its file. The
redirection is at the file-descriptor level, so a library's stray ``print`` or a C extension's
message cannot reach the client either.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import IO

import click

from bayestune.cli._common import debug_option, load


@contextlib.contextmanager
def _descriptors_into(target: IO[str], *fds: int) -> Iterator[None]:
    """Point the descriptors ``fds`` (1: stdout, 2: stderr) at ``target`` for the block."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(fd) for fd in fds]
    try:
        for fd in fds:
            os.dup2(target.fileno(), fd)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        target.flush()
        for fd, old in zip(fds, saved):
            os.dup2(old, fd)
            os.close(old)


@click.command()
@click.argument("scenario_path", metavar="SCENARIO")
@click.option("--seed", type=int, default=None, help="Seed of the run (default: the scenario's).")
@click.option("--no-csv", "no_csv", is_flag=True, help="Do not write the peer's sample CSV.")
@click.option(
    "--log",
    "log_path",
    default=None,
    metavar="FILE",
    help="Where warnings and logs go (default: the file's log_file under its run_directory, as the peers place it).",
)
@debug_option
def serve(scenario_path: str, seed: int | None, no_csv: bool, log_path: str | None) -> None:
    """Speak HyperMapper's client-server protocol on stdin/stdout for SCENARIO."""
    from bayestune.peer_server import serve as run_server

    with tempfile.TemporaryFile("w+", encoding="utf-8") as early:  # what loading says, until the log is known
        try:
            with _descriptors_into(early, 2):
                scenario = load(scenario_path)
        except BaseException:
            early.seek(0)
            sys.stderr.write(early.read())  # a file that does not load: the person starting it reads why
            raise
        early.seek(0)
        said = early.read()
    samples = scenario.peer_samples
    log_path = log_path or (
        samples.log_path if samples is not None and samples.log_path else f"{scenario.name}_bayestune.log"
    )
    if os.path.dirname(log_path):
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    with open(log_path, "a", encoding="utf-8") as log, protocol:
        log.write(said)
        with _descriptors_into(log, 1, 2):
            run_server(scenario, sys.stdin, protocol, seed=seed, write_samples=not no_csv)
