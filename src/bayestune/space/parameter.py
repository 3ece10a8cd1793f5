"""The interface every parameter type implements (see :mod:`bayestune.space.parameters` for
the raw encoding of each type)."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, TypeGuard

import numpy as np

from bayestune.exceptions import SpaceError


def check_name(name: object) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise SpaceError(f"parameter name must be a Python identifier, but got {name!r}")
    return name


def is_numeric(v: object) -> TypeGuard[int | float | np.integer | np.floating]:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def is_finite_number(v: object) -> bool:
    """A number a float can hold (a Python int of 4,000 digits is a number, but not one of these)."""
    try:
        return is_numeric(v) and math.isfinite(v)
    except OverflowError:
        return False


class Parameter(ABC):
    """One tunable knob. Subclasses define the raw encoding described in the module doc."""

    kind: ClassVar[str]
    width: int = 1

    def __init__(self, name: str) -> None:
        self.name = check_name(name)

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

    def _spec_with(self, domain: dict[str, Any]) -> dict[str, Any]:
        """``to_spec`` of a parameter: name, type, the domain keys, then log, default and prior
        where they differ from the plain parameter."""
        spec: dict[str, Any] = {"name": self.name, "type": self.kind, **domain}
        if getattr(self, "log", False):
            spec["log"] = True
        default, prior = getattr(self, "_default", None), getattr(self, "prior", None)
        if default is not None:
            spec["default"] = default
        if prior is not None:  # has_prior
            spec["prior"] = prior.to_spec()
        return spec

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_spec()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Parameter) and type(self) is type(other) and self.to_spec() == other.to_spec()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))


class IntegerTuple(Parameter):
    """A parameter whose value is a tuple of ``width`` integers stored one per raw column
    (permutations, perfect tiles): the raw conversions they share."""

    def to_raw(self, value: Any) -> np.ndarray:
        return np.asarray(value, dtype=float)

    def from_raw(self, raw: np.ndarray) -> tuple[int, ...]:
        return tuple(int(x) for x in np.rint(np.asarray(raw).reshape(-1)))

    def columns(self, raw: np.ndarray) -> np.ndarray:
        return np.rint(np.asarray(raw, dtype=float).reshape(-1, self.width)).astype(np.int64)
