"""The ``bayestune`` command: optimize a scenario, inspect and export journals, check scenarios.

The commands only parse options, call the library and print: ``optimize`` is
:func:`bayestune.tuning.tune`, the same call Python users make. Errors raised on purpose
(:class:`~bayestune.exceptions.BayestuneError`) and file errors become one ``error: ...``
line on stderr and exit code 2; ``--debug`` shows the traceback instead.

This module is the group and the entry point; the commands live in :mod:`.run_commands`
(optimize, validate), :mod:`.inspect_commands` (show, backup, plot, report, dag) and
:mod:`.results` (export, compare, dashboard), over :mod:`._common`.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from typing import Any

import click

from bayestune._version import __version__
from bayestune.cli._common import (
    DEBUG_KEY,
    EXIT_ALL_FAILED,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    LEVEL_KEY,
    CliError,
    debug_option,
)
from bayestune.cli.inspect_commands import backup, dag, plot, report, show
from bayestune.cli.results import compare, dashboard, export
from bayestune.cli.run_commands import optimize, validate
from bayestune.cli.serve_command import serve
from bayestune.console import TqdmLogHandler
from bayestune.exceptions import BayestuneError
from bayestune.settings import ExperimentalOptionWarning, RenamedOptionWarning


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class _Group(click.Group):
    """Turns the library's errors into one ``error: ...`` line (unless ``--debug``)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # `bayestune show run.db | head`: click ends quietly (exit 1), no "error: Broken pipe"
        except KeyboardInterrupt:  # Ctrl-C while a command starts (the run itself says more): 130, one line
            click.echo("interrupted", err=True)
            raise SystemExit(EXIT_INTERRUPTED) from None
        except (BayestuneError, OSError) as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            raise CliError(_one_line(exc)) from exc


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bayestune")
@debug_option
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Bayesian optimization for autotuning compilers and computer systems.

    Start with `bayestune validate SCENARIO`, then `bayestune optimize SCENARIO`.
    """
    log = logging.getLogger("bayestune")
    previous_level = ctx.meta.setdefault(LEVEL_KEY, log.level)
    if not ctx.meta.get(DEBUG_KEY):
        log.setLevel(logging.WARNING)
    handler = TqdmLogHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    log.addHandler(handler)

    previous_show = warnings.showwarning

    def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
        """An option's warning is a note about the user's scenario, not about a source line."""
        if issubclass(category, (RenamedOptionWarning, ExperimentalOptionWarning)):
            click.echo(f"warning: {message}", err=True)
        else:
            previous_show(message, category, filename, lineno, file, line)

    warnings.showwarning = show_warning

    def restore() -> None:
        log.removeHandler(handler)
        log.setLevel(previous_level)
        warnings.showwarning = previous_show

    ctx.call_on_close(restore)


for _command in (optimize, validate, show, backup, plot, report, dag, export, compare, dashboard, serve):
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``bayestune``, ``python -m bayestune``)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="bayestune")


__all__ = ["EXIT_ALL_FAILED", "EXIT_ERROR", "EXIT_INTERRUPTED", "CliError", "cli", "main"]
