"""The five parameter types of a tuning space (BaCO's RIPOC: real, integer, permutation,
ordinal, categorical).

Every parameter maps its user-facing values to a *raw* block of ``width`` float columns,
so a whole batch of configurations is one ``(N, D)`` matrix that sampling, constraints,
models and local search can process without Python loops:

=============  ================================  ==========================================
type           raw encoding (per row)            ``unit()`` feature for the models
=============  ================================  ==========================================
Real           the value                         (log-)normalised to [0, 1]
Integer        the value                         (log-)normalised to [0, 1]
Ordinal        index into the sorted values      (log-)normalised *value* in [0, 1]
Categorical    index into the values             the index (compared with Hamming)
Permutation    n columns: position of element i  the positions (compared per metric)
=============  ================================  ==========================================

A permutation value follows BaCO's convention: ``p[i]`` is the (0-based) position that
element ``i`` takes, so ``(1, 3, 2, 0)`` puts loop 3 outermost, then loop 0, loop 2, loop 1.
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from functools import cached_property
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from bayestune.exceptions import SpaceError
from bayestune.space.priors import BetaPrior, CategoricalPrior, beta_prior_from_spec

#: Permutations up to this many elements can be enumerated (9! = 362,880 rows).
MAX_ENUMERABLE_PERMUTATION = 9
PERMUTATION_METRICS = ("spearman", "kendall", "hamming")


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise SpaceError(f"parameter name must be a Python identifier, but got {name!r}")
    return name


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


class Parameter(ABC):
    """One tunable knob. Subclasses define the raw encoding described in the module doc."""

    kind: ClassVar[str]
    width: int = 1

    def __init__(self, name: str) -> None:
        self.name = _check_name(name)

    # ---- description -------------------------------------------------------------------
    @property
    @abstractmethod
    def cardinality(self) -> float:
        """Number of distinct values (``math.inf`` for a real parameter)."""

    @property
    def is_discrete(self) -> bool:
        return math.isfinite(self.cardinality)

    @property
    @abstractmethod
    def default(self) -> Any:
        """The user's default value (the first configuration of an initial design)."""

    @abstractmethod
    def to_spec(self) -> dict[str, Any]:
        """A JSON-ready description that :func:`bayestune.scenario` can read back."""

    # ---- value <-> raw -----------------------------------------------------------------
    @abstractmethod
    def validate(self, value: Any) -> Any:
        """Return ``value`` in canonical form or raise :class:`SpaceError` naming it."""

    @abstractmethod
    def to_raw(self, value: Any) -> np.ndarray:
        """Raw row block (shape ``(width,)``) of one *validated* value."""

    @abstractmethod
    def from_raw(self, raw: np.ndarray) -> Any:
        """User value of one raw row block."""

    def raw_from_values(self, values: Sequence[Any]) -> np.ndarray:
        out = np.empty((len(values), self.width))
        for i, v in enumerate(values):
            out[i] = self.to_raw(self.validate(v))
        return out

    def values_from_raw(self, raw: np.ndarray) -> list[Any]:
        raw = np.asarray(raw, dtype=float).reshape(-1, self.width)
        return [self.from_raw(r) for r in raw]

    @abstractmethod
    def columns(self, raw: np.ndarray) -> np.ndarray:
        """Vectorised user values for constraint evaluation: ``(N,)`` (or ``(N, n)`` for a permutation)."""

    def in_domain(self, raw: np.ndarray) -> np.ndarray:
        """Which raw rows encode a legal value (guards against corrupt or foreign input)."""
        raw = np.asarray(raw, dtype=float).reshape(-1, self.width)
        return np.all(np.isfinite(raw), axis=1)

    # ---- discrete enumeration (Chain-of-Trees) -----------------------------------------
    def grid(self) -> np.ndarray:
        """All raw values, ``(cardinality, width)``, in index order."""
        raise SpaceError(f"parameter {self.name!r} ({self.kind}) has no finite grid of values")

    def index_of(self, raw: np.ndarray) -> np.ndarray:
        """Position of each raw row in :meth:`grid` (int64)."""
        raise SpaceError(f"parameter {self.name!r} ({self.kind}) has no finite grid of values")

    def raw_of_index(self, index: np.ndarray) -> np.ndarray:
        return self.grid()[np.asarray(index, dtype=np.int64)]

    # ---- sampling and local moves ------------------------------------------------------
    @abstractmethod
    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        """``n`` raw rows, uniform over the domain (or following the prior)."""

    @abstractmethod
    def neighbours(self, raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Raw rows one local move away from ``raw`` (never including ``raw`` itself)."""

    def neighbours_many(self, raw: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Neighbours of every row of ``raw`` (m, width) and the row each came from."""
        raw = np.asarray(raw, dtype=float).reshape(-1, self.width)
        blocks = [self.neighbours(r, rng) for r in raw]
        owners = [np.full(len(b), i) for i, b in enumerate(blocks)]
        if not blocks:
            return np.empty((0, self.width)), np.empty(0, dtype=int)
        return np.concatenate(blocks).reshape(-1, self.width), np.concatenate(owners).astype(int)

    # ---- model features ----------------------------------------------------------------
    def unit(self, raw: np.ndarray) -> np.ndarray:
        """Model features of raw rows, ``(N, width)``; see the module table."""
        return np.asarray(raw, dtype=float).reshape(-1, self.width)

    def prior_weight(self, raw: np.ndarray) -> np.ndarray:
        """Prior density of raw rows relative to uniform (1.0 everywhere without a prior)."""
        return np.ones(np.asarray(raw).reshape(-1, self.width).shape[0])

    @property
    def has_prior(self) -> bool:
        return getattr(self, "prior", None) is not None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_spec()!r})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_spec() == other.to_spec()  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))


