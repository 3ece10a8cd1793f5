"""What every ``bayestune`` command shares: the one-line error, the exit codes, the ``--debug``
and ``--scenario`` options, the text table, and the loaders.

The bottom of the ``cli`` package: the command modules import it, it imports none of them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import click

from bayestune.formatting import display

#: Exit code of a run stopped by Ctrl-C / SIGTERM (the shell convention for SIGINT).
EXIT_INTERRUPTED = 130
#: Exit code of an error on purpose (bad scenario, journal conflict, ...), like click's usage errors.
EXIT_ERROR = 2
#: Exit code of a run in which every evaluation failed (a broken black box, not a bad scenario).
EXIT_ALL_FAILED = 3
#: Where ``--debug`` leaves its mark in the click context (tracebacks instead of one line).
DEBUG_KEY = "bayestune.debug"
#: The ``bayestune`` logger's level before the command, restored when it ends.
LEVEL_KEY = "bayestune.log_level"


class CliError(click.ClickException):
    """Printed as one ``error: ...`` line; exit code 2."""

    exit_code = EXIT_ERROR

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def _set_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[DEBUG_KEY] = True
        log = logging.getLogger("bayestune")
        ctx.meta.setdefault(LEVEL_KEY, log.level)
        log.setLevel(logging.DEBUG)


def debug_option(fn: Any) -> Any:
    """``--debug``, accepted before or after the command's name."""
    return click.option(
        "--debug",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_debug,
        help="Show tracebacks and debug messages.",
    )(fn)


def scenario_space_option(fn: Any) -> Any:
    """``--scenario``: the search space of a journal's command (``plot``, ``report``, ``dag``)."""
    return click.option(
        "--scenario",
        "scenario_path",
        type=click.Path(dir_okay=False),
        help="Scenario whose search space to use (default: the space stored in the journal, else inferred).",
    )(fn)


def load(path: str) -> Any:
    """The scenario file at ``path``."""
    from bayestune.scenario import load_scenario

    return load_scenario(path)


def run_space(scenario_path: str | None) -> Any:
    """The search space of --scenario, else None (the journal's stored or inferred space)."""
    return load(scenario_path).space if scenario_path else None


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Aligned text table; columns whose cells all look numeric are right-aligned."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    numeric = [bool(rows) and all(_looks_numeric(r[i]) for r in rows) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text == ""
    return True


def winner_line(outcome: Any) -> str:
    """``confirmed winner: trial 7, time = 1.02 [0.99, 1.05] (95% CI, median of 6 rounds)``, then the
    baseline's line and the speedup's when the confirmation had a baseline."""
    winner = outcome.winner
    if winner is None:
        return "confirmed winner: none (every candidate failed a re-measurement)"
    text = f"confirmed winner: trial {winner.trial_id}, {outcome.objective} = {_with_interval(winner, outcome)}"
    base = outcome.baseline
    if base is not None and math.isfinite(base.value):
        text += f"\nbaseline: trial {base.trial_id}, {outcome.objective} = {_with_interval(base, outcome)}"
        if outcome.speedup is not None and math.isfinite(outcome.speedup[0]):
            value, low, high = outcome.speedup
            bounded = math.isfinite(low) and math.isfinite(high)
            text += f"\nspeedup over the baseline: {display(value)}x" + (
                f" [{display(low)}, {display(high)}] ({outcome.confidence:.0%} CI, paired rounds)"
                if bounded
                else " (its interval needs two paired rounds)"
            )
    return text


def _with_interval(estimate: Any, outcome: Any) -> str:
    bounded = math.isfinite(estimate.low) and math.isfinite(estimate.high)
    interval = (
        f"[{display(estimate.low)}, {display(estimate.high)}] ({outcome.confidence:.0%} CI"
        if bounded
        else "(interval needs more rounds"
    )
    return f"{display(estimate.value)} {interval}, {outcome.statistic} of {len(estimate.samples)} round(s))"
