"""Reading objective values from what a command printed: the three default forms and the
rules a scenario may declare (a regex or a JSON field).

The default rule is strict on purpose: with one objective the last line may be a bare number
with an optional unit (``3.2``, ``3.2 ms``) and nothing else, so ``[GPU 0]``, ``12,345``,
``1.5 +- 0.3`` or a black box echoing its own arguments (``fast 8 b``) become a ``parse``
failure that quotes the line instead of a wrong value that could win the run. An objective
given twice, or as a boolean, is refused the same way: which value was meant is a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bayestune.exceptions import EvaluationError
from bayestune.trial import FailureKind, Result, coerce_result

#: Output keys that carry a feasibility flag rather than a measurement (HyperMapper uses "Valid").
FEASIBLE_KEYS = ("feasible", "Valid", "valid")
#: Characters of an unreadable output line quoted in a parse failure.
QUOTED_LINE_CHARS = 200

_NUMBER = r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|(?:nan|inf(?:inity)?)\b)"
_NUMBER_RE = re.compile(rf"(?<![A-Za-z_]){_NUMBER}", re.IGNORECASE)
_LEADING_NUMBER_RE = re.compile(rf"^\s*({_NUMBER})(?:\s*[A-Za-z%/µ]+)?\s*$", re.IGNORECASE)
_KEY_VALUE_RE = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*[:=]\s*(.*?)\s*$")


class OutputRule:
    """How to read objective values from stdout when the default forms do not fit.

    ``regex``: searched in the whole output, the last match wins; its named groups name
    objectives and extra metrics (``"time=(?P<runtime>\\S+)"``), or, with one objective, a
    single unnamed group holds its value. ``json_fields``: ``objective -> dotted path`` into the
    JSON document printed last (``{"runtime": "results.mean"}``). A captured value must be one
    number, else the evaluation fails with kind ``"parse"``.
    """

    def __init__(self, *, regex: str | None = None, json_fields: Mapping[str, str] | None = None) -> None:
        if regex is not None and json_fields is not None:
            raise EvaluationError("give output_regex or output_json, not both")
        self.regex: re.Pattern[str] | None = None
        if regex is not None:
            try:
                self.regex = re.compile(regex, re.MULTILINE)
            except (re.error, TypeError) as exc:
                raise EvaluationError(f"output_regex {regex!r} is not a regular expression: {exc}") from None
            if not self.regex.groupindex and self.regex.groups != 1:
                raise EvaluationError(
                    f"output_regex {regex!r} needs named groups such as (?P<runtime>...) "
                    "or, for one objective, exactly one group"
                )
        self.json_fields = dict(json_fields) if json_fields is not None else None
        if self.json_fields is not None and not all(isinstance(v, str) and v for v in self.json_fields.values()):
            raise EvaluationError(f"output_json must map objective names to dotted paths, but got {json_fields!r}")

    def check(self, objectives: Sequence[str]) -> None:
        if self.regex is not None and self.regex.groupindex:
            missing = [o for o in objectives if o not in self.regex.groupindex]
            if missing:
                raise EvaluationError(f"output_regex {self.regex.pattern!r} has no group for objective(s) {missing}")
        if self.regex is not None and not self.regex.groupindex and len(objectives) != 1:
            raise EvaluationError(
                f"output_regex {self.regex.pattern!r} has one unnamed group but there are "
                f"{len(objectives)} objectives: name the groups after them"
            )
        if self.json_fields is not None:
            missing = [o for o in objectives if o not in self.json_fields]
            if missing:
                raise EvaluationError(f"output_json names no path for objective(s) {missing}")

    def read(self, stdout: str, objectives: Sequence[str]) -> Result:
        if self.regex is not None:
            return self._read_regex(stdout, objectives)
        return self._read_json(stdout, objectives)

    def _read_regex(self, stdout: str, objectives: Sequence[str]) -> Result:
        assert self.regex is not None
        matches = list(self.regex.finditer(stdout))
        if not matches:
            return Result.failure(
                f"output_regex {self.regex.pattern!r} matches nothing in the output; "
                f"the last line was {_quote(_last_line(stdout))}",
                FailureKind.PARSE,
            )
        match = matches[-1]
        groups = match.groupdict() if self.regex.groupindex else {objectives[0]: match.group(1)}
        values: dict[str, Any] = {}
        for name, text in groups.items():
            number = strict_number(text or "")
            if number is None:
                return Result.failure(
                    f"output_regex group {name!r} captured {_quote(text or '')}, which is not "
                    f"one number; the matched line was {_quote(match.group(0))}",
                    FailureKind.PARSE,
                )
            values[name] = number
        return coerce_result(values, objectives)

    def _read_json(self, stdout: str, objectives: Sequence[str]) -> Result:
        assert self.json_fields is not None
        document = _last_json(stdout)
        if document is None:
            return Result.failure(
                f"output_json: the output holds no JSON document; the last line was {_quote(_last_line(stdout))}",
                FailureKind.PARSE,
            )
        values: dict[str, Any] = {}
        for name, path in self.json_fields.items():
            node: Any = document
            for part in path.split("."):
                if isinstance(node, dict) and part in node:
                    node = node[part]
                elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
                    node = node[int(part)]
                else:
                    return Result.failure(
                        f"output_json: the output's JSON has no field {path!r} (for {name!r})", FailureKind.PARSE
                    )
            if isinstance(node, bool) or not isinstance(node, (int, float)):
                number = strict_number(node) if isinstance(node, str) else None
                if number is None:
                    return Result.failure(
                        f"output_json: field {path!r} is {_quote(json.dumps(node)[:200])}, not a number",
                        FailureKind.PARSE,
                    )
                node = number
            values[name] = float(node)
        return coerce_result(values, objectives)


def flatten_logs(data: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level fields as they are; nested objects flattened to dotted metric names
    (``Component.SubComponent.Metric``, the convention BoGraph groups by), keeping their numeric
    leaves only: a log may carry text (versions, host names) that is no measurement."""
    flat: dict[str, Any] = {}

    def walk(prefix: str, node: Mapping[str, Any]) -> None:
        for key, value in node.items():
            name = f"{prefix}.{key}"
            if isinstance(value, Mapping):
                walk(name, value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                flat[name] = value

    for key, value in data.items():
        if isinstance(value, Mapping):
            walk(str(key), value)
        else:
            flat[key] = value
    return flat


def _last_line(stdout: str) -> str:
    lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _json(text: str) -> Any:
    """``text`` as JSON, or None when it is not (a nesting too deep to read counts as not)."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError):
        return None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key given twice (which value was meant cannot be told)."""
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"a key appears twice: {sorted({k for k in keys if keys.count(k) > 1})}")
    return dict(pairs)


