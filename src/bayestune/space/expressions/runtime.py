"""Row-wise semantics of compiled expressions on float64 columns (NaN marks an invalid row).

Each operator and whitelisted function works on whole numpy columns and turns what would
raise in Python (division by zero, ``log(0)``, bit operations on fractions) into NaN, so that
evaluation never warns or raises because of the data; see :mod:`bayestune.space.expressions`.
"""

from __future__ import annotations

import ast
import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


def truth(value: Any) -> np.ndarray:
    """Python truthiness per row, coded 1.0 / 0.0; non-finite rows become NaN (invalid)."""
    v = np.asarray(value, dtype=float)
    return np.where(np.isfinite(v), v != 0, np.nan)


def python_and(x: Any, y: Any) -> np.ndarray:
    """``x and y`` per row: ``x`` where it is falsy, else ``y`` (whose NaN then counts)."""
    t = truth(x)
    return np.where(t == 0, x, np.where(t == 1, y, np.nan))


def python_or(x: Any, y: Any) -> np.ndarray:
    """``x or y`` per row: ``x`` where it is truthy, else ``y``."""
    t = truth(x)
    return np.where(t == 1, x, np.where(t == 0, y, np.nan))


def select(condition: Any, body: Any, orelse: Any) -> np.ndarray:
    """``body if condition else orelse`` per row; an invalid condition gives an invalid row."""
    t = truth(condition)
    return np.where(t == 1, body, np.where(t == 0, orelse, np.nan))


def _divide(x: Any, y: Any) -> Any:
    return np.where(np.equal(y, 0), np.nan, np.true_divide(x, y))


def _floor_divide(x: Any, y: Any) -> Any:
    return np.where(np.equal(y, 0), np.nan, np.floor_divide(x, y))


def _modulo(x: Any, y: Any) -> Any:
    """Python's ``%`` (sign of the divisor); exact for integer values below 2**53."""
    return np.where(np.equal(y, 0), np.nan, np.mod(x, y))


def _power(x: Any, y: Any) -> Any:
    """``x ** y``; ``0 ** negative`` is invalid (ZeroDivisionError in Python), and so is a
    negative base with a fractional exponent (a complex number in Python): numpy gives NaN."""
    return np.where(np.equal(x, 0) & np.less(y, 0), np.nan, np.power(x, y))


def _is_integral(v: np.ndarray) -> np.ndarray:
    """Rows holding an integer that float64 represents exactly (bit operations need one)."""
    return np.isfinite(v) & (v == np.round(v)) & (np.abs(v) <= 2.0**53)


def _integer_operation(op: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[Any, Any], np.ndarray]:
    """Lift an int64 operation to float columns: rows that are not integers are invalid
    (Python raises TypeError for ``2.5 & 1``)."""

    def apply(x: Any, y: Any) -> np.ndarray:
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        ok = _is_integral(x) & _is_integral(y)
        xi = np.where(ok, x, 0).astype(np.int64)
        yi = np.where(ok, y, 0).astype(np.int64)
        return np.where(ok, op(xi, yi).astype(float), np.nan)

    return apply


def _left_shift(x: Any, y: Any) -> np.ndarray:
    """``x << k`` as ``x * 2**k`` (exact, no int64 overflow); a negative count is invalid."""
    x, k = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = _is_integral(x) & _is_integral(k) & (k >= 0)
    return np.where(ok, x * np.exp2(np.where(ok, k, 0)), np.nan)


def _right_shift(x: Any, y: Any) -> np.ndarray:
    """``x >> k`` as ``floor(x / 2**k)``, which is Python's result for negative x too."""
    x, k = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = _is_integral(x) & _is_integral(k) & (k >= 0)
    return np.where(ok, np.floor(x / np.exp2(np.where(ok, k, 0))), np.nan)


def invert(x: Any) -> np.ndarray:
    """``~x`` on integers (``-x - 1``)."""
    x = np.asarray(x, dtype=float)
    return np.where(_is_integral(x), -x - 1, np.nan)


