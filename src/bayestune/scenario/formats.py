"""Which of the three formats a scenario mapping is written in, and the reader of each."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bayestune.scenario._common import plain
from bayestune.scenario.hypermapper import HM_MARKERS, parse_hypermapper
from bayestune.scenario.native import NATIVE_KEYS, parse_native
from bayestune.scenario.records import Scenario
from bayestune.scenario.t1 import T1_MARKERS, parse_t1
from bayestune.space.spec import SpecContext, show

__all__ = ["FORMATS", "detect_format", "scenario_from_dict"]

#: Input formats recognised by :func:`detect_format`.
FORMATS = ("native", "hypermapper", "t1")
_PARSERS: dict[str, Callable[[Mapping[str, Any], SpecContext], Scenario]] = {
    "native": parse_native,
    "hypermapper": parse_hypermapper,
    "t1": parse_t1,
}


def detect_format(data: Mapping[str, Any]) -> str | None:
    """``"native"``, ``"hypermapper"`` (HyperMapper 2.0 / BaCO) or ``"t1"`` from the top-level
    keys of a scenario mapping; None if none applies."""
    if not isinstance(data, Mapping):
        return None
    keys = set(data)
    if keys & set(T1_MARKERS):
        return "t1"
    if keys & set(HM_MARKERS):
        return "hypermapper"
    if keys & set(NATIVE_KEYS):
        return "native"
    return None


def scenario_from_dict(data: Mapping[str, Any], *, source: str = "<dict>") -> Scenario:
    """Build a :class:`Scenario` from a parsed scenario in any of the three formats.

    ``source`` names the origin in error messages. Paths in the mapping (``journal``, black-box
    files) are kept as written; :func:`load_scenario` resolves them against the file's directory.
    """
    ctx = SpecContext(source)
    if not isinstance(data, Mapping):
        ctx.fail((), f"a scenario must be an object (a mapping of keys to values), but got {show(data)}")
    data = plain(data)
    fmt = detect_format(data)
    if fmt is None:
        ctx.fail(
            (),
            "unknown scenario format: expected bayestune's keys (parameters, objectives, ...), "
            "HyperMapper/BaCO keys (application_name, optimization_objectives, input_parameters, ...) "
            f"or T1 keys (General, ConfigurationSpace, ...), but got the keys {sorted(str(k) for k in data)}",
        )
    return _PARSERS[fmt](data, ctx)
