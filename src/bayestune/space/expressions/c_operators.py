"""C-style operators in Python-grammar expressions: T1 files, Kernel Tuner restrictions and
hand-written constraints use ``&&``, ``||`` and ``!``; :func:`translate_c_operators` rewrites
them as ``and``, ``or`` and ``(not ...)`` before the text is parsed."""

from __future__ import annotations

__all__ = ["translate_c_operators"]


def _string_end(text: str, start: int) -> int:
    """Index just past the string literal opening at ``start`` (or the end of ``text``)."""
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == quote:
            return i + 1
        else:
            i += 1
    return len(text)


def _bracket_end(text: str, start: int) -> int:
    """Index just past the bracket group opening at ``start``, skipping string literals."""
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch in "'\"":
            i = _string_end(text, i)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def _skip_spaces(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _unary_operand(text: str, i: int) -> tuple[int, int]:
    """Extent of the operand of a C ``!`` whose text starts at ``i``: leading unary
    operators, then a primary (name, number, string or bracket group) with any
    call/subscript suffixes. Returns (start of the primary, end of the operand).

    C's ``!`` binds tighter than comparisons, Python's ``not`` looser, so ``!a == b``
    must become ``(not a) == b`` rather than ``not a == b``.
    """
    i = _skip_spaces(text, i)
    while i < len(text) and text[i] in "!-+~" and not text.startswith("!=", i):
        i = _skip_spaces(text, i + 1)
    primary = i
    if i < len(text) and text[i] in "'\"":
        i = _string_end(text, i)
    elif i < len(text) and text[i] in "([":
        i = _bracket_end(text, i)
    else:
        while i < len(text) and (
            text[i].isalnum()
            or text[i] in "_."
            or (text[i] in "+-" and i > primary and text[i - 1] in "eE" and text[primary].isdigit())
        ):
            i += 1
    while True:  # calls and subscripts: f(x), order[0]
        j = _skip_spaces(text, i)
        if j < len(text) and text[j] in "([":
            i = _bracket_end(text, j)
        else:
            return primary, i


def translate_c_operators(text: str) -> str:
    """Rewrite ``&&``, ``||`` and a lone ``!`` (not ``!=``) as Python's ``and``, ``or``,
    ``(not ...)``, outside string literals; line breaks and tabs become spaces so that
    multi-line YAML strings parse as one expression.

    One pass without recursion: each ``!`` opens ``(not `` and schedules the closing
    parenthesis at the end of its operand (operands nest, so a stack suffices).
    """
    out: list[str] = []
    closes: list[int] = []  # where pending "(not " groups end, innermost last
    prefix_until, prefix_end = -1, -1  # a run like "!!!a" shares one operand end
    i = 0
    while i < len(text):
        while closes and closes[-1] <= i:
            out.append(")")
            closes.pop()
        ch = text[i]
        if ch in "'\"":
            end = _string_end(text, i)
            out.append(text[i:end])
            i = end
        elif text.startswith("&&", i):
            out.append(" and ")
            i += 2
        elif text.startswith("||", i):
            out.append(" or ")
            i += 2
        elif ch == "!" and not text.startswith("!=", i):
            if i >= prefix_until:
                prefix_until, prefix_end = _unary_operand(text, i + 1)
            out.append("(not ")
            closes.append(prefix_end)
            i += 1
        else:
            out.append(" " if ch in "\r\n\t" else ch)
            i += 1
    out.extend(")" * len(closes))
    return "".join(out)
