"""``bayestune serve``: HyperMapper 2.0 / BaCO's client-server mode (:mod:`bayestune.peer_server`).

stdout carries the protocol only, and the peers' clients never read stderr (a full pipe would
stall the run), so everything else the run says goes to a log file, as the peers' own logs do.
"""

from __future__ import annotations

import contextlib
import logging
import sys

import click

from bayestune.cli._common import debug_option, load


@click.command()
@click.argument("scenario_path", metavar="SCENARIO")
@click.option("--seed", type=int, default=None, help="Seed of the run (default: the scenario's).")
@click.option("--no-csv", "no_csv", is_flag=True, help="Do not write the peer's sample CSV.")
@click.option("--log", "log_path", default=None, metavar="FILE",
              help="Where warnings and logs go (default: <application_name>_bayestune.log).")
@debug_option
def serve(scenario_path: str, seed: int | None, no_csv: bool, log_path: str | None) -> None:
    """Speak HyperMapper's client-server protocol on stdin/stdout for SCENARIO."""
    from bayestune.peer_server import serve as run_server

    scenario = load(scenario_path)
    log_path = log_path or f"{scenario.name}_bayestune.log"
    with open(log_path, "a", encoding="utf-8") as log, contextlib.redirect_stderr(log):
        handler = logging.StreamHandler(log)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s: %(message)s"))
        logging.getLogger("bayestune").addHandler(handler)
        try:
            run_server(scenario, sys.stdin, sys.stdout, seed=seed, write_samples=not no_csv)
        finally:
            logging.getLogger("bayestune").removeHandler(handler)