class _NumericParameter(Parameter):
    """Shared machinery of Real and Integer: bounds, log scale, Beta prior on the unit scale."""

    def __init__(self, name: str, low: float, high: float, *, log: bool, default: Any, prior: Any) -> None:
        super().__init__(name)
        if not (_is_number(low) and _is_number(high)) or not (math.isfinite(low) and math.isfinite(high)):
            raise SpaceError(f"parameter {name!r}: bounds must be finite numbers, but got low={low!r}, high={high!r}")
        if not low < high:
            raise SpaceError(f"parameter {name!r}: `low < high` must hold, but got (low={low!r}, high={high!r})")
        if log and low <= 0:
            raise SpaceError(f"parameter {name!r}: a log-scale parameter needs `low > 0`, but got low={low!r}")
        self.low, self.high, self.log = low, high, bool(log)
        self.prior: BetaPrior | None = beta_prior_from_spec(prior)
        if self.prior is not None and self.prior.is_uniform:
            self.prior = None
        self._default = self.validate(default) if default is not None else None

    def _t(self, v: np.ndarray) -> np.ndarray:
        return np.log(v) if self.log else v

    def _t_inv(self, t: np.ndarray) -> np.ndarray:
        return np.exp(t) if self.log else t

    def _to_unit_values(self, v: np.ndarray) -> np.ndarray:
        lo, hi = self._t(np.float64(self.low)), self._t(np.float64(self.high))
        return (self._t(np.asarray(v, dtype=float)) - lo) / (hi - lo)

    def _from_unit_values(self, u: np.ndarray) -> np.ndarray:
        lo, hi = self._t(np.float64(self.low)), self._t(np.float64(self.high))
        return self._t_inv(lo + np.clip(u, 0.0, 1.0) * (hi - lo))

    def unit(self, raw: np.ndarray) -> np.ndarray:
        return self._to_unit_values(np.asarray(raw, dtype=float).reshape(-1, 1))

    def columns(self, raw: np.ndarray) -> np.ndarray:
        return np.asarray(raw, dtype=float).reshape(-1)

    def in_domain(self, raw: np.ndarray) -> np.ndarray:
        v = np.asarray(raw, dtype=float).reshape(-1)
        return np.isfinite(v) & (v >= self.low) & (v <= self.high)

    def prior_weight(self, raw: np.ndarray) -> np.ndarray:
        if self.prior is None:
            return super().prior_weight(raw)
        return self.prior.pdf_unit(self.unit(raw).reshape(-1))

    def _spec_common(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"type": self.kind, "bounds": [self.low, self.high]}
        if self.log:
            spec["log"] = True
        if self._default is not None:
            spec["default"] = self._default
        if self.prior is not None:
            spec["prior"] = self.prior.to_spec()
        return spec


