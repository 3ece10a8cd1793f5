"""The tuned table: a run's best configurations, or one group of them per key of several runs.

Why a table: production code rarely runs on one device or one input size. Several journals,
each tuned for one key (``device=A100``, ``n=4096``), become one table, and the generated
code picks the entry of the key it is asked for, or the nearest key when it was never tuned
(:func:`nearest_key`, the rule the generated C and Python code implement too).

A run with one objective contributes its ``top`` best distinct configurations; a run with
several contributes its Pareto set (the first ``top`` of it by the first objective if given).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bayestune.exceptions import BayestuneError
from bayestune.formatting import format_value
from bayestune.objectives import Objective
from bayestune.pareto import pareto_trials
from bayestune.run import Run, confirmed_winner
from bayestune.trial import Trial


@dataclass(frozen=True)
class Entry:
    """One exported configuration: its key (empty without keys), rank within the key, source trial."""

    key: Mapping[str, Any]
    rank: int
    trial_id: int
    config: Mapping[str, Any]
    #: the objectives' values: the confirmed one (re-measured in interleaved rounds) for a confirmed winner
    values: Mapping[str, float]
    #: a confirmed winner's own search value and its confirmed interval (``{}`` otherwise)
    searched: Mapping[str, float] = dataclasses.field(default_factory=dict)
    interval: Mapping[str, tuple[float, float]] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class TunedTable:
    """What every export format writes: entries grouped by key, best first within a key."""

    objectives: tuple[Objective, ...]
    parameters: tuple[str, ...]
    key_fields: tuple[str, ...]
    entries: tuple[Entry, ...]
    sources: tuple[str, ...]

    @property
    def pareto(self) -> bool:
        return len(self.objectives) > 1

    @property
    def keys(self) -> list[Mapping[str, Any]]:
        """The distinct keys in table order."""
        seen: list[Mapping[str, Any]] = []
        for e in self.entries:
            if e.rank == 1:
                seen.append(e.key)
        return seen

    def numeric_key(self, field: str) -> bool:
        return all(_is_number(k[field]) for k in self.keys)

    def key_span(self, field: str) -> float:
        """The range of a numeric key field over the table (1 when it has one value): its distance unit."""
        values = [float(k[field]) for k in self.keys]
        span = max(values) - min(values)
        return span if span > 0 else 1.0


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ---- choosing the best configurations ------------------------------------------------------
def best_trials(run: Run, top: int | None = None) -> list[Trial]:
    """The ``top`` best distinct feasible configurations (one objective, default 1), or the Pareto set
    (several objectives, all of it by default); each configuration once, at its best measurement.
    With one objective the run's confirmed winner (:func:`bayestune.run.confirmed_winner`) comes
    first: the search's best sample is the one biased towards luck."""
    if len(run.objectives) > 1:
        chosen = pareto_trials(run.trials, run.objectives)
        limit = top
    else:
        obj = run.objectives[0]
        sign = 1.0 if obj.minimize else -1.0
        ok = [t for t in run.trials if t.feasible and math.isfinite(t.values.get(obj.name, math.nan))]
        confirmed = confirmed_winner(run.meta, obj.name)
        first = None if confirmed is None else confirmed["trial_id"]
        chosen = sorted(ok, key=lambda t: (t.trial_id != first, sign * t.values[obj.name], t.trial_id))
        limit = 1 if top is None else top
    distinct: dict[tuple, Trial] = {}
    for t in chosen:
        distinct.setdefault(_config_key(t.config), t)
    out = list(distinct.values())
    return out if limit is None else out[:limit]


def _config_key(config: Mapping[str, Any]) -> tuple:
    return tuple((name, format_value(v)) for name, v in sorted(config.items()))


# ---- keys -----------------------------------------------------------------------------------
def parse_key(text: str) -> dict[str, Any]:
    """``"device=A100,n=4096"`` -> ``{"device": "A100", "n": 4096}`` (numbers where they read as numbers)."""
    key: dict[str, Any] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise BayestuneError(
                f"key {text!r}: each part must read FIELD=VALUE (e.g. device=A100,n=4096), but got {part!r}"
            )
        if name in key:
            raise BayestuneError(f"key {text!r} names the field {name!r} twice")
        key[name] = _key_value(value)
    return key


