"""The options reference of every strategy, generated from the settings classes and the comment
after each field, so the documentation cannot drift from the code.

    python -m bayestune.options_reference > docs/strategies.md

``tests/test_options_reference.py`` fails when ``docs/strategies.md`` differs from what this
module generates.
"""

from __future__ import annotations

import inspect
import re
import sys
import typing
from dataclasses import fields

from bayestune.settings import Settings, group_type
from bayestune.strategies.base import _REGISTRY, available_strategies

_FIELD = re.compile(r"^\s+(\w+)\s*:[^=#]+(?:=(?P<default>[^#]*))?(?:#\s?(?P<doc>.*))?$")
_COMMENT = re.compile(r"^\s+#\s?(.*)$")


def field_comments(cls: type) -> dict[str, str]:
    """Each field's comment (the one after it, else the comment lines just above it), the
    nearest class of the MRO winning."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or not hasattr(klass, "__dataclass_fields__"):
            continue
        try:
            lines = inspect.getsource(klass).splitlines()
        except (OSError, TypeError):
            continue
        above: list[str] = []
        for i, line in enumerate(lines):
            comment = _COMMENT.match(line)
            if comment:
                above.append(comment.group(1).strip())
                continue
            match = _FIELD.match(line)
            if match and match.group(1) in klass.__dict__.get("__annotations__", {}):
                doc = (match.group("doc") or "").strip() or _wrapped_comment(lines, i) or " ".join(above)
                out[match.group(1)] = doc
            above = []
    return out


def _wrapped_comment(lines: list[str], i: int) -> str:
    """The comment inside a default the formatter wrapped in parentheses (``x: int = (`` ...
    ``value  # doc`` ... ``)``), or ''."""
    if not lines[i].rstrip().endswith("("):
        return ""
    parts: list[str] = []
    for line in lines[i + 1 :]:
        if line.strip().startswith(")"):
            break
        if "#" in line:
            parts.append(line.split("#", 1)[1].strip())
    return " ".join(parts)


def option_rows(cls: type[Settings], prefix: str = "", base: Settings | None = None) -> list[tuple[str, str, str]]:
    """(dotted option, default, what it does) of every option of ``cls``, groups expanded;
    ``base``: the owner's default of a group (its defaults may differ from the group's own)."""
    comments = field_comments(cls)
    hints = typing.get_type_hints(cls)
    owner_default = base if base is not None else cls()
    rows: list[tuple[str, str, str]] = []
    for f in fields(cls):
        group = group_type(hints[f.name])
        value = getattr(owner_default, f.name)
        if group is not None:
            summary = (inspect.getdoc(group) or "").split("\n\n")[0].replace("\n", " ")
            rows.append((f"{prefix}{f.name}", "", summary))
            rows.extend(option_rows(group, f"{prefix}{f.name}.", value))
        else:
            rows.append(
                (f"{prefix}{f.name}", f"`{value!r}`".replace("|", "\\|"), comments.get(f.name, "").replace("|", "\\|"))
            )
    return rows


def reference() -> str:
    """The whole reference as Markdown."""
    out = [
        "# Strategy options",
        "",
        "Generated from the settings classes (`python -m bayestune.options_reference > docs/strategies.md`);",
        "give them as `strategy_options` in a scenario, or `Optimizer(..., strategy_options={...})`. A group",
        "is a mapping (`trust_region: {every: 3}`); the keys left out keep their defaults. Options of the",
        "`experimental` group lost against the default in the project's benchmarks and warn when set;",
        "the old flat names of earlier versions (`local_every`, `rf_trees`, ...) still load, with a warning",
        "naming the new spelling.",
        "",
    ]
    for name in available_strategies():
        if not _REGISTRY[name].__module__.startswith("bayestune."):
            continue  # registered from outside the package (benchmark contenders, a user's own)
        cls = _REGISTRY[name].settings_class
        rows = option_rows(cls)
        top = sum("." not in option for option, _, _ in rows)
        doc = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
        out += [f"## `{name}`", "", doc if cls is not Settings else "No options.", ""]
        if not rows:
            continue
        out += [f"{top} top-level option(s).", "", "| option | default | what it does |", "|---|---|---|"]
        out += [f"| `{option}` | {default} | {doc} |" for option, default, doc in rows]
        renamed = getattr(cls, "RENAMED", {})
        if renamed:
            out += ["", "Old names: " + ", ".join(f"`{old}` → `{new}`" for old, new in sorted(renamed.items())) + "."]
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(reference())