def _last_json(stdout: str) -> Any:
    document = _json(stdout)
    if document is not None:
        return document
    for line in reversed([ln.strip() for ln in stdout.splitlines() if ln.strip()]):
        if line[:1] in "{[":
            document = _json(line)
            if document is not None:
                return document
    return None


def parse_output(
    stdout: str, objectives: Sequence[str], feasible_key: str | None = None, rule: OutputRule | None = None
) -> Result:
    """Objective values from a command's stdout. Accepted forms, tried in order:

    0. with a ``rule`` (the black box's ``output_regex`` or ``output_json``), that rule only;
    1. the last non-empty line is a JSON object: ``{"runtime": 1.2, "feasible": true}``
       (objective names, extra metrics, optional ``feasible``/``Valid``); a nested object is a
       log, ``{"cache": {"misses": 12}}`` -> metric ``cache.misses`` (see :func:`flatten_logs`);
    2. ``name: value`` or ``name = value`` lines for every objective (anywhere in the output,
       the last one wins; a unit after the number is ignored: ``runtime: 3.2 ms``), plus an
       optional ``feasible``/``Valid`` line (``True``/``False``); other numeric lines are kept
       as extra metrics;
    3. one objective only: the last non-empty line is one bare number with an optional unit
       (``3.2``, ``3.2 ms``). Anything that could be read two ways is refused rather than
       guessed: other text around the number (``took 3.2 ms``, ``fast 8 b``: a black box may
       echo its arguments), a second number, a number glued to other text (``[GPU 0]``,
       ``12,345``, ``1.4-1.6``), an uncertainty (``+- 0.3``, ``±``), control or undecodable bytes.

    An objective given as true/false, or twice with different values, is a failure that quotes
    the line.

    Anything else is a failure of kind ``"parse"`` that says what was expected and quotes the
    last line; NaN/inf values are failures of kind ``"nan"``. ``feasible_key`` (the scenario's
    ``feasible_output``) replaces the default ``feasible``/``Valid`` flag names.
    """
    objectives = list(objectives)
    if rule is not None:
        return rule.read(stdout, objectives)
    flag_keys = (feasible_key,) if feasible_key else FEASIBLE_KEYS
    lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        return Result.failure(
            f"the command printed nothing on stdout; expected {_expected(objectives)}", FailureKind.PARSE
        )
    last = lines[-1]

    if last.startswith("{"):
        data = _json(last)
        if isinstance(data, dict):
            booleans = [o for o in objectives if isinstance(data.get(o), bool)]
            if booleans:
                return Result.failure(
                    f"objective(s) {booleans} are true/false, not numbers, in the output line {_quote(last)}",
                    FailureKind.PARSE,
                )
            return coerce_result(flatten_logs(data), objectives, feasible_key)

    pairs: dict[str, str] = {}
    for line in lines:
        m = _KEY_VALUE_RE.match(line)
        if m and m.group(2):
            key = m.group(1)
            if key in pairs and (key in objectives or key in flag_keys) and pairs[key] != m.group(2):
                return Result.failure(
                    f"{key!r} is given twice with different values ({_quote(pairs[key])}, then "
                    f"the line {_quote(line)}): which one is meant is a guess",
                    FailureKind.PARSE,
                )
            pairs[key] = m.group(2)
    flag_key = next((k for k in flag_keys if k in pairs), None)
    flag = pairs[flag_key] if flag_key is not None else None
    if flag is not None and flag.strip().lower() not in _TRUE + _FALSE:
        return Result.failure(
            f"{flag_key!r} is {_quote(flag)}, which is neither true nor false "
            f"({'/'.join(_TRUE)} or {'/'.join(_FALSE)})",
            FailureKind.PARSE,
        )
    numbers = {k: _leading_number(v) for k, v in pairs.items() if k not in flag_keys}
    numbers = {k: v for k, v in numbers.items() if v is not None}
    if all(o in numbers for o in objectives) or (flag is not None and not _truthy(flag)):
        mapping: dict[str, Any] = dict(numbers)
        if flag is not None:
            mapping["feasible"] = _truthy(flag)
        return coerce_result(mapping, objectives)

    reason = ""
    if len(objectives) == 1:
        value, reason = _lone_number(last)
        if value is not None:
            return coerce_result({objectives[0]: value}, objectives)

    unreadable = [o for o in objectives if o in pairs and o not in numbers]
    detail = f"; the value(s) of {unreadable} are not numbers" if unreadable else ""
    detail += f"; {reason}" if reason else ""
    return Result.failure(
        f"cannot read objective values from the command's output: expected {_expected(objectives)}{detail}; "
        f"the last line was {_quote(last)}",
        FailureKind.PARSE,
    )


