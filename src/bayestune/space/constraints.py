"""Known constraints: user expressions such as ``tile_x * tile_y <= 1024`` over a tuning space.

A constraint is a :class:`~bayestune.space.expressions.Condition` whose names are the
space's parameters; each parameter's column kind (:func:`variable_of`) decides how it may be
used. Parsing, the whitelist and the numpy semantics live in :mod:`bayestune.space.expressions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from bayestune.exceptions import ConstraintError
from bayestune.space.expressions.compiler import (
    MAX_EXPRESSION_LENGTH,
    MAX_NESTING_DEPTH,
    MIXED,
    NUMBER,
    PERMUTATION,
    TEXT,
    Variable,
    quote,
)
from bayestune.space.expressions.condition import Condition
from bayestune.space.parameters import Parameter

__all__ = [
    "MAX_EXPRESSION_LENGTH",
    "MAX_NESTING_DEPTH",
    "Constraint",
    "KnownConstraint",
    "parse_constraints",
    "variable_of",
]


class KnownConstraint(Protocol):
    """What a space and its Chain-of-Trees use of a known constraint: an expression
    (:class:`Constraint`) and a table of allowed rows (:mod:`bayestune.space.membership`) both fit."""

    @property
    def expression(self) -> str: ...

    @property
    def variables(self) -> frozenset[str]: ...

    def evaluate(self, columns: Mapping[str, np.ndarray]) -> np.ndarray: ...


def variable_of(parameter: Parameter) -> Variable:
    """Static kind of a parameter's column (see :meth:`Parameter.columns`)."""
    if parameter.kind in ("permutation", "perfect_tile"):  # (N, n) columns, indexed as p[i]
        return Variable(PERMUTATION, int(parameter.width))
    if parameter.kind == "categorical":
        values = list(getattr(parameter, "values", []))
        texts = sum(isinstance(v, str) for v in values)
        if texts == len(values):
            return Variable(TEXT)
        if texts:
            return Variable(MIXED)
    return Variable(NUMBER)


class Constraint(Condition):
    """A known constraint: a boolean expression over parameter values.

    ``Constraint("tile_x * tile_y <= 1024", space.parameters).evaluate(columns)`` returns
    which of the N configurations satisfy it. Invalid rows (division by zero and the
    like) evaluate as False; a non-boolean result counts by Python truthiness.
    """

    def __init__(self, expression: str, parameters: Mapping[str, Parameter]) -> None:
        super().__init__(expression, {n: variable_of(p) for n, p in parameters.items()})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Constraint) and other.expression == self.expression

    def __hash__(self) -> int:
        return hash(("Constraint", self.expression))


def parse_constraints(expressions: Sequence[str], parameters: Mapping[str, Parameter]) -> list[Constraint]:
    """Compile a list of constraint expressions; the first bad one raises ConstraintError."""
    if isinstance(expressions, str):
        raise ConstraintError(
            f"constraints must be a list of expressions, but got the single string "
            f"{quote(expressions)}; wrap it in a list"
        )
    return [Constraint(e, parameters) for e in expressions]
