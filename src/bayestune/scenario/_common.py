"""What every scenario format shares beyond the space: objectives, a default name, and
Python-built input brought into JSON's shapes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bayestune.exceptions import ScenarioError
from bayestune.objectives import Objective
from bayestune.space.space import Space
from bayestune.space.spec import JsonPath, SpecContext, fmt_path


def parse_objectives(ctx: SpecContext, items: Sequence[Any], base: JsonPath, space: Space) -> tuple[Objective, ...]:
    out: list[Objective] = []
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        path = base + (i,)
        name, direction = (
            (item, "minimize") if isinstance(item, str) else (item["name"], item.get("direction", "minimize"))
        )
        if name in first:
            ctx.fail(
                path, f"objective names must be unique, but {name!r} also appears at {fmt_path(base + (first[name],))}"
            )
        if name in space:
            ctx.fail(path, f"objective {name!r} has the name of a parameter; objective and parameter names must differ")
        first[name] = i
        try:
            out.append(Objective(name, direction))
        except ScenarioError as exc:
            raise ctx.error(path, str(exc)) from None
    return tuple(out)


def default_name(source: str) -> str:
    if source.startswith("<"):
        return "scenario"
    return Path(source).stem or "scenario"


def plain(value: Any) -> Any:
    """Python-built input in JSON's shapes: tuples and arrays as lists, numpy scalars as numbers."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value
