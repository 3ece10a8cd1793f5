"""Ordinal and Categorical parameters: one of a list of values, encoded as its index."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from bayestune.exceptions import SpaceError
from bayestune.space.parameter import Parameter, is_numeric
from bayestune.space.priors import CategoricalPrior, NumericPrior, ValuePrior, beta_prior_from_spec


class _ValueListParameter(Parameter):
    """Shared raw encoding of Ordinal and Categorical: the index into ``self.values``."""

    values: list[Any]

    @property
    def cardinality(self) -> float:
        return len(self.values)

    def from_raw(self, raw: np.ndarray) -> Any:
        return self.values[int(np.rint(np.asarray(raw).reshape(-1)[0]))]

    def in_domain(self, raw: np.ndarray) -> np.ndarray:
        v = np.asarray(raw, dtype=float).reshape(-1)
        return np.isfinite(v) & (v == np.rint(v)) & (v >= 0) & (v < len(self.values))

    def grid(self) -> np.ndarray:
        return np.arange(len(self.values), dtype=float).reshape(-1, 1)

    def index_of(self, raw: np.ndarray) -> np.ndarray:
        return np.rint(np.asarray(raw, dtype=float).reshape(-1)).astype(np.int64)

    def raw_of_index(self, index: np.ndarray) -> np.ndarray:
        return np.asarray(index, dtype=float).reshape(-1, 1)

    def to_spec(self) -> dict[str, Any]:
        return self._spec_with({"values": list(self.values)})

    def neighbours(self, raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.neighbours_many(raw, rng)[0]


class Ordinal(_ValueListParameter):
    """One of a sorted list of numbers (e.g. powers of two), optionally compared on a log scale."""

    kind = "ordinal"

    def __init__(
        self, name: str, values: Sequence[float], *, log: bool = False, default: float | None = None, prior: Any = None
    ) -> None:
        super().__init__(name)
        vals = list(values) if values is not None else []
        if len(vals) == 0:
            raise SpaceError(f"parameter {name!r}: an ordinal needs at least one value, but got {values!r}")
        bad = [v for v in vals if not is_numeric(v) or not math.isfinite(float(v))]
        if bad:
            raise SpaceError(f"parameter {name!r}: ordinal values must be finite numbers, but got {bad[0]!r}")
        arr = np.asarray(vals, dtype=float)
        if np.any(np.diff(arr) <= 0):
            raise SpaceError(f"parameter {name!r}: ordinal values must be strictly increasing, but got {vals!r}")
        if log and arr[0] <= 0:
            raise SpaceError(f"parameter {name!r}: a log-scale ordinal needs positive values, but got {arr[0]!r}")
        self.values = [int(v) if float(v).is_integer() and not isinstance(v, float) else v for v in vals]
        self._array = arr
        self.log = bool(log)
        self.prior: NumericPrior | None = beta_prior_from_spec(prior)
        if isinstance(self.prior, ValuePrior) and len(self.prior.probabilities) != len(vals):
            raise SpaceError(
                f"parameter {name!r}: a value prior needs one probability per value ({len(vals)}), "
                f"but got {len(self.prior.probabilities)}"
            )
        if self.prior is not None and self.prior.is_uniform:
            self.prior = None
        t = np.log(arr) if self.log else arr
        span = t[-1] - t[0]
        self._unit_values = (t - t[0]) / span if span > 0 else np.zeros_like(t)
        self._default = self.validate(default) if default is not None else None

    @property
    def default(self) -> Any:
        return self._default if self._default is not None else self.values[(len(self.values) - 1) // 2]

    def validate(self, value: Any) -> Any:
        if is_numeric(value):
            hits = np.flatnonzero(self._array == float(value))
            if len(hits):
                return self.values[int(hits[0])]
        raise SpaceError(f"parameter {self.name!r}: value must be one of {self.values!r}, but got {value!r}")

    def to_raw(self, value: Any) -> np.ndarray:
        return np.array([float(np.flatnonzero(self._array == float(value))[0])])

    def columns(self, raw: np.ndarray) -> np.ndarray:
        return self._array[np.rint(np.asarray(raw, dtype=float).reshape(-1)).astype(np.int64)]

    def unit(self, raw: np.ndarray) -> np.ndarray:
        return self._unit_values[self.index_of(raw)].reshape(-1, 1)

    def _bin_probabilities(self, prior: NumericPrior) -> np.ndarray:
        u = self._unit_values
        edges = np.concatenate([[0.0], (u[1:] + u[:-1]) / 2, [1.0]])
        return prior.bin_probabilities(edges)

    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        if use_prior and self.prior is not None:
            idx = rng.choice(len(self.values), size=n, p=self._bin_probabilities(self.prior))
        else:
            idx = rng.integers(0, len(self.values), size=n)
        return idx.astype(float).reshape(-1, 1)

    def neighbours_many(self, raw: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        idx = self.index_of(raw)
        cand = np.stack([idx - 1, idx + 1], axis=1).reshape(-1)
        owner = np.repeat(np.arange(len(idx)), 2)
        ok = (cand >= 0) & (cand < len(self.values))
        return cand[ok].astype(float).reshape(-1, 1), owner[ok]

    def prior_weight(self, raw: np.ndarray) -> np.ndarray:
        if self.prior is None:
            return super().prior_weight(raw)
        if isinstance(self.prior, ValuePrior):
            return self.prior.normalized[self.index_of(raw)] * len(self.values)
        return self.prior.pdf_unit(self.unit(raw).reshape(-1))


class Categorical(_ValueListParameter):
    """One of an unordered set of values (strings, numbers or booleans)."""

    kind = "categorical"

    def __init__(self, name: str, values: Sequence[Any], *, default: Any = None, prior: Any = None) -> None:
        super().__init__(name)
        vals = list(values) if values is not None else []
        if len(vals) == 0:
            raise SpaceError(f"parameter {name!r}: a categorical needs at least one value, but got {values!r}")
        for v in vals:
            if not isinstance(v, (str, int, float, bool, np.integer, np.floating, np.bool_)):
                raise SpaceError(
                    f"parameter {name!r}: categorical values must be strings, numbers or booleans, but got {v!r}"
                )
            if isinstance(v, str) and "\x00" in v:  # no command line, file name or CSV cell can carry it
                raise SpaceError(f"parameter {name!r}: a categorical value contains a NUL character: {v!r}")
        if len({(type(v) is str, v) for v in vals}) != len(vals):
            raise SpaceError(f"parameter {name!r}: categorical values must be distinct, but got {vals!r}")
        self.values = vals
        if all(isinstance(v, str) for v in vals):
            self._column_values = np.array(vals, dtype=str)
        elif all(is_numeric(v) for v in vals):
            self._column_values = np.array(vals, dtype=float)
        else:
            self._column_values = np.array(vals, dtype=object)
        self.prior: CategoricalPrior | None = None
        if prior is not None and prior != "uniform":
            p = prior if isinstance(prior, CategoricalPrior) else None
            if p is None:
                if not isinstance(prior, (list, tuple)) or len(prior) != len(vals):
                    raise SpaceError(
                        f"parameter {name!r}: a categorical prior is a list of {len(vals)} probabilities "
                        f"(one per value), but got {prior!r}"
                    )
                p = CategoricalPrior(tuple(float(x) for x in prior))
            self.prior = p
        self._default = self.validate(default) if default is not None else None

    @property
    def default(self) -> Any:
        return self._default if self._default is not None else self.values[0]

    def _find(self, value: Any) -> int | None:
        for i, v in enumerate(self.values):
            if type(v) is str and type(value) is str and v == value:
                return i
            if type(v) is not str and type(value) is not str and v == value:
                return i
        if isinstance(value, str):  # CSV round trips hand numbers back as text
            for i, v in enumerate(self.values):
                if str(v) == value:
                    return i
        return None

    def validate(self, value: Any) -> Any:
        i = self._find(value)
        if i is None:
            raise SpaceError(f"parameter {self.name!r}: value must be one of {self.values!r}, but got {value!r}")
        return self.values[i]

    def to_raw(self, value: Any) -> np.ndarray:
        i = self._find(value)
        if i is None:
            raise SpaceError(f"parameter {self.name!r}: value must be one of {self.values!r}, but got {value!r}")
        return np.array([float(i)])

    def columns(self, raw: np.ndarray) -> np.ndarray:
        return self._column_values[np.rint(np.asarray(raw, dtype=float).reshape(-1)).astype(np.int64)]

    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        p = self.prior.normalized if (use_prior and self.prior is not None) else None
        return rng.choice(len(self.values), size=n, p=p).astype(float).reshape(-1, 1)

    def neighbours_many(self, raw: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        idx = self.index_of(raw)
        k = len(self.values)
        cand = np.tile(np.arange(k), len(idx))
        owner = np.repeat(np.arange(len(idx)), k)
        ok = cand != idx[owner]
        return cand[ok].astype(float).reshape(-1, 1), owner[ok]

    def prior_weight(self, raw: np.ndarray) -> np.ndarray:
        if self.prior is None:
            return super().prior_weight(raw)
        return self.prior.normalized[self.index_of(raw)] * len(self.values)
