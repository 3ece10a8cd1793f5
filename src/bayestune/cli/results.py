"""The commands that take runs' results out of their journals: ``export``, ``compare``, ``dashboard``.

Each command only parses its options, calls its library module and prints. Errors are
:class:`~bayestune.exceptions.BayestuneError`, which the ``bayestune`` group prints as one line.
"""

from __future__ import annotations

import math
from pathlib import Path

import click

from bayestune.cli._common import debug_option, table
from bayestune.exceptions import BayestuneError, JournalError
from bayestune.formatting import display
from bayestune.storage.sqlite_file import what_it_is

#: ``--format`` of ``export``: the evaluations in HyperMapper/BaCO CSV, or the tuned table's formats.
EXPORT_FORMATS = ("hypermapper", "json", "csv", "c-header", "python")


# ---- export ----------------------------------------------------------------------------------
@click.command("export")
@click.argument("paths", metavar="JOURNAL... [OUT.csv]", nargs=-1, required=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(EXPORT_FORMATS),
    default="hypermapper",
    show_default=True,
    help="hypermapper: every evaluation as HyperMapper/BaCO CSV (JOURNAL OUT.csv); the others: the best "
    "configuration(s), the Pareto set of a multi-objective run.",
)
@click.option(
    "-o", "--out", "out_path", type=click.Path(dir_okay=False), help="File to write (default: standard output)."
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    help="How many of the best configurations per journal (default 1; the whole Pareto set).",
)
@click.option(
    "--key",
    "keys",
    multiple=True,
    metavar="FIELD=VALUE[,FIELD=VALUE]",
    help="Key of the next journal in a lookup table, e.g. --key device=A100 A.db --key device=MI250X B.db.",
)
@click.option(
    "--key-meta",
    "key_meta",
    multiple=True,
    metavar="NAME",
    help="Key every journal by its run metadata NAME (repeatable).",
)
@click.option(
    "--name",
    default="tuned",
    show_default=True,
    help="Prefix of the C symbols (tuned_config, tuned_lookup, TUNED_COUNT).",
)
@click.option("--errors", is_flag=True, help="hypermapper: add an 'Error' column with the failed trials' errors.")
@debug_option
def export(
    paths: tuple[str, ...],
    fmt: str,
    out_path: str | None,
    top: int | None,
    keys: tuple[str, ...],
    key_meta: tuple[str, ...],
    name: str,
    errors: bool,
) -> None:
    """Write the best configuration(s) of JOURNAL for production (JSON, CSV, a C header, a Python module),
    or a lookup table keyed by device or input size from several journals; or every evaluation as CSV."""
    if fmt == "hypermapper":
        _export_evaluations(paths, out_path, errors)
        return
    from bayestune.export import read_table, render

    text = render(read_table(paths, keys=keys, key_meta=key_meta, top=top), fmt, name=name)
    if out_path is None:
        click.echo(text, nl=False)
        return
    Path(out_path).write_text(text, encoding="utf-8")
    click.echo(f"exported {fmt} to {out_path}", err=True)


def _export_evaluations(paths: tuple[str, ...], out_path: str | None, errors: bool) -> None:
    from bayestune import run as run_meta
    from bayestune.storage import Journal

    if out_path is None and len(paths) == 2:
        out_path, paths = paths[1], paths[:1]
    if len(paths) == 1 and out_path is None:
        raise click.UsageError(
            "missing OUT.csv: `bayestune export JOURNAL OUT.csv` writes every evaluation as HyperMapper/BaCO CSV; "
            "for the best configuration add --format json (or csv, c-header, python)"
        )
    if len(paths) != 1 or out_path is None:
        raise click.UsageError("--format hypermapper writes one journal: bayestune export JOURNAL OUT.csv")
    journal_path = paths[0]
    with Journal.open(journal_path, read_only=True) as journal:
        trials = journal.trials()
        objectives = [o.name for o in run_meta.stored_objectives(journal, trials)]
        params = run_meta.stored_parameters(journal, trials)
        if not objectives:
            raise JournalError(f"journal {journal_path!r} records no objectives and no measured trial to infer them")
        journal.export_csv(
            out_path, parameter_names=params, objectives=objectives, error_column="Error" if errors else None
        )
    click.echo(f"exported {len(run_meta.measured(trials))} evaluation(s) to {out_path}")


# ---- compare ---------------------------------------------------------------------------------
@click.command("compare")
@click.argument("journals", metavar="JOURNAL...", nargs=-1, required=True)
@click.option(
    "-o",
    "--out",
    "out_path",
    default="compare.png",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Figure to write: .png or .svg.",
)
@click.option("--objective", help="Objective to compare (default: the first journal's first).")
@click.option("--no-plot", is_flag=True, help="Only print the table.")
@debug_option
def compare(journals: tuple[str, ...], out_path: str, objective: str | None, no_plot: bool) -> None:
    """Overlay the convergence (best so far vs evaluations) of several runs and tabulate who got there first."""
    from bayestune.compare import WITHIN, load_traces, plot_comparison, summary_rows

    chosen, traces = load_traces(journals, objective)
    rows = summary_rows(chosen, traces)
    headers = [
        "run",
        "evaluations",
        "failed",
        f"best {chosen.name} ({chosen.direction})",
        "confirmed",
        f"evaluations to within {WITHIN:.0%} of the best",
    ]
    cells = [
        [
            r["run"],
            str(r["evaluations"]),
            str(r["failed"]),
            "-" if math.isnan(r["best"]) else display(r["best"]),
            "-" if math.isnan(r["confirmed"]) else display(r["confirmed"]),
            "-" if r["to_within"] is None else str(r["to_within"]),
        ]
        for r in rows
    ]
    click.echo(table(headers, cells))
    if not no_plot:
        click.echo(f"figure: {plot_comparison(chosen, traces, out_path)}")


# ---- dashboard -------------------------------------------------------------------------------
@click.command("dashboard")
@click.argument("journal_path", metavar="JOURNAL")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; anything but loopback lets other machines read the run.",
)
@click.option(
    "--port", type=click.IntRange(min=0, max=65535), default=8765, show_default=True, help="Port (0: any free port)."
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.2),
    default=2.0,
    show_default=True,
    help="Seconds between the page's updates.",
)
@debug_option
def dashboard(journal_path: str, host: str, port: int, interval: float) -> None:
    """Serve a live web page of a run (convergence, Pareto front, importance, failures, evaluations), read only."""
    from bayestune.dashboard import serve

    what = what_it_is(journal_path)
    if what is not None:
        raise BayestuneError(f"journal {journal_path!r} {what}")
    serve(journal_path, host=host, port=port, interval=interval, announce=lambda text: click.echo(text, err=True))
