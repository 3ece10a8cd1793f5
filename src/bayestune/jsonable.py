"""One conversion of Python/numpy values into JSON's shapes, for journals, scenarios and reports.

Configurations and results carry numpy scalars, arrays and tuples (permutations); JSON knows
numbers, strings, booleans, lists and objects. Every writer goes through :func:`to_jsonable`
so a value is stored the same way wherever it is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def to_jsonable(value: Any) -> Any:
    """``value`` with mappings, sequences and numpy values turned into plain JSON-ready objects.

    Mapping keys become strings; tuples, lists and arrays become lists; numpy scalars become
    Python numbers or booleans. TypeError names a value JSON cannot hold (an object, a set).
    """
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalar or array, without importing numpy here
        return to_jsonable(value.tolist())
    raise TypeError(f"{value!r} (type {type(value).__name__}) is not a number, string, boolean, sequence or mapping")
