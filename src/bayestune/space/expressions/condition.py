"""A compiled boolean expression over named variables, evaluated on whole columns.

:class:`Condition` is what known constraints (names are parameters) and output constraints
(names are measured outputs) share: compile once with the whitelist of
:mod:`~bayestune.space.expressions.compiler`, then say which of N rows hold.
:func:`numeric_condition` compiles an expression whose every free name is a number.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

import numpy as np

from bayestune.exceptions import ConstraintError
from bayestune.space.expressions.compiler import NUMBER, PERMUTATION, Compiler, Variable, parse, quote
from bayestune.space.expressions.runtime import truth

__all__ = ["Condition", "numeric_condition"]


class Condition:
    """A boolean expression over the names of ``scope``.

    Invalid rows (division by zero and the like) evaluate as False; a non-boolean result
    counts by Python truthiness. ``noun`` says what the names are, for messages.
    """

    def __init__(self, expression: str, scope: Mapping[str, Variable], *, noun: str = "parameters") -> None:
        if not isinstance(expression, str):
            raise ConstraintError(f"a constraint must be a string expression, but got {expression!r}")
        self.expression = expression
        self._compile(scope, noun)

    def _compile(self, scope: Mapping[str, Variable], noun: str) -> None:
        source, tree = parse(self.expression)
        compiler = Compiler(self.expression, source, scope, noun)
        try:
            root = compiler.compile(tree)
            if root.kind != NUMBER:
                compiler.require(root, tree.body)
        except RecursionError:
            raise ConstraintError(f"constraint {quote(self.expression)}: expression is nested too deeply") from None
        self._fn = root.fn
        self._scope: dict[str, Variable] = dict(compiler.variables)
        self.variables: frozenset[str] = frozenset(compiler.variables)

    # ---- evaluation --------------------------------------------------------------------
    def _inputs(self, columns: Mapping[str, np.ndarray]) -> tuple[int, dict[str, np.ndarray]]:
        """The columns this condition reads, converted once and checked for shape."""
        env: dict[str, np.ndarray] = {}
        n_rows: int | None = None
        for name in sorted(self.variables):
            if name not in columns:
                raise ConstraintError(
                    f"constraint {quote(self.expression)}: no column for parameter "
                    f"{name!r} (got columns {sorted(columns)})"
                )
            variable = self._scope[name]
            kind = variable.kind
            column = np.asarray(columns[name], dtype=float if kind == NUMBER else None)
            if kind == PERMUTATION:
                ok = column.ndim == 2 and column.shape[1] == variable.size
                column = np.rint(column).astype(np.int64) if column.dtype.kind == "f" else column
            else:
                ok = column.ndim == 1
            if not ok or (n_rows is not None and column.shape[0] != n_rows):
                raise ConstraintError(
                    f"constraint {quote(self.expression)}: column {name!r} has shape "
                    f"{column.shape}, which does not fit {n_rows} rows of a {kind} parameter"
                )
            n_rows = column.shape[0]
            env[name] = column
        if n_rows is None:  # a constant constraint: take N from any column
            if not columns:
                raise ConstraintError(
                    f"constraint {quote(self.expression)}: cannot tell the number of "
                    f"configurations from an empty set of columns"
                )
            n_rows = int(np.shape(next(iter(columns.values())))[0])
        return n_rows, env

    def evaluate(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """Which rows satisfy the condition: a bool array of shape ``(N,)``.

        ``columns`` maps each variable to its column (:meth:`Parameter.columns` output for a parameter).
        """
        n_rows, env = self._inputs(columns)
        with np.errstate(all="ignore"):
            try:
                value = self._fn(env)
            except (TypeError, ValueError, IndexError) as exc:  # a bug or foreign column data
                raise ConstraintError(f"constraint {quote(self.expression)} failed to evaluate: {exc}") from exc
            mask = np.asarray(truth(value) == 1)
        if mask.shape == (n_rows,):
            return mask
        if mask.ndim == 0:
            return np.full(n_rows, bool(mask))
        raise ConstraintError(
            f"constraint {quote(self.expression)}: result has shape {mask.shape}, expected ({n_rows},)"
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.expression!r})"

    def __getstate__(self) -> dict[str, Any]:
        """Closures cannot be pickled; keep the text and recompile (for worker processes)."""
        return {"expression": self.expression, "scope": self._scope}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.expression = state["expression"]
        self._compile(state["scope"], "parameters")


def numeric_condition(expression: str, *, noun: str = "outputs") -> Condition:
    """A :class:`Condition` whose every free name is a numeric variable (e.g. ``utilisation <= 100``
    over measured outputs): the same grammar and whitelist as known constraints, without a
    search space. ConstraintError names what is wrong."""
    _, tree = parse(expression) if isinstance(expression, str) else ("", None)
    if tree is None:
        raise ConstraintError(f"a constraint must be a string expression, but got {expression!r}")
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called}
    return Condition(expression, {n: Variable(NUMBER) for n in names}, noun=noun)
