"""One expression layer for user-written conditions: C-style operators translated
(:mod:`.c_operators`), the text parsed and checked against a whitelist and compiled into numpy
closures (:mod:`.compiler`, :mod:`.runtime`), and evaluated on whole columns (:mod:`.condition`).
T1 value lists, a different grammar evaluated once, have their own interpreter
(:mod:`.value_lists`) that shares the parse limits.

A constraint is written by the user, so it is untrusted text. It is parsed with
:func:`ast.parse` and every node is checked against a whitelist; nothing the user
writes ever reaches ``eval``/``exec``. The checked tree is compiled once into a tree
of small closures that work on whole numpy columns, because the Chain-of-Trees
builder evaluates constraints on millions of configurations at a time and a
Python-level loop over rows would dominate its run time.

How values flow through the closures
-------------------------------------
* Numbers (and booleans, coded ``1.0`` / ``0.0``) are float64 arrays of shape
  ``(N,)`` or plain scalars for constants; they broadcast where needed.
* **NaN marks an invalid row**: a row where Python itself would have raised, e.g.
  division or modulo by zero, ``log(0)``, ``sqrt(-1)``, ``0 ** -1``. NaN flows
  through arithmetic and comparisons, and is dropped only where Python would not
  have evaluated the failing part at all (the unused side of ``and``/``or`` and of
  ``x if c else y``). So ``b == 0 or a / b > 2`` holds for ``b == 0`` as in Python,
  while a row whose final value is invalid (or infinite, i.e. overflowed) is
  *infeasible*. Evaluation never warns or raises because of the data.
* Text (string categoricals and string literals) stays as numpy string arrays and
  may only be compared; permutation parameters are ``(N, n)`` position matrices and
  may only be indexed (``order[0]``) or passed to ``pos()`` / ``at()``. These rules
  are checked statically, so a malformed constraint fails when it is read, not in
  the middle of an optimisation run.
"""

from __future__ import annotations

from bayestune.space.expressions.c_operators import translate_c_operators
from bayestune.space.expressions.compiler import (
    MAX_EXPRESSION_LENGTH,
    MAX_NESTING_DEPTH,
    MIXED,
    NUMBER,
    PERMUTATION,
    TEXT,
    Variable,
    parse,
    quote,
)
from bayestune.space.expressions.condition import Condition, numeric_condition

__all__ = [
    "MAX_EXPRESSION_LENGTH",
    "MAX_NESTING_DEPTH",
    "MIXED",
    "NUMBER",
    "PERMUTATION",
    "TEXT",
    "Condition",
    "Variable",
    "numeric_condition",
    "parse",
    "quote",
    "translate_c_operators",
]