class Real(_NumericParameter):
    """A continuous value in ``[low, high]``, optionally on a log scale."""

    kind = "real"

    def __init__(self, name: str, low: float, high: float, *, log: bool = False,
                 default: float | None = None, prior: Any = None) -> None:
        super().__init__(name, low, high, log=log, default=default, prior=prior)

    @property
    def cardinality(self) -> float:
        return math.inf

    @property
    def default(self) -> float:
        if self._default is not None:
            return self._default
        return float(self._from_unit_values(np.float64(0.5)))

    def validate(self, value: Any) -> float:
        if not _is_number(value) or not math.isfinite(float(value)):
            raise SpaceError(f"parameter {self.name!r}: expected a finite number, but got {value!r}")
        v = float(value)
        if not self.low <= v <= self.high:
            raise SpaceError(f"parameter {self.name!r}: `{self.low} <= value <= {self.high}` must hold, but got {v!r}")
        return v

    def to_raw(self, value: Any) -> np.ndarray:
        return np.array([float(value)])

    def from_raw(self, raw: np.ndarray) -> float:
        return float(np.asarray(raw).reshape(-1)[0])

    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        u = self.prior.sample_unit(rng, n) if (use_prior and self.prior) else rng.random(n)
        return self._from_unit_values(u).reshape(-1, 1)

    def neighbours(self, raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        u = float(self.unit(raw)[0, 0])
        steps = np.concatenate([rng.normal(0.0, 0.05, 2), rng.normal(0.0, 0.2, 2)])
        cand = self._from_unit_values(np.clip(u + steps, 0.0, 1.0))
        cand = cand[cand != float(np.asarray(raw).reshape(-1)[0])]
        return cand.reshape(-1, 1)

    def to_spec(self) -> dict[str, Any]:
        return {"name": self.name, **self._spec_common()}


class Integer(_NumericParameter):
    """An integer in ``[low, high]`` (inclusive), optionally on a log scale."""

    kind = "integer"

    def __init__(self, name: str, low: int, high: int, *, log: bool = False,
                 default: int | None = None, prior: Any = None) -> None:
        for label, v in (("low", low), ("high", high)):
            if not _is_number(v) or float(v) != int(v):
                raise SpaceError(f"parameter {name!r}: integer bounds required, but got {label}={v!r}")
        super().__init__(name, int(low), int(high), log=log, default=default, prior=prior)

    @property
    def cardinality(self) -> float:
        return self.high - self.low + 1

    @property
    def default(self) -> int:
        if self._default is not None:
            return self._default
        return int(np.rint(self._from_unit_values(np.float64(0.5))))

    def validate(self, value: Any) -> int:
        if not _is_number(value) or not math.isfinite(float(value)) or float(value) != int(value):
            raise SpaceError(f"parameter {self.name!r}: expected an integer, but got {value!r}")
        v = int(value)
        if not self.low <= v <= self.high:
            raise SpaceError(f"parameter {self.name!r}: `{self.low} <= value <= {self.high}` must hold, but got {v!r}")
        return v

    def to_raw(self, value: Any) -> np.ndarray:
        return np.array([float(value)])

    def from_raw(self, raw: np.ndarray) -> int:
        return int(np.rint(np.asarray(raw).reshape(-1)[0]))

    def in_domain(self, raw: np.ndarray) -> np.ndarray:
        v = np.asarray(raw, dtype=float).reshape(-1)
        return super().in_domain(raw) & (v == np.rint(v))

    def grid(self) -> np.ndarray:
        return np.arange(self.low, self.high + 1, dtype=float).reshape(-1, 1)

    def index_of(self, raw: np.ndarray) -> np.ndarray:
        return np.rint(np.asarray(raw, dtype=float).reshape(-1)).astype(np.int64) - self.low

    def raw_of_index(self, index: np.ndarray) -> np.ndarray:
        return (np.asarray(index, dtype=float) + self.low).reshape(-1, 1)

    def _bin_probabilities(self) -> np.ndarray:
        u = self._to_unit_values(self.grid()[:, 0])
        edges = np.concatenate([[0.0], (u[1:] + u[:-1]) / 2, [1.0]])
        return self.prior.bin_probabilities(edges)  # type: ignore[union-attr]

    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        if use_prior and self.prior is not None:
            if self.cardinality <= 1_000_000:
                idx = rng.choice(int(self.cardinality), size=n, p=self._bin_probabilities())
                return self.raw_of_index(idx)
            v = np.rint(self._from_unit_values(self.prior.sample_unit(rng, n)))
        elif self.log:
            # Log-uniform: each octave equally likely, rounded to the nearest integer.
            lo, hi = math.log(self.low - 0.5 if self.low > 0.5 else self.low), math.log(self.high + 0.5)
            v = np.rint(np.exp(rng.uniform(lo, hi, n)))
        else:
            v = rng.integers(self.low, self.high + 1, size=n).astype(float)
        return np.clip(v, self.low, self.high).reshape(-1, 1)

    def neighbours(self, raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        v = float(np.asarray(raw).reshape(-1)[0])
        u = float(self.unit(raw)[0, 0])
        jumps = np.rint(self._from_unit_values(np.array([u - 0.1, u + 0.1])))
        cand = np.unique(np.concatenate([[v - 1, v + 1], jumps]))
        cand = cand[(cand >= self.low) & (cand <= self.high) & (cand != v)]
        return cand.reshape(-1, 1)

    def to_spec(self) -> dict[str, Any]:
        return {"name": self.name, **self._spec_common()}


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

    def neighbours(self, raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.neighbours_many(raw, rng)[0]


class Ordinal(_ValueListParameter):
    """One of a sorted list of numbers (e.g. powers of two), optionally compared on a log scale."""

    kind = "ordinal"

    def __init__(self, name: str, values: Sequence[float], *, log: bool = False,
                 default: float | None = None, prior: Any = None) -> None:
        super().__init__(name)
        vals = list(values) if values is not None else []
        if len(vals) == 0:
            raise SpaceError(f"parameter {name!r}: an ordinal needs at least one value, but got {values!r}")
        bad = [v for v in vals if not _is_number(v) or not math.isfinite(float(v))]
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
        self.prior: BetaPrior | None = beta_prior_from_spec(prior)
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
        if _is_number(value):
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

    def _bin_probabilities(self) -> np.ndarray:
        u = self._unit_values
        edges = np.concatenate([[0.0], (u[1:] + u[:-1]) / 2, [1.0]])
        return self.prior.bin_probabilities(edges)  # type: ignore[union-attr]

    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        if use_prior and self.prior is not None:
            idx = rng.choice(len(self.values), size=n, p=self._bin_probabilities())
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
        return self.prior.pdf_unit(self.unit(raw).reshape(-1))

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"name": self.name, "type": self.kind, "values": list(self.values)}
        if self.log:
            spec["log"] = True
        if self._default is not None:
            spec["default"] = self._default
        if self.prior is not None:
            spec["prior"] = self.prior.to_spec()
        return spec


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
                raise SpaceError(f"parameter {name!r}: categorical values must be strings, numbers or booleans, but got {v!r}")
        if len({(type(v) is str, v) for v in vals}) != len(vals):
            raise SpaceError(f"parameter {name!r}: categorical values must be distinct, but got {vals!r}")
        self.values = vals
        if all(isinstance(v, str) for v in vals):
            self._column_values = np.array(vals, dtype=str)
        elif all(_is_number(v) for v in vals):
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
        return np.array([float(self._find(value))])  # type: ignore[arg-type]

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

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"name": self.name, "type": self.kind, "values": list(self.values)}
        if self._default is not None:
            spec["default"] = self._default
        if self.prior is not None:
            spec["prior"] = self.prior.to_spec()
        return spec


def _permutation_table(n: int) -> np.ndarray:
    """All permutations of ``n`` elements in lexicographic order, as position vectors."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int16).reshape(-1, n)


class Permutation(Parameter):
    """An ordering of ``n`` elements (e.g. a loop order); ``value[i]`` = position of element i."""

    kind = "permutation"

    def __init__(self, name: str, n: int, *, metric: str = "spearman", default: Sequence[int] | None = None) -> None:
        super().__init__(name)
        if not _is_number(n) or int(n) != n or int(n) < 1:
            raise SpaceError(f"parameter {name!r}: a permutation needs `n >= 1` elements, but got n={n!r}")
        if metric not in PERMUTATION_METRICS:
            raise SpaceError(f"parameter {name!r}: unknown permutation metric {metric!r}; allowed: {list(PERMUTATION_METRICS)}")
        self.n = int(n)
        self.width = self.n
        self.metric = metric
        self._table: np.ndarray | None = None
        self._radix = np.array([math.factorial(self.n - 1 - i) for i in range(self.n)], dtype=np.int64)
        self._default = self.validate(default) if default is not None else None

    @property
    def cardinality(self) -> float:
        return float(math.factorial(self.n))

    @property
    def default(self) -> tuple[int, ...]:
        return self._default if self._default is not None else tuple(range(self.n))

    def validate(self, value: Any) -> tuple[int, ...]:
        if isinstance(value, str):  # "(1, 0, 2)" or "1,0,2" from CSV files
            text = value.strip().strip("()[]")
            try:
                value = [int(x) for x in text.split(",") if x.strip()]
            except ValueError:
                raise SpaceError(f"parameter {self.name!r}: cannot read a permutation from {value!r}") from None
        try:
            items = [int(v) for v in value]
            ok = all(float(a) == b for a, b in zip(value, items))
        except (TypeError, ValueError):
            ok = False
        if not ok or sorted(items) != list(range(self.n)):
            raise SpaceError(
                f"parameter {self.name!r}: expected a permutation of 0..{self.n - 1}, but got {value!r}"
            )
        return tuple(items)

    def to_raw(self, value: Any) -> np.ndarray:
        return np.asarray(value, dtype=float)

    def from_raw(self, raw: np.ndarray) -> tuple[int, ...]:
        return tuple(int(x) for x in np.rint(np.asarray(raw).reshape(-1)))

    def columns(self, raw: np.ndarray) -> np.ndarray:
        return np.rint(np.asarray(raw, dtype=float).reshape(-1, self.n)).astype(np.int64)

    def in_domain(self, raw: np.ndarray) -> np.ndarray:
        r = np.asarray(raw, dtype=float).reshape(-1, self.n)
        ok = np.all(np.isfinite(r) & (r == np.rint(r)), axis=1)
        srt = np.sort(np.where(np.isfinite(r), r, -1), axis=1)
        return ok & np.all(srt == np.arange(self.n), axis=1)

    def grid(self) -> np.ndarray:
        if self.n > MAX_ENUMERABLE_PERMUTATION:
            raise SpaceError(
                f"parameter {self.name!r}: a permutation of {self.n} elements has {math.factorial(self.n)} "
                f"values, too many to enumerate (limit n <= {MAX_ENUMERABLE_PERMUTATION})"
            )
        if self._table is None:
            self._table = _permutation_table(self.n)
        return self._table.astype(float)

    def index_of(self, raw: np.ndarray) -> np.ndarray:
        """Lexicographic rank via the Lehmer code, vectorised."""
        p = self.columns(raw)
        smaller_later = (p[:, None, :] < p[:, :, None]) & np.triu(np.ones((self.n, self.n), bool), 1)[None]
        lehmer = smaller_later.sum(axis=2)
        return lehmer.astype(np.int64) @ self._radix

    def raw_of_index(self, index: np.ndarray) -> np.ndarray:
        idx = np.asarray(index, dtype=np.int64).reshape(-1)
        if self.n <= MAX_ENUMERABLE_PERMUTATION:
            return self.grid()[idx]
        out = np.empty((len(idx), self.n))
        for k, r in enumerate(idx):
            remaining = list(range(self.n))
            for i in range(self.n):
                q, r = divmod(int(r), int(self._radix[i]))
                out[k, i] = remaining.pop(q)
        return out

    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        return np.argsort(rng.random((n, self.n)), axis=1).astype(float)

    @cached_property
    def _moves(self) -> np.ndarray:
        """Index maps of all swaps of two positions and all moves of one element to another
        position: ``order[moves[k]]`` is the k-th neighbouring order."""
        n = self.n
        identity = np.arange(n)
        maps = []
        for i in range(n):
            for j in range(i + 1, n):
                m = identity.copy()
                m[i], m[j] = m[j], m[i]
                maps.append(m)
        for i in range(n):
            for j in range(n):
                if abs(i - j) > 1:  # moves by one position equal adjacent swaps
                    maps.append(np.insert(np.delete(identity, i), j, i))
        return np.unique(np.array(maps).reshape(-1, n), axis=0)

    def neighbours(self, raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """All swaps of two elements plus all moves of one element to another position."""
        return self.neighbours_many(raw, rng)[0]

    def neighbours_many(self, raw: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        pos = self.columns(raw)
        if self.n < 2 or len(pos) == 0:
            return np.empty((0, self.n)), np.empty(0, dtype=int)
        orders = np.argsort(pos, axis=1)  # orders[r, k] = element at position k
        moved = orders[:, self._moves]  # (m, n_moves, n)
        positions = np.argsort(moved, axis=2).reshape(-1, self.n)
        owner = np.repeat(np.arange(len(pos)), len(self._moves))
        ok = np.any(positions != pos[owner], axis=1)
        return positions[ok].astype(float), owner[ok]

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"name": self.name, "type": self.kind, "n": self.n}
        if self.metric != "spearman":
            spec["metric"] = self.metric
        if self._default is not None:
            spec["default"] = list(self._default)
        return spec


PARAMETER_TYPES: dict[str, type[Parameter]] = {
    cls.kind: cls for cls in (Real, Integer, Ordinal, Categorical, Permutation)
}
