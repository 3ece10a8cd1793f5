"""A parameter from a list of values: the one rule shared by T1 files, replayed caches and
journals whose space must be guessed from the configurations they hold.

Numbers become an :class:`Ordinal`, on a log scale when :func:`log_scale_suits` says so;
anything else (text, booleans, numbers mixed with text) a :class:`Categorical`. A *declared*
list (T1 ``Values``, a cache's ``tune_params``) is the whole domain. An *observed* list (the
values a journal happens to hold) samples a larger one: many or contiguous integers then
become an :class:`Integer` range, many other numbers a :class:`Real` range, and lists or tuples
(permutation values) a :class:`Permutation`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.space.parameters import Categorical, Integer, Ordinal, Parameter, Real
from bayestune.space.permutation import Permutation
from bayestune.space.space import Space

__all__ = [
    "MAX_OBSERVED_ORDINAL",
    "declared_domain",
    "is_integral",
    "is_number",
    "log_scale_suits",
    "parameter_for_values",
]

#: An observed numeric list with more distinct values than this is read as a range.
MAX_OBSERVED_ORDINAL = 16


def is_number(v: Any) -> TypeGuard[int | float]:
    """An int or float, but not a bool (which JSON and Python both count as a number)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_integral(v: Any) -> bool:
    return is_number(v) and math.isfinite(v) and float(v).is_integer()


def log_scale_suits(values: Sequence[float]) -> bool:
    """Whether a numeric value list is better compared on a log scale: its values are positive
    and more evenly spaced in log than in linear terms (powers of two, say, but not multiples of
    16), so that neighbouring values are equally far apart for the surrogate's kernel."""
    arr = np.unique(np.asarray(values, dtype=float))
    if len(arr) <= 2 or arr[0] <= 0:
        return False

    def unevenness(t: np.ndarray) -> float:
        gaps = np.diff(t)
        return float(gaps.max() / gaps.min())

    return unevenness(np.log(arr)) < unevenness(arr)


def declared_domain(values: Sequence[Any]) -> tuple[str, list[Any], bool]:
    """``(kind, values, log)`` of a declared value list: ``"ordinal"`` with the sorted distinct
    numbers and whether they suit a log scale, else ``"categorical"`` with the values as given."""
    if all(is_number(v) for v in values):
        ordered = sorted(set(values))
        return "ordinal", ordered, log_scale_suits(ordered)
    return "categorical", list(values), False


def _distinct(values: Sequence[Any]) -> list[Any]:
    """Values without repeats, in first-seen order, by a Categorical's equality: ``1`` and ``"1"``
    differ, ``1``, ``1.0`` and ``True`` are one value."""
    seen: list[Any] = []
    for v in values:
        if not any(isinstance(v, str) == isinstance(s, str) and v == s for s in seen):
            seen.append(v)
    return seen


def _observed_numbers(name: str, values: Sequence[float]) -> Parameter:
    distinct = sorted(set(float(v) for v in values))
    integral = all(float(v).is_integer() for v in values)
    if len(distinct) == 1:
        return Ordinal(name, [int(distinct[0])] if integral else distinct)
    if integral and (len(distinct) > MAX_OBSERVED_ORDINAL or distinct[-1] - distinct[0] + 1 == len(distinct)):
        return Integer(name, int(distinct[0]), int(distinct[-1]))
    if len(distinct) <= MAX_OBSERVED_ORDINAL:
        ordered = [int(v) if integral else v for v in distinct]
        return Ordinal(name, ordered, log=log_scale_suits(ordered))
    return Real(name, distinct[0], distinct[-1])


def parameter_for_values(name: str, values: Sequence[Any], *, observed: bool = False) -> Parameter:
    """The parameter whose domain is ``values`` (declared) or holds them (``observed``)."""
    if not values:
        raise ValueError(f"parameter {name!r}: cannot infer a domain from no values")
    if observed and all(isinstance(v, (list, tuple)) for v in values):
        return Permutation(name, max(len(v) for v in values))
    if observed:
        if all(is_number(v) for v in values):
            return _observed_numbers(name, values)
        return Categorical(name, _distinct(values))
    kind, domain, log = declared_domain(values)
    return Ordinal(name, domain, log=log) if kind == "ordinal" else Categorical(name, domain)


def infer_space(configs: Sequence[Mapping[str, Any]]) -> Space:
    """A space that holds every configuration, each parameter inferred from the values it takes
    (:func:`parameter_for_values` on observed values)."""
    if not configs:
        raise BayestuneError("cannot infer a search space from no configurations")
    names: dict[str, None] = {}
    for c in configs:
        names.update(dict.fromkeys(c))
    return Space([parameter_for_values(name, [c[name] for c in configs if name in c], observed=True) for name in names])
