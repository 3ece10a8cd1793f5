"""Names and literals valid in C: any parameter name becomes a distinct identifier, any value a literal.

Parameter names come from users (``tile-x``, ``2nd pass``, ``default``); the generated header
must compile whatever they are, so names are sanitised, kept clear of C keywords and reserved
spellings, and made distinct; strings are escaped byte by byte.
"""

from __future__ import annotations

import math
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
#: Macros a name must not be, or the preprocessor replaces it: what compilers predefine without a
#: reserved spelling (``gcc -std=gnu11`` on Linux defines ``linux`` and ``unix`` as 1, i386 targets
#: ``i386``), ``<iso646.h>`` and the object-like macros of the standard headers a program using the
#: header is likely to include first (``<stdio.h>``'s ``EOF`` is ``(-1)``).
C_MACROS = frozenset(
    """
linux unix i386 i486 i586 i686 sun sparc mips vax mc68000 m68k hppa hp9000 sgi pdp11 ns32000 ibm gcos
and and_eq bitand bitor compl not not_eq or or_eq xor xor_eq
BUFSIZ EOF FILENAME_MAX FOPEN_MAX L_tmpnam SEEK_CUR SEEK_END SEEK_SET TMP_MAX stdin stdout stderr
EXIT_FAILURE EXIT_SUCCESS MB_CUR_MAX RAND_MAX MB_LEN_MAX CHAR_BIT errno offsetof
HUGE_VAL HUGE_VALF HUGE_VALL INFINITY NAN math_errhandling MATH_ERRNO MATH_ERREXCEPT DECIMAL_DIG
CLOCKS_PER_SEC TIME_UTC WEOF WCHAR_MIN WCHAR_MAX SIZE_MAX NDEBUG
""".split()
)
#: Families of standard macros (``<errno.h>``'s ``E...``, ``<signal.h>``'s ``SIG...``, limits,
#: ``<float.h>``, ``<math.h>``'s ``FP_...``, ``<stdint.h>``'s ``..._C`` and ``LC_...``).
_MACRO_FAMILIES = re.compile(
    r"E[A-Z0-9]+|SIG[A-Z0-9_]+|[A-Z0-9_]+_(MAX|MIN)|(FLT|DBL|LDBL|FP|LC|PRI|SCN)_\w+|U?INT\w*_C"
)


def c_identifier(name: str) -> str:
    """``name`` as a C identifier: other characters become ``_``; never a keyword, a macro a compiler
    or a standard header defines (:data:`C_MACROS`, gets a ``_`` appended), a leading digit or a
    reserved ``_X`` / ``__`` start."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", str(name))
    if not ident or ident[0].isdigit() or re.match(r"_[A-Z_]", ident) or ident == "_":
        ident = "p" + ident
    if ident in C_KEYWORDS or ident in C_MACROS or _MACRO_FAMILIES.fullmatch(ident):
        ident += "_"
    return ident


class Namer:
    """Hands out distinct identifiers (``tile_x``, ``tile_x_2``, ...) in one namespace.

    ``avoid_prefix``: a name starting with it gets a ``p`` in front (struct members never spell one
    of the header's own macros, which all start with ``PREFIX_``)."""

    def __init__(self, reserved: Iterable[str] = (), *, upper: bool = False, avoid_prefix: str = "") -> None:
        self.upper = upper
        self.avoid_prefix = avoid_prefix
        self.used = {self._norm(r) for r in reserved}

    def _norm(self, ident: str) -> str:
        return ident.upper() if self.upper else ident

    def name(self, wanted: str) -> str:
        base = self._norm(c_identifier(wanted))
        if self.avoid_prefix and base.startswith(self.avoid_prefix):
            base = "p" + base
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
    """An exact double literal (``repr`` round-trips; C reads it to the same double); BayestuneError
    for a value a double cannot hold exactly (an integer beyond 2**53 that is no double)."""
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if isinstance(value, int) and not isinstance(value, bool) and number != value:
        raise BayestuneError(f"the value {_short(value)} is not exactly a C double: a C header cannot hold it")
    text = repr(number)
    if text in ("inf", "-inf", "nan"):
        raise BayestuneError(f"the value {_short(value)} has no C literal")
    return text if any(c in text for c in ".e") else text + ".0"


#: The range of C's ``long long`` (at least 64 bits; every platform bayestune runs on has exactly 64).
LLONG_MIN, LLONG_MAX = -(2**63), 2**63 - 1


def c_integer(value: int) -> str:
    """A ``long long`` literal; BayestuneError outside its range (C would truncate it, with only a
    warning). The smallest value is spelt ``(-9223372036854775807LL - 1)``: ``9223372036854775808LL``
    does not exist for the minus to apply to."""
    value = int(value)
    if not LLONG_MIN <= value <= LLONG_MAX:
        raise BayestuneError(f"the value {_short(value)} does not fit C's long long: a C header cannot hold it")
    return f"({LLONG_MIN + 1}LL - 1)" if value == LLONG_MIN else f"{value}LL"


def _short(value: int | float) -> str:
    text = str(value)
    return text if len(text) <= 40 else f"{text[:12]}...{text[-6:]} ({len(text.lstrip('-'))} digits)"


def valid_prefix(name: str) -> str:
    """The ``--name`` of the generated symbols, checked (it is the user's choice, so refuse, don't rewrite)."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name or "") or name in C_KEYWORDS:
        raise BayestuneError(
            f"name {name!r} must be a C identifier (a letter, then letters, digits or _), and not a keyword"
        )
    return name
