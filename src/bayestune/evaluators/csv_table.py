"""A table of recorded outputs as the black box: each configuration is looked up by its
parameter values in a CSV file (one row per configuration: input columns, output columns, an
optional feasibility flag), as HyperMapper 2.0's ``hypermapper_mode: exhaustive`` does with its
``exhaustive_search_file``.

Why not the ``replay`` evaluator (:mod:`.replay`): that reads Kernel Tuner caches, whose
parameters and failure markers it infers; here the scenario owns the space and the table only
answers. Cells are matched by value, not text (``96``, ``96.0`` and ``9.6e1`` are one key;
permutations as ``(0, 2, 1)``), so a table written by another tool still matches. A
configuration the table lacks is an ``invalid`` failure (HyperMapper stops at it).
"""

from __future__ import annotations

import ast
import csv
import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator
from bayestune.exceptions import EvaluationError
from bayestune.trial import FailureKind, Result

logger = logging.getLogger(__name__)

_TRUE = frozenset({"true", "t", "1", "yes", "y"})
_FALSE = frozenset({"false", "f", "0", "no", "n"})


def cell_key(value: Any) -> Any:
    """One value as a lookup key: numbers by value, tuples element-wise, text stripped; a cell's
    text goes through the same rule, so ``"96"`` in the file finds the ordinal value 96."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (tuple, list)):
        return tuple(cell_key(v) for v in value)
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        if text.startswith(("(", "[")):
            try:
                parsed = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return text
            if isinstance(parsed, (tuple, list)):
                return cell_key(parsed)
        return text
    return number if math.isfinite(number) else text


class CsvTableEvaluator(Evaluator):
    """Answers each configuration with its row of a CSV table (see the module docstring)."""

    deterministic = True

    def __init__(
        self,
        path: str | os.PathLike,
        objectives: Sequence[str],
        *,
        parameter_names: Sequence[str],
        feasible_column: str | None = None,
    ) -> None:
        super().__init__(objectives)
        self.path = Path(path)
        self.parameter_names = list(parameter_names)
        if not self.parameter_names:
            raise EvaluationError("a table black box needs the scenario's parameter names")
        self.feasible_column = feasible_column
        self.rows = self._load()

    def _load(self) -> dict[tuple, Result]:
        try:
            with open(self.path, encoding="utf-8-sig", newline="") as f:
                reader = csv.reader(f)
                header = [h.strip() for h in next(reader, [])]
                required = (
                    self.parameter_names + self.objectives + ([self.feasible_column] if self.feasible_column else [])
                )
                missing = [c for c in required if c not in header]
                if missing:
                    raise EvaluationError(
                        f"table {str(self.path)!r} lacks the column(s) {missing}; its header is {header}"
                    )
                index = {name: header.index(name) for name in required}
                rows: dict[tuple, Result] = {}
                for cells in reader:
                    if not any(c.strip() for c in cells):
                        continue
                    if len(cells) != len(header):
                        raise EvaluationError(
                            f"{self.path}, line {reader.line_num}: {len(cells)} cell(s), but the "
                            f"header has {len(header)}"
                        )
                    key = tuple(cell_key(cells[index[n]]) for n in self.parameter_names)
                    result = self._result(cells, index, reader.line_num)
                    if key in rows and rows[key] != result:
                        raise EvaluationError(
                            f"{self.path}, line {reader.line_num}: the configuration "
                            f"{dict(zip(self.parameter_names, key))} is already in the table with "
                            "other outputs; a table answers each configuration once"
                        )
                    rows[key] = result
        except FileNotFoundError:
            raise EvaluationError(f"table {str(self.path)!r} does not exist") from None
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise EvaluationError(f"cannot read table {str(self.path)!r}: {exc}") from None
        if not rows:
            raise EvaluationError(f"table {str(self.path)!r} has no rows")
        logger.info("table %s: %d configuration(s)", self.path, len(rows))
        return rows

    def _result(self, cells: list[str], index: Mapping[str, int], line: int) -> Result:
        values, problems = {}, []
        for name in self.objectives:
            text = cells[index[name]].strip()
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if math.isfinite(number):
                values[name] = number
            else:
                problems.append(f"{name} = {text!r}")
        feasible = True
        if self.feasible_column:
            flag = cells[index[self.feasible_column]].strip().lower()
            if flag not in _TRUE | _FALSE:
                raise EvaluationError(
                    f"{self.path}, line {line}: the flag {self.feasible_column!r} is {flag!r}, neither true nor false"
                )
            feasible = flag in _TRUE
        if not feasible:  # an infeasible row may leave its outputs empty
            return Result(values=values, feasible=False)
        if problems:
            return Result.failure(f"the table's line {line} has no number for {', '.join(problems)}", FailureKind.PARSE)
        return Result(values=values)

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        try:
            key = tuple(cell_key(config[n]) for n in self.parameter_names)
        except KeyError as exc:
            return Result.failure(f"the configuration lacks parameter {exc}", FailureKind.TEMPLATE)
        result = self.rows.get(key)
        if result is None:
            return Result.failure(f"the table {self.path.name} has no row for this configuration", FailureKind.INVALID)
        return result

    def __repr__(self) -> str:
        return f"CsvTableEvaluator({str(self.path)!r}, {len(self.rows)} rows)"
