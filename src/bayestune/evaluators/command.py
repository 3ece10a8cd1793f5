"""Black boxes run as shell commands: fill a template, run it, read the objectives from stdout.

A template names parameters in braces: ``"./bench --tile {tile} --order {order}"``. Every value
is shell-quoted (``shlex.quote``) before it is put in, so a categorical value such as
``a; rm -rf /`` reaches the program as one literal argument; do not add quotes around
placeholders yourself. Permutations are written as comma-separated positions (``1,0,2``).
A format spec is applied to the value before quoting (``{alpha:.3f}``); literal braces are
written ``{{`` and ``}}``.

Each command runs in a new session (its own process group) with stdin closed. When it
exceeds ``timeout`` the whole group is killed with SIGKILL, grandchildren included; when it
finishes, whatever it left running in the background is killed as well, so no stray job
outlives its evaluation (and skews the next measurement).

What the command prints on stdout is read by :func:`parse_output`.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shlex
import signal
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator, tail
from bayestune.exceptions import EvaluationError
from bayestune.trial import FailureKind, Result, coerce_result

logger = logging.getLogger(__name__)

#: Output keys that carry a feasibility flag rather than a measurement (HyperMapper uses "Valid").
FEASIBLE_KEYS = ("feasible", "Valid", "valid")
#: Characters of stderr quoted in a crash's error text.
STDERR_TAIL_CHARS = 1500
#: Characters of an unreadable output line quoted in a parse failure.
QUOTED_LINE_CHARS = 200
#: Seconds between SIGTERM and SIGKILL when a command times out, for it to clean up.
TERM_GRACE_SECONDS = 2.0
#: Default and largest cap (MB) on the stdout/stderr kept per evaluation (their ends are kept).
DEFAULT_MAX_OUTPUT_MB = 8.0
MAX_OUTPUT_MB_LIMIT = 1024.0
#: Accepted range of ``memory_limit_mb`` (below 1 MB no shell starts; above 16 TB is no limit).
MIN_MEMORY_LIMIT_MB = 1.0
MAX_MEMORY_LIMIT_MB = 16 * 1024 * 1024.0

_NUMBER = r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|(?:nan|inf(?:inity)?)\b)"
_NUMBER_RE = re.compile(rf"(?<![A-Za-z_]){_NUMBER}", re.IGNORECASE)
_LEADING_NUMBER_RE = re.compile(rf"^\s*({_NUMBER})(?:\s*[A-Za-z%/µ]+)?\s*$", re.IGNORECASE)
_KEY_VALUE_RE = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*[:=]\s*(.*?)\s*$")


# ---- output parsing ------------------------------------------------------------------------
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
                raise EvaluationError(f"output_regex {regex!r} needs named groups such as (?P<runtime>...) "
                                      "or, for one objective, exactly one group")
        self.json_fields = dict(json_fields) if json_fields is not None else None
        if self.json_fields is not None and not all(isinstance(v, str) and v for v in self.json_fields.values()):
            raise EvaluationError(f"output_json must map objective names to dotted paths, but got {json_fields!r}")

    def check(self, objectives: Sequence[str]) -> None:
        if self.regex is not None and self.regex.groupindex:
            missing = [o for o in objectives if o not in self.regex.groupindex]
            if missing:
                raise EvaluationError(f"output_regex {self.regex.pattern!r} has no group for objective(s) {missing}")
        if self.regex is not None and not self.regex.groupindex and len(objectives) != 1:
            raise EvaluationError(f"output_regex {self.regex.pattern!r} has one unnamed group but there are "
                                  f"{len(objectives)} objectives: name the groups after them")
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
            return Result.failure(f"output_regex {self.regex.pattern!r} matches nothing in the output; "
                                  f"the last line was {_quote(_last_line(stdout))}", FailureKind.PARSE)
        match = matches[-1]
        groups = match.groupdict() if self.regex.groupindex else {objectives[0]: match.group(1)}
        values: dict[str, Any] = {}
        for name, text in groups.items():
            number = strict_number(text or "")
            if number is None:
                return Result.failure(f"output_regex group {name!r} captured {_quote(text or '')}, which is not "
                                      f"one number; the matched line was {_quote(match.group(0))}", FailureKind.PARSE)
            values[name] = number
        return coerce_result(values, objectives)

    def _read_json(self, stdout: str, objectives: Sequence[str]) -> Result:
        assert self.json_fields is not None
        document = _last_json(stdout)
        if document is None:
            return Result.failure(f"output_json: the output holds no JSON document; the last line was "
                                  f"{_quote(_last_line(stdout))}", FailureKind.PARSE)
        values: dict[str, Any] = {}
        for name, path in self.json_fields.items():
            node: Any = document
            for part in path.split("."):
                if isinstance(node, dict) and part in node:
                    node = node[part]
                elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
                    node = node[int(part)]
                else:
                    return Result.failure(f"output_json: the output's JSON has no field {path!r} (for {name!r})",
                                          FailureKind.PARSE)
            if isinstance(node, bool) or not isinstance(node, (int, float)):
                number = strict_number(node) if isinstance(node, str) else None
                if number is None:
                    return Result.failure(f"output_json: field {path!r} is {_quote(json.dumps(node)[:200])}, "
                                          "not a number", FailureKind.PARSE)
                node = number
            values[name] = float(node)
        return coerce_result(values, objectives)


def _last_line(stdout: str) -> str:
    lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _last_json(stdout: str) -> Any:
    try:
        return json.loads(stdout)
    except ValueError:
        pass
    for line in reversed([ln.strip() for ln in stdout.splitlines() if ln.strip()]):
        if line[:1] in "{[":
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def parse_output(stdout: str, objectives: Sequence[str], feasible_key: str | None = None,
                 rule: OutputRule | None = None) -> Result:
    """Objective values from a command's stdout. Accepted forms, tried in order:

    0. with a ``rule`` (the black box's ``output_regex`` or ``output_json``), that rule only;
    1. the last non-empty line is a JSON object: ``{"runtime": 1.2, "feasible": true}``
       (objective names, extra metrics, optional ``feasible``/``Valid``);
    2. ``name: value`` or ``name = value`` lines for every objective (anywhere in the output,
       the last one wins; a unit after the number is ignored: ``runtime: 3.2 ms``), plus an
       optional ``feasible``/``Valid`` line (``True``/``False``); other numeric lines are kept
       as extra metrics;
    3. one objective only: the last non-empty line holds exactly one unambiguous number
       (``took 3.2 ms`` -> 3.2). Anything that could be read two ways is refused rather than
       guessed: a second number, a number glued to other text (``[GPU 0]``, ``12,345``,
       ``1.4-1.6``), an uncertainty (``+- 0.3``, ``±``), control or undecodable bytes.

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
        return Result.failure(f"the command printed nothing on stdout; expected {_expected(objectives)}", FailureKind.PARSE)
    last = lines[-1]

    if last.startswith("{"):
        try:
            data = json.loads(last)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return coerce_result(data, objectives, feasible_key)

    pairs: dict[str, str] = {}
    for line in lines:
        m = _KEY_VALUE_RE.match(line)
        if m and m.group(2):
            pairs[m.group(1)] = m.group(2)
    flag = next((pairs[k] for k in flag_keys if k in pairs), None)
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
        f"the last line was {_quote(last)}", FailureKind.PARSE)