def _logarithm(fn: Callable[[Any], Any]) -> Callable[[Any], np.ndarray]:
    """A logarithm that is invalid for ``x <= 0`` (Python raises ValueError even for 0)."""
    return lambda x: np.where(np.greater(x, 0), fn(x), np.nan)


def _log(x: Any, base: Any = None) -> np.ndarray:
    if base is None:
        return _logarithm(np.log)(x)
    ok = np.greater(base, 0) & np.not_equal(base, 1)
    return np.where(ok, _divide(_logarithm(np.log)(x), np.log(base)), np.nan)


def _round(x: Any, ndigits: int = 0) -> Any:
    """Python's ``round``: halves go to the even neighbour, like ``np.round``."""
    return np.round(x, ndigits)


def element_at(positions: np.ndarray, k: int) -> np.ndarray:
    """Element that occupies position ``k`` in each row (inverse of the position matrix).

    One comparison pass instead of a full argsort of every row."""
    return np.argmax(positions == k, axis=1).astype(float)


#: Comparison operators; which operands they may meet is decided in ``Compiler.comparison``.
COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}

ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: _divide,
    ast.FloorDiv: _floor_divide,
    ast.Mod: _modulo,
    ast.Pow: _power,
    ast.LShift: _left_shift,
    ast.RShift: _right_shift,
}

#: ``&``, ``|``, ``^``: logical on two conditions (numpy/pandas and T1 usage), bitwise on integers.
#: On conditions coded 1/0/NaN, min/max/|x-y| are and/or/xor and propagate NaN.
BITWISE: dict[type, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]] = {
    ast.BitAnd: (np.minimum, _integer_operation(np.bitwise_and)),
    ast.BitOr: (np.maximum, _integer_operation(np.bitwise_or)),
    ast.BitXor: (lambda x, y: np.abs(np.subtract(x, y)), _integer_operation(np.bitwise_xor)),
}


@dataclass(frozen=True)
class Function:
    """A whitelisted numeric function: arity and the vectorised implementation."""

    min_args: int
    max_args: int | None
    apply: Callable[..., Any]
    literal_args: tuple[int, ...] = ()  # positions that must be integer constants


FUNCTIONS: dict[str, Function] = {
    "abs": Function(1, 1, np.abs),
    "min": Function(2, None, lambda *a: functools.reduce(np.minimum, a)),
    "max": Function(2, None, lambda *a: functools.reduce(np.maximum, a)),
    "log": Function(1, 2, _log),
    "log2": Function(1, 1, _logarithm(np.log2)),
    "log10": Function(1, 1, _logarithm(np.log10)),
    "sqrt": Function(1, 1, np.sqrt),
    "exp": Function(1, 1, np.exp),
    "floor": Function(1, 1, np.floor),
    "ceil": Function(1, 1, np.ceil),
    "round": Function(1, 2, _round, literal_args=(1,)),
    "int": Function(1, 1, np.trunc),
    "float": Function(1, 1, lambda x: np.asarray(x, dtype=float)),
    "pow": Function(2, 2, _power),
}
#: Functions on permutation parameters, handled separately (their first argument is a matrix).
PERMUTATION_FUNCTIONS = ("pos", "at")
ALLOWED_FUNCTIONS = sorted([*FUNCTIONS, *PERMUTATION_FUNCTIONS])


def numeric_comparison(compare: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Compare numbers; a row with a non-finite operand (an earlier failure) is invalid."""
    return lambda x, y: np.where(np.isfinite(x) & np.isfinite(y), compare(x, y), np.nan)


def object_comparison(
    compare: Callable[[Any, Any], Any], left_numeric: bool, right_numeric: bool
) -> Callable[[Any, Any], Any]:
    """``==`` / ``!=`` involving a mixed text/number categorical (Python equality per element)."""

    def test(x: Any, y: Any) -> Any:
        result = np.asarray(compare(np.asarray(x, dtype=object), y), dtype=float)
        for value, numeric in ((x, left_numeric), (y, right_numeric)):
            if numeric:
                result = np.where(np.isfinite(value), result, np.nan)
        return result

    return test
