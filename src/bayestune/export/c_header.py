"""The tuned table as a C header: compile the tuned configuration into the program that uses it.

What the header holds (``NAME`` is ``--name``, default ``tuned``):

* ``NAME_config``, a struct with one member per key field, the rank, one per parameter and one
  per objective, and ``NAME_configs[NAME_COUNT]``, every entry;
* ``NAME_best()``, the first entry; without keys and with one objective also ``#define NAME_TILE 32``
  macros of the best configuration (a permutation as a brace initializer);
* with keys, ``NAME_lookup(key...)``: the best entry of the nearest tuned key, by the rule of
  :func:`bayestune.export.table.key_distance` (numeric keys over their span, text keys equal or not).

Column types follow the values: integers ``long long``, other numbers ``double``, text
``const char *``, permutations ``int[n]``; numeric key fields are ``double``. C99, no libraries
beyond ``<string.h>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bayestune._version import __version__
from bayestune.exceptions import BayestuneError
from bayestune.export.c_names import Namer, c_comment, c_double, c_integer, c_string, valid_prefix
from bayestune.export.table import TunedTable, _is_number


class _Column:
    """One struct member: its C name, declaration and how a value becomes a literal."""

    def __init__(self, title: str, ident: str, values: Sequence[Any], *, numeric_key: bool = False) -> None:
        self.title, self.ident = title, ident
        if numeric_key:
            self.kind = "double"
        elif all(isinstance(v, (tuple, list)) for v in values):
            lengths = {len(v) for v in values}
            if len(lengths) != 1:
                raise BayestuneError(f"parameter {title!r} holds permutations of different lengths {sorted(lengths)}")
            self.kind, self.length = "permutation", lengths.pop()
        elif all(isinstance(v, (bool, int)) for v in values):
            self.kind = "integer"
        elif all(_is_number(v) or isinstance(v, bool) for v in values):
            self.kind = "double"
        else:
            self.kind = "text"

    def declaration(self) -> str:
        return {
            "integer": f"long long {self.ident};",
            "double": f"double {self.ident};",
            "text": f"const char *{self.ident};",
            "permutation": f"int {self.ident}[{getattr(self, 'length', 0)}];",
        }[self.kind]

    def literal(self, value: Any) -> str:
        try:
            if self.kind == "integer":
                return c_integer(value)
            if self.kind == "double":
                return c_double(value)
        except BayestuneError as exc:
            raise BayestuneError(f"cannot export {c_comment(self.title)!r} to C: {exc}") from None
        if self.kind == "permutation":
            return "{" + ", ".join(str(int(v)) for v in value) + "}"
        from bayestune.formatting import format_value

        return c_string(format_value(value))


def to_c_header(table: TunedTable, name: str = "tuned") -> str:
    """The header's text (see the module docstring)."""
    prefix = valid_prefix(name)
    guard = f"{prefix.upper()}_H"
    fields = Namer(["rank"], avoid_prefix=f"{prefix.upper()}_")  # no member spells one of our macros
    keys = [
        _Column(f, fields.name(f), [k[f] for k in table.keys], numeric_key=table.numeric_key(f))
        for f in table.key_fields
    ]
    params = [_Column(p, fields.name(p), [e.config[p] for e in table.entries]) for p in table.parameters]
    objectives = [
        _Column(o.name, fields.name(o.name), [e.values[o.name] for e in table.entries]) for o in table.objectives
    ]
    for column in objectives:
        column.kind = "double"
    struct, array, count = f"{prefix}_config", f"{prefix}_configs", f"{prefix.upper()}_COUNT"
    what = "The Pareto set" if table.pareto else "The best configuration(s)"
    lines = [
        f"/* {what} exported by bayestune {__version__}; generated, do not edit.",
        f" * Sources: {c_comment(', '.join(table.sources))}",
        f" * Objectives: {c_comment(', '.join(f'{o.name} ({o.direction})' for o in table.objectives))}",
        f" * Key fields: {c_comment(', '.join(table.key_fields) or 'none')} */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
    ]
    if table.key_fields:
        lines += ["#include <string.h>", ""]
    if not table.key_fields and not table.pareto:
        lines += _best_macros(table, prefix, params)
    lines.append("typedef struct {")
    for group, note in ((keys, "key"), (None, None), (params, "parameter"), (objectives, "measured")):
        if group is None:
            lines.append("    int rank; /* 1 = best of its key */")
            continue
        lines += [f"    {c.declaration()} /* {note} {c_comment(c.title)} */" for c in group]
    lines += [
        f"}} {struct};",
        "",
        f"#define {count} {len(table.entries)}",
        f"static const {struct} {array}[{count}] = {{",
    ]
    for e in table.entries:
        cells = (
            [c.literal(e.key[c.title]) for c in keys]
            + [str(e.rank)]
            + [c.literal(e.config[c.title]) for c in params]
            + [c.literal(e.values[c.title]) for c in objectives]
        )
        lines.append(f"    {{{', '.join(cells)}}}, /* trial {e.trial_id} */")
    lines += [
        "};",
        "",
        "/* The first entry: the best configuration (of the first key). */",
        f"static inline const {struct} *{prefix}_best(void) {{ return &{array}[0]; }}",
        "",
    ]
    if table.key_fields:
        lines += _lookup_function(table, prefix, struct, array, count, keys)
    lines += [f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def _best_macros(table: TunedTable, prefix: str, params: Sequence[_Column]) -> list[str]:
    macros = Namer([f"{prefix}_COUNT", f"{prefix}_H"], upper=True)
    best = table.entries[0]
    lines = [f"/* The best configuration (trial {best.trial_id}). */"]
    for c in params:
        lines.append(f"#define {macros.name(f'{prefix}_{c.ident}')} {c.literal(best.config[c.title])}")
    return lines + [""]


def _lookup_function(
    table: TunedTable, prefix: str, struct: str, array: str, count: str, keys: Sequence[_Column]
) -> list[str]:
    locals_ = Namer(["best", "best_distance", "i", "entry", "distance", "diff", prefix, struct, array, count])
    arg = {c.ident: locals_.name(c.ident) for c in keys}
    args = ", ".join(f"double {arg[c.ident]}" if c.kind == "double" else f"const char *{arg[c.ident]}" for c in keys)
    numeric = any(c.kind == "double" for c in keys)
    lines = [
        "/* The best entry of the tuned key nearest to the one asked for (an exact match if tuned):",
        " * numeric keys add |asked - tuned| / their span in the table, text keys 0 if equal else 1;",
        " * ties go to the earlier key. */",
        f"static inline const {struct} *{prefix}_lookup({args}) {{",
        f"    const {struct} *best = 0;",
        "    double best_distance = 0.0;",
        "    int i;",
        f"    for (i = 0; i < {count}; ++i) {{",
        f"        const {struct} *entry = &{array}[i];",
        "        double distance = 0.0;" if not numeric else "        double distance = 0.0, diff;",
        "        if (entry->rank != 1) continue;",
    ]
    for c in keys:
        if c.kind == "double":
            span = c_double(table.key_span(c.title))
            lines += [
                f"        diff = {arg[c.ident]} - entry->{c.ident};",
                f"        distance += (diff < 0.0 ? -diff : diff) / {span};",
            ]
        else:
            lines.append(f"        distance += strcmp({arg[c.ident]}, entry->{c.ident}) == 0 ? 0.0 : 1.0;")
    lines += [
        "        if (best == 0 || distance < best_distance) {",
        "            best = entry;",
        "            best_distance = distance;",
        "        }",
        "    }",
        "    return best;",
        "}",
        "",
    ]
    return lines