_NUMBER_TOKEN_RE = re.compile(rf"^{_NUMBER}(?:[A-Za-z%µ/]+)?$", re.IGNORECASE)
_WORD_TOKEN_RE = re.compile(r"^[A-Za-z_(\[][\w./%µ()\[\]-]*[:,;)\]]?$")
_UNCERTAINTY_RE = re.compile(r"\+-|-\+|±|\+/-")


def _lone_number(line: str) -> tuple[float | None, str]:
    """The one number of ``line`` and "", or None and why the line is ambiguous."""
    if any(ch == "\ufffd" or (not ch.isprintable() and ch not in "\t") for ch in line):
        return None, "the line holds control characters or bytes that are not text"
    if _UNCERTAINTY_RE.search(line):
        return None, "the line gives an uncertainty (+-, ±): which number is the value is ambiguous"
    found: list[float] = []
    for token in line.split():
        if _NUMBER_TOKEN_RE.match(token):
            found.append(float(_NUMBER_RE.match(token).group(0)))  # type: ignore[union-attr]
        elif any(c.isdigit() for c in token) and not _WORD_TOKEN_RE.match(token):
            return None, (f"{token!r} mixes digits with other text (a list, a range, a thousands separator?); "
                          "print the value alone or declare output_regex/output_json")
    if len(found) == 1:
        return found[0], ""
    if not found:
        return None, ""
    return None, (f"the line holds {len(found)} numbers; print the value alone, as 'name: value', "
                  "or declare output_regex/output_json")


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


def _truthy(text: str) -> bool:
    return text.strip().lower() in ("true", "1", "yes", "y")


def _quote(line: str) -> str:
    if len(line) > QUOTED_LINE_CHARS:
        line = line[:QUOTED_LINE_CHARS] + "..."
    return repr(line)


