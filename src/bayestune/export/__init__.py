"""From tuning to production: a run's best configurations (or a table of them keyed by device or
input size, from several runs) as JSON, CSV, a C header or a Python module.

``bayestune export JOURNAL... --format json|csv|c-header|python`` is this package's face;
:func:`read_table` and :func:`render` are its Python API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bayestune.exceptions import BayestuneError
from bayestune.export.c_header import to_c_header
from bayestune.export.flat import to_csv, to_json
from bayestune.export.python_module import to_python
from bayestune.export.table import (
    Entry,
    TunedTable,
    best_trials,
    build_table,
    key_from_meta,
    lookup,
    nearest_key,
    parse_key,
)

__all__ = [
    "FORMATS",
    "Entry",
    "TunedTable",
    "best_trials",
    "build_table",
    "lookup",
    "nearest_key",
    "read_table",
    "render",
]

#: Export format -> writer of the table's text (``name`` names the generated C symbols).
FORMATS: dict[str, Callable[[TunedTable, str], str]] = {
    "json": lambda table, name: to_json(table),
    "csv": lambda table, name: to_csv(table),
    "c-header": to_c_header,
    "python": lambda table, name: to_python(table),
}


def read_table(
    journals: Sequence[str], *, keys: Sequence[str] = (), key_meta: Sequence[str] = (), top: int | None = None
) -> TunedTable:
    """The tuned table of ``journals`` (read only, also while their runs go on).

    ``keys``: one ``FIELD=VALUE[,FIELD=VALUE]`` per journal, in order; ``key_meta``: metadata names
    each journal records its key under. Neither: one journal, no key.
    """
    from bayestune.run import load_run

    if keys and key_meta:
        raise BayestuneError("give keys either with --key or with --key-meta, not both")
    if keys and len(keys) != len(journals):
        raise BayestuneError(
            f"{len(keys)} --key value(s) for {len(journals)} journal(s); give one key per journal, in the same order"
        )
    if not keys and not key_meta and len(journals) > 1:
        raise BayestuneError(
            f"{len(journals)} journals but no keys: key each one (--key device=A100 JOURNAL ...) "
            "or name the metadata that holds its key (--key-meta device)"
        )
    runs: list[tuple[Mapping[str, Any], Any, str]] = []
    for i, path in enumerate(journals):
        run = load_run(path, read_only=True)
        if keys:
            key = parse_key(keys[i])
        elif key_meta:
            key = key_from_meta(run.meta, key_meta, path)
        else:
            key = {}
        runs.append((key, run, path))
    return build_table(runs, top)


def render(table: TunedTable, fmt: str, *, name: str = "tuned") -> str:
    """The table's text in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in FORMATS:
        raise BayestuneError(f"unknown export format {fmt!r}; allowed: {sorted(FORMATS)}")
    return FORMATS[fmt](table, name)
