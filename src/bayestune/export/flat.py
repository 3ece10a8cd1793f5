"""The tuned table as data files: JSON (for tools) and CSV (for spreadsheets), values exact."""

from __future__ import annotations

import csv
import io
import json

from bayestune._version import __version__
from bayestune.exceptions import BayestuneError
from bayestune.export.table import TunedTable
from bayestune.formatting import format_value
from bayestune.jsonable import to_jsonable


def to_json(table: TunedTable) -> str:
    """One JSON document: the objectives, parameters, key fields and every entry (floats by ``repr``)."""
    doc = {
        "generator": f"bayestune {__version__}",
        "sources": list(table.sources),
        "objectives": [{"name": o.name, "direction": o.direction} for o in table.objectives],
        "parameters": list(table.parameters),
        "key_fields": list(table.key_fields),
        "selection": "pareto set" if table.pareto else "best",
        "entries": [
            {
                "key": dict(e.key),
                "rank": e.rank,
                "trial": e.trial_id,
                "config": dict(e.config),
                "values": dict(e.values),
                **({"searched": dict(e.searched)} if e.searched else {}),
                **({"interval": {k: list(v) for k, v in e.interval.items()}} if e.interval else {}),
            }
            for e in table.entries
        ],
    }
    try:
        return json.dumps(to_jsonable(doc), indent=2, allow_nan=False) + "\n"
    except ValueError as exc:  # NaN or infinity, which JSON cannot hold
        raise BayestuneError(f"the table holds a value JSON cannot write ({exc})") from None


def to_csv(table: TunedTable) -> str:
    """One row per entry: key fields, rank, trial, parameters, objectives (cells by ``format_value``);
    a confirmed winner's value is its confirmed one, the search's own in a ``searched <objective>`` column.

    ``rank`` and ``trial`` get a trailing ``_`` when a parameter already has that name."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    names = [o.name for o in table.objectives]
    taken = {*table.key_fields, *table.parameters, *names}
    rank, trial = (_free(column, taken) for column in ("rank", "trial"))
    searched = [n for n in names if any(n in e.searched for e in table.entries)]  # a confirmed winner's
    taken |= {rank, trial}
    extra = [_free(f"searched {n}", taken) for n in searched]
    writer.writerow([*table.key_fields, rank, trial, *table.parameters, *names, *extra])
    for e in table.entries:
        writer.writerow(
            [
                *(format_value(e.key[f]) for f in table.key_fields),
                e.rank,
                e.trial_id,
                *(format_value(e.config[p]) for p in table.parameters),
                *(format_value(e.values[n]) for n in names),
                *(format_value(e.searched[n]) if n in e.searched else "" for n in searched),
            ]
        )
    return out.getvalue()


def _free(column: str, taken: set[str]) -> str:
    while column in taken:
        column += "_"
    return column