def _key_value(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            break
        return value
    return text


def key_from_meta(meta: Mapping[str, Any], fields: Sequence[str], source: str) -> dict[str, Any]:
    """The key a run recorded in its metadata (``journal.set_meta("device", "A100")``)."""
    key = {}
    for field in fields:
        if field not in meta:
            raise BayestuneError(
                f"journal {source!r} has no metadata {field!r} to key it by; its metadata keys are {sorted(meta)}"
            )
        value = meta[field]
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise BayestuneError(f"journal {source!r}: metadata {field!r} = {value!r} is not a number or text")
        key[field] = _key_value(value)
    return key


# ---- the table ------------------------------------------------------------------------------
def build_table(runs: Sequence[tuple[Mapping[str, Any], Run, str]], top: int | None = None) -> TunedTable:
    """One table from ``(key, run, source)`` triples; the runs must share parameters and objectives."""
    if not runs:
        raise BayestuneError("nothing to export: no journal given")
    first_key, first_run, first_source = runs[0]
    fields = tuple(first_key)
    parameters = tuple(first_run.space.names)
    objectives = tuple(first_run.objectives)
    entries: list[Entry] = []
    seen_keys: dict[tuple, str] = {}
    for key, run, source in runs:
        if tuple(key) != fields:
            raise BayestuneError(
                f"journal {source!r} is keyed by {list(key)}, but {first_source!r} by "
                f"{list(fields)}; give every journal the same key fields"
            )
        if tuple(run.space.names) != parameters:
            raise BayestuneError(
                f"journal {source!r} has parameters {run.space.names}, but {first_source!r} "
                f"has {list(parameters)}; a table needs one search space"
            )
        if [(o.name, o.minimize) for o in run.objectives] != [(o.name, o.minimize) for o in objectives]:
            raise BayestuneError(
                f"journal {source!r} optimises {_describe(run.objectives)}, but {first_source!r} "
                f"{_describe(objectives)}"
            )
        marker = tuple(format_value(v) for v in key.values())
        if marker in seen_keys:
            raise BayestuneError(f"journals {seen_keys[marker]!r} and {source!r} have the same key {dict(key)}")
        seen_keys[marker] = source
        trials = best_trials(run, top)
        if not trials:
            raise BayestuneError(f"journal {source!r} holds no feasible evaluation to export")
        winner = confirmed_winner(run.meta, objectives[0].name) if len(objectives) == 1 else None
        for rank, t in enumerate(trials, 1):
            values = {o.name: float(t.values[o.name]) for o in objectives}
            searched, interval = {}, {}
            if winner is not None and winner["trial_id"] == t.trial_id and winner.get("value") is not None:
                name = objectives[0].name
                searched[name], values[name] = values[name], float(winner["value"])
                low, high = winner.get("low"), winner.get("high")
                interval = {name: (float(low), float(high))} if low is not None and high is not None else {}
            config = {p: t.config[p] for p in parameters}
            entries.append(Entry(dict(key), rank, t.trial_id, config, values, searched, interval))
    table = TunedTable(objectives, parameters, fields, tuple(entries), tuple(s for _, _, s in runs))
    for field in fields:
        kinds = {_is_number(k[field]) for k in table.keys}
        if len(kinds) > 1:
            raise BayestuneError(
                f"key field {field!r} mixes numbers and text ({[k[field] for k in table.keys]}); use one kind per field"
            )
    return table


def _describe(objectives: Sequence[Objective]) -> str:
    return ", ".join(f"{o.name} ({o.direction})" for o in objectives)


def key_distance(table: TunedTable, key: Mapping[str, Any], query: Mapping[str, Any]) -> float:
    """How far ``query`` is from a tuned ``key``: per numeric field |q - k| / its span in the table,
    per text field 0 if equal else 1, summed. The generated code computes the same sum."""
    total = 0.0
    for field in table.key_fields:
        if table.numeric_key(field):
            total += abs(float(query[field]) - float(key[field])) / table.key_span(field)
        else:
            total += 0.0 if str(query[field]) == str(key[field]) else 1.0
    return total


def nearest_key(table: TunedTable, query: Mapping[str, Any]) -> Mapping[str, Any]:
    """The tuned key closest to ``query`` (an exact match when there is one; ties: the earlier key)."""
    missing = [f for f in table.key_fields if f not in query]
    if missing:
        raise BayestuneError(f"lookup needs the key field(s) {missing}; the table is keyed by {list(table.key_fields)}")
    for field in table.key_fields:
        if table.numeric_key(field) and not _is_number(_key_value(query[field])):
            raise BayestuneError(f"key field {field!r} is numeric in the table, but the lookup gives {query[field]!r}")
    query = {f: _key_value(query[f]) for f in table.key_fields}
    keys = table.keys
    distances = [key_distance(table, k, query) for k in keys]
    return keys[distances.index(min(distances))]


def lookup(table: TunedTable, query: Mapping[str, Any]) -> Entry:
    """The best entry of the nearest key."""
    key = nearest_key(table, query)
    return next(e for e in table.entries if e.rank == 1 and e.key == key)