# ---- template ------------------------------------------------------------------------------
def render_value(value: Any) -> str:
    """A parameter value as command-line text (before quoting): permutations as ``1,0,2``."""
    if isinstance(value, (tuple, list)):
        return ",".join(render_value(v) for v in value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalar
    return str(value)


class _Quoted:
    """A value that formats as one shell word (format spec applied first)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __format__(self, spec: str) -> str:
        text = format(self.value, spec) if spec else render_value(self.value)
        return shlex.quote(text)

    def __str__(self) -> str:
        return shlex.quote(render_value(self.value))

    __repr__ = __str__


class _QuotedConfig(dict):
    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__((k, _Quoted(v)) for k, v in config.items())

    def __missing__(self, key: str) -> Any:
        raise KeyError(f"the configuration has no parameter {key!r} (it has {sorted(self)})")


def template_fields(template: str) -> list[str]:
    """Parameter names used as ``{placeholders}`` in ``template``; EvaluationError if malformed."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise EvaluationError(
            f"command template {template!r} is malformed ({exc}); write literal braces as '{{{{' and '}}}}'"
        ) from None
    names: list[str] = []
    for _, field, spec, _ in parsed:
        if field is None:
            continue
        if not field.isidentifier():
            raise EvaluationError(
                f"command template {template!r}: placeholders must be parameter names such as '{{tile}}', "
                f"but got '{{{field}}}'")
        if spec and "{" in spec:
            raise EvaluationError(f"command template {template!r}: nested placeholders in '{{{field}:{spec}}}' "
                                  "are not supported")
        if field not in names:
            names.append(field)
    _refuse_quoted_placeholders(template, parsed)
    return names


def _refuse_quoted_placeholders(template: str, parsed: Sequence[tuple[str, str | None, str | None, str | None]]) -> None:
    """EvaluationError if a placeholder stands inside '...' or "..." quotes of the template.

    Every value is already quoted as one shell word; inside the user's own quotes that quoting
    ends the user's quote instead, and a categorical value such as ``x' ; rm -rf ~ '`` runs.
    """
    stack: list[str] = [""]  # open contexts: "" unquoted, "'" or '"' quotes, "(" $(...) or (...), "`"
    for literal, field, _, _ in parsed:
        i = 0
        while i < len(literal):
            ch, top = literal[i], stack[-1]
            if top == "'":
                if ch == "'":
                    stack.pop()
            elif ch == "\\":
                i += 1  # the next character is escaped
            elif ch == "$" and literal[i + 1:i + 2] == "(":
                stack.append("(")
                i += 1
            elif ch == "`":
                if top == "`":
                    stack.pop()
                else:
                    stack.append("`")
            elif top == '"':
                if ch == '"':
                    stack.pop()
            elif ch in "'\"":
                stack.append(ch)
            elif ch == "(":
                stack.append("(")
            elif ch == ")" and top == "(":
                stack.pop()
            i += 1
        quote = stack[-1] if stack[-1] in ("'", '"') else None
        if field is not None and quote is not None:
            raise EvaluationError(
                f"command template {template!r}: placeholder '{{{field}}}' stands inside {quote}...{quote} quotes; "
                "bayestune quotes every value as one shell word itself, and inside your quotes that quoting "
                f"breaks (shell injection through a value): remove the quotes around '{{{field}}}'")


