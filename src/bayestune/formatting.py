"""Values as text, in the two forms bayestune writes them.

:func:`format_value` is exact and machine-read (CSV cells, the external-tool protocol):
floats keep every digit, permutations read ``(1, 0, 2)``. :func:`display` is for people
(the CLI's tables, the HTML report): six significant digits. :func:`did_you_mean` suggests
the closest allowed name in an error.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from typing import Any


def format_value(value: Any) -> str:
    """A parameter value as exact text: permutations ``(1, 0, 2)``, floats by ``repr``."""
    if hasattr(value, "tolist"):  # numpy scalar / array
        value = value.tolist()
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(str(int(v)) for v in value) + ")"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def display(value: Any) -> str:
    """A value for people to read: floats to six significant digits, sequences as ``(a,b)``."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return "(" + ",".join(display(v) for v in value) + ")"
    return str(value)


def did_you_mean(name: str, allowed: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the allowed name closest to a misspelt ``name``, else ``""``:
    every "unknown key / option / strategy" message offers it."""
    close = difflib.get_close_matches(str(name), [str(a) for a in allowed], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
