"""Names and literals valid in C: any parameter name becomes a distinct identifier, any value a literal.

Parameter names come from users (``tile-x``, ``2nd pass``, ``default``); the generated header
must compile whatever they are, so names are sanitised, kept clear of C keywords and reserved
spellings, and made distinct; strings are escaped byte by byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bayestune.exceptions import BayestuneError

C_KEYWORDS = frozenset(
    """
auto break case char const continue default do double else enum extern float for goto if inline int long
register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
_Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local
bool true false NULL alignas alignof static_assert thread_local
""".split()
)


def c_identifier(name: str) -> str:
    """``name`` as a C identifier: other characters become ``_``; never a keyword, a leading digit or a
    reserved ``_X`` / ``__`` start."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", str(name))
    if not ident or ident[0].isdigit() or re.match(r"_[A-Z_]", ident) or ident == "_":
        ident = "p" + ident
    if ident in C_KEYWORDS:
        ident += "_"
    return ident


class Namer:
    """Hands out distinct identifiers (``tile_x``, ``tile_x_2``, ...) in one namespace."""

    def __init__(self, reserved: Iterable[str] = (), *, upper: bool = False) -> None:
        self.upper = upper
        self.used = {self._norm(r) for r in reserved}

    def _norm(self, ident: str) -> str:
        return ident.upper() if self.upper else ident

    def name(self, wanted: str) -> str:
        base = self._norm(c_identifier(wanted))
        ident, n = base, 1
        while ident in self.used:
            n += 1
            ident = f"{base}_{n}"
        self.used.add(ident)
        return ident


def c_string(text: str) -> str:
    """A C string literal of ``text`` (UTF-8 bytes; quotes, backslashes, ``?`` and non-printables escaped)."""
    out = []
    for byte in str(text).encode("utf-8"):
        ch = chr(byte)
        if 32 <= byte < 127 and ch not in '"\\?':
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def c_comment(text: str) -> str:
    """Text safe inside a ``/* ... */`` comment by construction: printable ASCII without ``*``,
    ``\\`` and ``?`` (so no comment end, line splice or ``??/`` trigraph can be spelt), each other
    character ``_``. Names reach comments only through here; their values are string literals."""
    return "".join(ch if " " <= ch <= "~" and ch not in "*\\?" else "_" for ch in str(text))


def c_double(value: float) -> str:
    """An exact double literal (``repr`` round-trips; C reads it to the same double)."""
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        raise BayestuneError(f"the value {value!r} has no C literal")
    return text if any(c in text for c in ".e") else text + ".0"


def c_integer(value: int) -> str:
    """A ``long long`` literal."""
    return f"{int(value)}LL"


def valid_prefix(name: str) -> str:
    """The ``--name`` of the generated symbols, checked (it is the user's choice, so refuse, don't rewrite)."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name or "") or name in C_KEYWORDS:
        raise BayestuneError(
            f"name {name!r} must be a C identifier (a letter, then letters, digits or _), and not a keyword"
        )
    return name
