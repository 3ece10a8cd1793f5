"""Replay ("simulation") of recorded measurements: a Kernel Tuner cache file as a black box.

Rules (shared with every strategy and peer we compare against):

* parameters with one value are constants, numeric value lists ordinals (log scale when the
  values are positive and more evenly spaced in log than in linear terms), others categoricals;
* the known-feasible set K is the cached configurations not marked ``InvalidConfig``;
  configurations absent from the cache or marked invalid violate a known constraint, given
  as T1 expressions when they reproduce K exactly, else as a membership table;
* ``CompilationFailedConfig`` / ``RuntimeFailedConfig`` are hidden-constraint failures;
* the objective is ``time`` (ms, lower is better); the global optimum of K is known.
"""

from __future__ import annotations

import gzip
import json
import logging
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bayestune.evaluators.base import Evaluator
from bayestune.exceptions import EvaluationError
from bayestune.space.inference import is_number, parameter_for_values
from bayestune.space.membership import IndexMembershipConstraint, MembershipConstraint
from bayestune.space.parameters import Ordinal, Parameter
from bayestune.space.space import Space
from bayestune.trial import FailureKind, Result

logger = logging.getLogger(__name__)

#: Failure markers in Kernel Tuner caches and the failure kind each becomes.
FAILURE_MARKERS = {
    "CompilationFailedConfig": FailureKind.COMPILE,
    "RuntimeFailedConfig": FailureKind.RUNTIME,
}
INVALID_MARKER = "InvalidConfig"
#: Very old caches store failures as this number instead of a marker string.
LEGACY_FAILURE_TIME = 1e20


@dataclass
class ReplayProblem:
    """A recorded search space: what a strategy may search, and the lookup that answers."""

    name: str
    space: Space
    constants: dict[str, Any]
    records: dict[tuple, dict[str, Any]]  # varying-parameter values -> cache record
    objective: str = "time"
    constraint_source: str = "table"  # "t1" or "table"
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def n_known_feasible(self) -> int:
        return sum(1 for r in self.records.values() if r.get("time") != INVALID_MARKER)

    @property
    def n_failing(self) -> int:
        return sum(1 for r in self.records.values() if _failure_kind(r) is not None)

    @property
    def optimum(self) -> float:
        times = [r["time"] for r in self.records.values() if _failure_kind(r) is None and is_number(r.get("time"))]
        return float(min(times))

    def key(self, config: Mapping[str, Any]) -> tuple:
        return tuple(config[n] for n in self.space.names)

    def evaluator(self) -> ReplayEvaluator:
        return ReplayEvaluator(self)


def _failure_kind(record: Mapping[str, Any]) -> str | None:
    t = record.get("time")
    if isinstance(t, str):
        return FAILURE_MARKERS.get(t, FailureKind.INVALID if t == INVALID_MARKER else FailureKind.RUNTIME)
    if not is_number(t) or not math.isfinite(t) or t >= LEGACY_FAILURE_TIME:
        return FailureKind.RUNTIME
    return None


class ReplayEvaluator(Evaluator):
    """Answers a configuration with its recorded time (or its recorded failure)."""

    #: the same configuration always gets the same answer: re-measuring it tells nothing
    deterministic = True

    def __init__(self, problem: ReplayProblem) -> None:
        super().__init__([problem.objective])
        self.problem = problem

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        try:
            record = self.problem.records.get(self.problem.key(config))
        except KeyError as exc:
            return Result.failure(f"configuration lacks parameter {exc}", FailureKind.PARSE)
        if record is None:
            return Result.failure("configuration is not in the recorded space (known-infeasible)", FailureKind.INVALID)
        kind = _failure_kind(record)
        if kind is not None:
            return Result.failure(f"recorded failure: {record.get('time')!r}", kind)
        metrics = {
            k: float(v)
            for k, v in record.items()
            if is_number(v) and k not in self.problem.space.names and k not in self.problem.constants
        }
        metrics[self.problem.objective] = float(record["time"])
        return Result(values=metrics)


