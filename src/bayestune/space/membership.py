"""A known constraint given as a table of allowed value combinations.

Recorded search spaces (e.g. Kernel Tuner caches) often only tell *which* configurations
are valid, not the rule behind them; a membership table states exactly that and plugs into
the Chain-of-Trees like any expression.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from bayestune.exceptions import ConstraintError
from bayestune.space.parameter import Parameter


class MembershipConstraint:
    """Feasible iff the values of ``names`` form one of the rows of ``allowed``."""

    def __init__(self, names: Sequence[str], allowed: Sequence[Sequence[float]], *, label: str = "table") -> None:
        self.names = list(names)
        table = np.asarray(allowed, dtype=float).reshape(-1, len(self.names))
        if len(table) == 0:
            raise ConstraintError(f"membership constraint {label!r} over {self.names} allows no combination")
        self.variables = frozenset(self.names)
        self.expression = f"({', '.join(self.names)}) in {label} [{len(table)} rows]"
        self._levels = [np.unique(table[:, j]) for j in range(len(self.names))]
        self._radices = np.array([len(v) for v in self._levels], dtype=np.int64)
        self._keys = np.unique(self._key(table))

    def _key(self, table: np.ndarray) -> np.ndarray:
        keys = np.zeros(len(table), dtype=np.int64)
        valid = np.ones(len(table), dtype=bool)
        for j, levels in enumerate(self._levels):
            idx = np.clip(np.searchsorted(levels, table[:, j]), 0, len(levels) - 1)
            valid &= levels[idx] == table[:, j]
            keys = keys * self._radices[j] + idx
        keys[~valid] = -1
        return keys

    def evaluate(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        missing = [n for n in self.names if n not in columns]
        if missing:
            raise ConstraintError(f"constraint {self.expression!r}: no values given for {missing}")
        table = np.column_stack([np.asarray(columns[n], dtype=float).reshape(-1) for n in self.names])
        keys = self._key(table)
        return (keys >= 0) & np.isin(keys, self._keys)

    def __repr__(self) -> str:
        return f"MembershipConstraint({self.expression!r})"


class IndexMembershipConstraint(MembershipConstraint):
    """A membership table over the parameters' value *indices*: for tables whose values are not
    numbers (categorical strings), which the float table of :class:`MembershipConstraint` cannot hold."""

    def __init__(self, parameters: list[Parameter], rows: list[list[float]], label: str) -> None:
        self._parameters = parameters
        super().__init__([p.name for p in parameters], rows, label=label)

    def evaluate(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        indexed = {}
        for p in self._parameters:
            col = np.asarray(columns[p.name])
            lookup = {v: i for i, v in enumerate(p.columns(p.grid()).tolist())}
            indexed[p.name] = np.array([lookup.get(v, -1) for v in col.tolist()], dtype=float)
        return super().evaluate(indexed)