# ---- the evaluator -------------------------------------------------------------------------
class CommandEvaluator(Evaluator):
    """Runs ``template`` filled with a configuration as a shell command; reads stdout.

    ``parameter_names``: the space's parameter names; when given, the template is checked
    against them once, here (an unknown placeholder is an EvaluationError naming it and the
    known parameters). ``timeout``: seconds before the whole process group gets SIGTERM, then
    SIGKILL after ``TERM_GRACE_SECONDS`` (a failure of kind ``"timeout"``). ``workdir``: the
    command's working directory. ``env``: variables added to (overriding) the inherited
    environment. ``memory_limit_mb``: address-space limit (``RLIMIT_AS``) of the command and its
    children; reliable on Linux only (macOS does not enforce it) and unavailable on Windows.
    Allocation failures under the limit usually surface as a non-zero exit, a failure of kind
    ``"crash"``. ``output_regex`` / ``output_json``: an :class:`OutputRule` that replaces the
    default output forms. ``max_output_mb``: the most of stdout/stderr kept (their ends).

    How the command runs: stdout and stderr go to temporary files, not pipes, so a background
    job that keeps them open cannot hold the result back; the result is read when the command's
    own process exits, and whatever it left in its process group is killed then. The command's
    shell gets a death signal (Linux ``PR_SET_PDEATHSIG``): when the process that started it
    dies, even by ``kill -9``, the shell kills its whole process group, so no black box keeps
    running beside its own re-run.
    """

    def __init__(self, template: str, objectives: Sequence[str], *,
                 parameter_names: Sequence[str] | None = None, timeout: float | None = None,
                 workdir: str | os.PathLike | None = None, env: Mapping[str, Any] | None = None,
                 memory_limit_mb: float | None = None, feasible_key: str | None = None,
                 output_regex: str | None = None, output_json: Mapping[str, str] | str | None = None,
                 max_output_mb: float = DEFAULT_MAX_OUTPUT_MB) -> None:
        if not isinstance(template, str) or not template.strip():
            raise EvaluationError(f"command template must be a non-empty string, but got {template!r}")
        super().__init__(objectives)
        self.template = template
        self.feasible_key = feasible_key
        self.fields = template_fields(template)
        if parameter_names is not None:
            known = list(parameter_names)
            unknown = [f for f in self.fields if f not in known]
            if unknown:
                raise EvaluationError(
                    f"command template {template!r} uses placeholder(s) {['{' + u + '}' for u in unknown]} "
                    f"that are not parameters; known parameters: {known}")
        if timeout is not None and not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
                                        and timeout > 0 and math.isfinite(timeout)):
            raise EvaluationError(f"command timeout must be a positive number of seconds, but got {timeout!r}")
        self.timeout = float(timeout) if timeout is not None else None
        if workdir is not None and not Path(workdir).is_dir():
            raise EvaluationError(f"command working directory {str(workdir)!r} does not exist")
        self.workdir = str(workdir) if workdir is not None else None
        self.env = {**os.environ, **{str(k): str(v) for k, v in (env or {}).items()}} if env else None
        self.memory_limit_mb = memory_limit_mb
        if isinstance(output_json, str):
            if len(self.objectives) != 1:
                raise EvaluationError(f"output_json {output_json!r} is one path but there are "
                                      f"{len(self.objectives)} objectives: map each objective to its path")
            output_json = {self.objectives[0]: output_json}
        self.output_rule = (OutputRule(regex=output_regex, json_fields=output_json)
                            if output_regex is not None or output_json is not None else None)
        if self.output_rule is not None:
            self.output_rule.check(self.objectives)
        if isinstance(max_output_mb, bool) or not isinstance(max_output_mb, (int, float)) \
                or not 0 < max_output_mb <= MAX_OUTPUT_MB_LIMIT:
            raise EvaluationError(f"max_output_mb must be a number in (0, {MAX_OUTPUT_MB_LIMIT}], "
                                  f"but got {max_output_mb!r}")
        self.max_output_bytes = int(max_output_mb * 1024 * 1024)
        self._preexec = _child_setup(_memory_limiter(memory_limit_mb) if memory_limit_mb is not None else None)

    def render(self, config: Mapping[str, Any]) -> str:
        """The shell command for ``config`` (KeyError/ValueError/TypeError if it does not fit)."""
        return self.template.format_map(_QuotedConfig(config))

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        try:
            cmd = self.render(config)
        except (KeyError, ValueError, TypeError) as exc:
            return Result.failure(f"cannot fill command template {self.template!r}: {exc}", FailureKind.TEMPLATE)
        with tempfile.TemporaryFile(prefix="bayestune-out-") as out_file, \
                tempfile.TemporaryFile(prefix="bayestune-err-") as err_file:
            start = time.monotonic()
            try:
                proc = subprocess.Popen(
                    ["/bin/sh", "-c", _supervised(cmd)], start_new_session=True, stdin=subprocess.DEVNULL,
                    stdout=out_file, stderr=err_file, cwd=self.workdir, env=self.env, preexec_fn=self._preexec,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                return Result.failure(f"cannot start command {cmd!r}: {exc}", FailureKind.CRASH)
            logger.debug("started pid %d: %s", proc.pid, cmd)
            try:
                proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - start
                how = _terminate_group(proc)
                err = _read_end(err_file, self.max_output_bytes)
                return Result.failure(
                    f"timed out after {elapsed:.1f} s (timeout {self.timeout:g} s); {how} the process group of "
                    f"{cmd!r}" + _stderr_note(err), FailureKind.TIMEOUT)
            except BaseException:  # Ctrl-C: the command runs in its own session, so it must be killed here
                _kill_group(proc)
                proc.wait()
                raise
            _kill_group(proc)  # background jobs the command left behind
            rc = proc.returncode
            out = _read_end(out_file, self.max_output_bytes)
            err = _read_end(err_file, self.max_output_bytes)
        if rc != 0:
            return Result.failure(f"command {cmd!r} {_describe_exit(rc)}" + _stderr_note(err), FailureKind.CRASH)
        result = parse_output(out.decode(errors="replace"), self.objectives, self.feasible_key, self.output_rule)
        if result.kind == FailureKind.PARSE and err.strip():
            return Result.failure(result.error + _stderr_note(err, STDERR_TAIL_CHARS // 3), FailureKind.PARSE)
        return result

    def __repr__(self) -> str:
        return f"CommandEvaluator({self.template!r}, objectives={self.objectives}, timeout={self.timeout})"


def _supervised(cmd: str) -> str:
    """The shell script that runs ``cmd`` and kills its own process group on SIGHUP.

    SIGHUP is the shell's death signal (see :func:`_child_setup`); ``wait`` returns at once
    when a trapped signal arrives, while a foreground command would delay the trap until it
    ends. ``cmd``'s exit status is the script's.
    """
    return f"trap 'kill -KILL 0' HUP\n(\n{cmd}\n) &\nwait $!\n"


def _child_setup(limit_memory: Callable[[], None] | None) -> Callable[[], None]:
    parent = os.getpid()
    set_death_signal = _death_signal_setter()

    def setup() -> None:  # runs in the child between fork and exec
        if set_death_signal is not None:
            set_death_signal()
            if os.getppid() != parent:  # the parent died before the death signal was armed
                os._exit(1)
        if limit_memory is not None:
            limit_memory()

    return setup


def _death_signal_setter() -> Callable[[], None] | None:
    """``prctl(PR_SET_PDEATHSIG, SIGHUP)`` on Linux, else None (no death signal: best effort)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def arm() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGHUP), 0, 0, 0)

    return arm


def _memory_limiter(memory_limit_mb: float) -> Callable[[], None]:
    if not (isinstance(memory_limit_mb, (int, float)) and not isinstance(memory_limit_mb, bool)
            and MIN_MEMORY_LIMIT_MB <= memory_limit_mb <= MAX_MEMORY_LIMIT_MB):
        raise EvaluationError(f"memory_limit_mb must be a number of megabytes in [{MIN_MEMORY_LIMIT_MB}, "
                              f"{MAX_MEMORY_LIMIT_MB:g}], but got {memory_limit_mb!r}")
    try:
        import resource
    except ImportError:
        raise EvaluationError(f"memory_limit_mb needs POSIX resource limits, unavailable on {sys.platform}") from None
    if not sys.platform.startswith("linux"):
        logger.warning("memory_limit_mb: RLIMIT_AS may not be enforced on %s", sys.platform)
    limit = int(memory_limit_mb * 1024 * 1024)

    def limit_memory() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return limit_memory


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the command's process group (its pgid is its pid: it leads a new session)."""
    _signal_group(proc, signal.SIGKILL)


def _signal_group(proc: subprocess.Popen, sig: int) -> bool:
    try:
        os.killpg(proc.pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False  # the group is already gone


def _terminate_group(proc: subprocess.Popen) -> str:
    """SIGTERM the group, SIGKILL what is left after a grace period; says what it did."""
    _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + TERM_GRACE_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None and not _group_alive(proc.pid):
            proc.wait()
            return "SIGTERM ended"
        time.sleep(0.02)
    _kill_group(proc)
    proc.wait()
    return f"SIGTERM, then after {TERM_GRACE_SECONDS:g} s SIGKILL, ended"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _read_end(file: Any, limit: int) -> bytes:
    """The last ``limit`` bytes a command wrote to ``file`` (output beyond the cap is dropped)."""
    file.flush()
    size = file.seek(0, os.SEEK_END)
    if size > limit:
        file.seek(size - limit)
        data = file.read(limit)
        cut = data.find(b"\n")
        return data[cut + 1:] if cut >= 0 else data
    file.seek(0)
    return file.read()


def _describe_exit(rc: int) -> str:
    if rc < 0:
        return f"was killed by signal {_signal_name(-rc)}"
    text = f"exited with code {rc}"
    if rc > 128 and _signal_name(rc - 128) != str(rc - 128):
        text += f" (128+{rc - 128}: killed by {_signal_name(rc - 128)}?)"
    return text


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return str(num)


def _stderr_note(err: bytes, limit: int = STDERR_TAIL_CHARS) -> str:
    text = err.decode(errors="replace").strip()
    return f"\nstderr (end):\n{tail(text, limit)}" if text else ""