def _read_cache(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise EvaluationError(f"{path}: no such cache file") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EvaluationError(f"{path}: not a readable Kernel Tuner cache file ({exc})") from None
    for key in ("tune_params_keys", "tune_params", "cache"):
        if key not in data:
            raise EvaluationError(f"{path}: not a Kernel Tuner cache file: missing key {key!r}")
    return data


def _value_from_key(text: str, candidates: Sequence[Any]) -> Any:
    """A value of a cache key string ``"v1,v2,..."``: the tune_params value it spells, else
    the JSON it parses as, else the text itself."""
    text = text.strip()
    for v in candidates:
        if str(v) == text:
            return v
    try:
        return json.loads(text)
    except ValueError:
        return text


def _t1_constraints(t1_path: Path | None) -> list[str]:
    if t1_path is None:
        return []
    with open(t1_path, encoding="utf-8") as fh:
        t1 = json.load(fh)
    conditions = t1.get("ConfigurationSpace", {}).get("Conditions", []) or []
    return [c["Expression"] if isinstance(c, dict) else str(c) for c in conditions]


def load_kernel_tuner_cache(
    path: str | os.PathLike, *, t1_path: str | os.PathLike | None = None, name: str | None = None
) -> ReplayProblem:
    """Build a :class:`ReplayProblem` from a cache file (optionally with its T1 definition)."""
    path = Path(path)
    data = _read_cache(path)
    keys: list[str] = list(data["tune_params_keys"])
    tune_params: dict[str, list[Any]] = data["tune_params"]
    missing = [k for k in keys if k not in tune_params]
    if missing:
        raise EvaluationError(f"{path}: tune_params lacks {missing} named in tune_params_keys")
    constants = {k: tune_params[k][0] for k in keys if len(tune_params[k]) == 1}
    varying = [k for k in keys if k not in constants]
    if not varying:
        raise EvaluationError(f"{path}: every tunable parameter has a single value; nothing to tune")
    parameters = [parameter_for_values(k, tune_params[k]) for k in varying]

    records: dict[tuple, dict[str, Any]] = {}
    for text_key, record in data["cache"].items():
        values = {k: record[k] for k in keys if k in record}
        if len(values) != len(keys):  # fall back on the key string "v1,v2,..."
            parts = text_key.split(",")
            values = {k: _value_from_key(v, tune_params[k]) for k, v in zip(keys, parts)}
        if any(values[k] != v for k, v in constants.items()):
            continue
        row = tuple(values[k] for k in varying)
        records[row] = record

    space, source = _space_with_known_constraints(
        parameters, records, _t1_constraints(Path(t1_path) if t1_path else None), path
    )
    problem = ReplayProblem(
        name=name or path.name.split(".")[0],
        space=space,
        constants=constants,
        records=records,
        constraint_source=source,
        metadata={k: data.get(k) for k in ("device_name", "kernel_name", "problem_size") if k in data},
    )
    logger.info(
        "replay %s: %d recorded, %d known-feasible, %d failing, constraints from %s",
        problem.name,
        len(records),
        problem.n_known_feasible,
        problem.n_failing,
        source,
    )
    return problem


def _space_with_known_constraints(
    parameters: list[Parameter], records: dict[tuple, dict[str, Any]], t1_constraints: list[str], path: Path
) -> tuple[Space, str]:
    """Use the T1 expressions when their feasible set equals K, else a membership table."""
    names = [p.name for p in parameters]
    known = [row for row, rec in records.items() if rec.get("time") != INVALID_MARKER]
    index_rows = np.array(
        [[parameters[j].to_raw(parameters[j].validate(v))[0] for j, v in enumerate(row)] for row in known]
    )
    if t1_constraints:
        usable = [c for c in t1_constraints if _mentions_only(c, names)]
        try:
            candidate = Space(parameters, usable)
            count = candidate.count_feasible()
            if count == len(known) and candidate.is_feasible(index_rows).all():
                return candidate, "t1"
            logger.info(
                "%s: T1 constraints give %s feasible configurations, cache has %d; using a table",
                path.name,
                count,
                len(known),
            )
        except Exception as exc:  # a T1 file written for another version of the kernel
            logger.info("%s: T1 constraints unusable (%s); using a membership table", path.name, exc)
    full = math.prod(int(p.cardinality) for p in parameters)
    if len(known) == full:
        return Space(parameters), "none"
    if all(isinstance(p, Ordinal) for p in parameters):
        value_rows = [[float(v) for v in row] for row in known]
        return Space(parameters, [MembershipConstraint(names, value_rows, label=path.name)]), "table"
    # Categorical columns are compared by value index: express the table on raw indices.
    return Space(parameters, [IndexMembershipConstraint(parameters, index_rows.tolist(), path.name)]), "table"


def _mentions_only(expression: str, names: Sequence[str]) -> bool:
    import re

    tokens = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expression))
    keywords = {"and", "or", "not", "in", "if", "else", "True", "False", "min", "max", "abs", "log2"}
    return tokens - keywords <= set(names)
