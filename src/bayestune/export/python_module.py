"""The tuned table as an importable Python module: plain literals, no dependency on bayestune.

The module defines ``SOURCES``, ``OBJECTIVES``, ``PARAMETERS``, ``KEY_FIELDS`` and ``ENTRIES`` (dicts with
``key``, ``rank``, ``trial``, ``config``, ``values``), ``BEST`` (the first entry's
configuration) and ``lookup(**key)``: the best configuration of the nearest tuned key, by the
rule of :func:`bayestune.export.table.key_distance`. Values are written exactly (``repr``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bayestune._version import __version__
from bayestune.export.table import TunedTable

_LOOKUP = '''

def lookup(**key):
    """The best configuration of the tuned key nearest to ``key`` (an exact match if tuned).

    Numeric key fields add |asked - tuned| / their span in the table, text fields 0 if equal
    else 1; ties go to the earlier key.
    """
    missing = [f for f in KEY_FIELDS if f not in key]
    if missing:
        raise KeyError(f"lookup needs the key field(s) {missing}; the table is keyed by {list(KEY_FIELDS)}")
    best, best_distance = None, 0.0
    for entry in ENTRIES:
        if entry["rank"] != 1:
            continue
        distance = 0.0
        for field in KEY_FIELDS:
            if field in _SPANS:
                distance += abs(float(key[field]) - float(entry["key"][field])) / _SPANS[field]
            else:
                distance += 0.0 if str(key[field]) == str(entry["key"][field]) else 1.0
        if best is None or distance < best_distance:
            best, best_distance = entry, distance
    return dict(best["config"])
'''


def literal(value: Any) -> str:
    """Python source that evaluates to ``value`` exactly (non-finite floats via ``float("...")``)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value!r}")'
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{literal(str(k))}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, (bool, int, float, str)) or value is None:
        return repr(value)
    return repr(str(value))


def to_python(table: TunedTable) -> str:
    """The module's source text (see the module docstring)."""
    what = "The Pareto set" if table.pareto else "The best configuration(s)"
    spans = {f: table.key_span(f) for f in table.key_fields if table.numeric_key(f)}
    lines = [
        f'"""{what} exported by bayestune {__version__}; generated, do not edit.',
        '"""',
        "",
        f"SOURCES = {literal(tuple(table.sources))}",
        f"OBJECTIVES = {literal(tuple((o.name, o.direction) for o in table.objectives))}",
        f"PARAMETERS = {literal(tuple(table.parameters))}",
        f"KEY_FIELDS = {literal(tuple(table.key_fields))}",
        "ENTRIES = (",
    ]
    for e in table.entries:
        entry = {
            "key": dict(e.key),
            "rank": e.rank,
            "trial": e.trial_id,
            "config": dict(e.config),
            "values": dict(e.values),
            **({"searched": dict(e.searched)} if e.searched else {}),
        }
        lines.append(f"    {literal(entry)},")
    lines += [")", 'BEST = dict(ENTRIES[0]["config"])', f"_SPANS = {literal(spans)}"]
    return "\n".join(lines) + "\n" + _LOOKUP