_UNCERTAINTY_RE = re.compile(r"\+-|-\+|±|\+/-")


def _lone_number(line: str) -> tuple[float | None, str]:
    """The number of a ``line`` that is one bare number with an optional unit, and "", or None
    and why the line is not read: anything else could be a black box echoing its arguments
    (``fast 8 b``), a list, a range or a thousands separator."""
    if any(ch == "\ufffd" or (not ch.isprintable() and ch not in "\t") for ch in line):
        return None, "the line holds control characters or bytes that are not text"
    if _UNCERTAINTY_RE.search(line):
        return None, "the line gives an uncertainty (+-, ±): which number is the value is ambiguous"
    number = strict_number(line)
    if number is not None:
        return number, ""
    if not any(c.isdigit() for c in line):
        return None, ""
    return None, (
        "a line with other text around a number is not read as the value (it could be the black box "
        "echoing its own arguments); print the value alone ('3.2' or '3.2 ms'), as 'name: value', or "
        "declare output_regex/output_json"
    )


def strict_number(text: Any) -> float | None:
    """``text`` as a number if it is exactly one number (surrounding blanks and a unit allowed)."""
    if not isinstance(text, str):
        return None
    m = _LEADING_NUMBER_RE.match(text)
    return float(m.group(1)) if m else None


def _expected(objectives: Sequence[str]) -> str:
    forms = f"a JSON object or 'name: value' lines for {list(objectives)}"
    return forms + (" or a number on the last line" if len(objectives) == 1 else "")


def _leading_number(text: str) -> float | None:
    m = _LEADING_NUMBER_RE.match(text)
    return float(m.group(1)) if m else None


#: How a feasibility flag line reads (any case); anything else is a parse failure.
_TRUE = ("true", "1", "yes", "y")
_FALSE = ("false", "0", "no", "n")


def _truthy(text: str) -> bool:
    return text.strip().lower() in _TRUE


def _quote(line: str) -> str:
    if len(line) > QUOTED_LINE_CHARS:
        line = line[:QUOTED_LINE_CHARS] + "..."
    return repr(line)
