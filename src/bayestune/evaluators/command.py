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
#: Seconds to wait for the pipes to close after the process group was killed.
DRAIN_SECONDS = 5.0

_NUMBER = r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|(?:nan|inf(?:inity)?)\b)"
_NUMBER_RE = re.compile(rf"(?<![A-Za-z_]){_NUMBER}", re.IGNORECASE)
_LEADING_NUMBER_RE = re.compile(rf"^\s*({_NUMBER})(?:\s*[A-Za-z%/µ]+)?\s*$", re.IGNORECASE)
_KEY_VALUE_RE = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*[:=]\s*(.*?)\s*$")


# ---- output parsing ------------------------------------------------------------------------
def parse_output(stdout: str, objectives: Sequence[str], feasible_key: str | None = None) -> Result:
    """Objective values from a command's stdout. Accepted forms, tried in order:

    1. the last non-empty line is a JSON object: ``{"runtime": 1.2, "feasible": true}``
       (objective names, extra metrics, optional ``feasible``/``Valid``);
    2. ``name: value`` or ``name = value`` lines for every objective (anywhere in the output,
       the last one wins; a unit after the number is ignored: ``runtime: 3.2 ms``), plus an
       optional ``feasible``/``Valid`` line (``True``/``False``); other numeric lines are kept
       as extra metrics;
    3. one objective only: the last number on the last non-empty line (``took 3.2 ms`` -> 3.2).

    Anything else is a failure of kind ``"parse"`` that says what was expected and quotes the
    last line; NaN/inf values are failures of kind ``"nan"``. ``feasible_key`` (the scenario's
    ``feasible_output``) replaces the default ``feasible``/``Valid`` flag names.
    """
    objectives = list(objectives)
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

    if len(objectives) == 1:
        found = _NUMBER_RE.findall(last)
        if found:
            return coerce_result({objectives[0]: float(found[-1])}, objectives)

    unreadable = [o for o in objectives if o in pairs and o not in numbers]
    detail = f"; the value(s) of {unreadable} are not numbers" if unreadable else ""
    return Result.failure(
        f"cannot read objective values from the command's output: expected {_expected(objectives)}{detail}; "
        f"the last line was {_quote(last)}", FailureKind.PARSE)


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
    return names


# ---- the evaluator -------------------------------------------------------------------------
class CommandEvaluator(Evaluator):
    """Runs ``template`` filled with a configuration as a shell command; reads stdout.

    ``parameter_names``: the space's parameter names; when given, the template is checked
    against them once, here (an unknown placeholder is an EvaluationError naming it and the
    known parameters). ``timeout``: seconds before the whole process group is killed (a
    failure of kind ``"timeout"``). ``workdir``: the command's working directory. ``env``:
    variables added to (overriding) the inherited environment. ``memory_limit_mb``: address-space
    limit (``RLIMIT_AS``) of the command and its children; reliable on Linux only (macOS does
    not enforce it) and unavailable on Windows. Allocation failures under the limit usually
    surface as a non-zero exit, a failure of kind ``"crash"``.
    """

    def __init__(self, template: str, objectives: Sequence[str], *,
                 parameter_names: Sequence[str] | None = None, timeout: float | None = None,
                 workdir: str | os.PathLike | None = None, env: Mapping[str, Any] | None = None,
                 memory_limit_mb: float | None = None, feasible_key: str | None = None) -> None:
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
        self._preexec = _memory_limiter(memory_limit_mb) if memory_limit_mb is not None else None

    def render(self, config: Mapping[str, Any]) -> str:
        """The shell command for ``config`` (KeyError/ValueError/TypeError if it does not fit)."""
        return self.template.format_map(_QuotedConfig(config))

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        try:
            cmd = self.render(config)
        except (KeyError, ValueError, TypeError) as exc:
            return Result.failure(f"cannot fill command template {self.template!r}: {exc}", FailureKind.TEMPLATE)
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                cmd, shell=True, start_new_session=True, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.workdir, env=self.env,
                preexec_fn=self._preexec,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return Result.failure(f"cannot start command {cmd!r}: {exc}", FailureKind.CRASH)
        logger.debug("started pid %d: %s", proc.pid, cmd)
        try:
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            elapsed = time.monotonic() - start
            _kill_group(proc)
            _, err = _drain(proc)
            return Result.failure(
                f"timed out after {elapsed:.1f} s (timeout {self.timeout:g} s); killed the process group of "
                f"{cmd!r}" + _stderr_note(err), FailureKind.TIMEOUT)
        except BaseException:  # Ctrl-C: the command runs in its own session, so it must be killed here
            _kill_group(proc)
            _drain(proc)
            raise
        _kill_group(proc)  # background jobs the command left behind
        rc = proc.returncode
        if rc != 0:
            return Result.failure(f"command {cmd!r} {_describe_exit(rc)}" + _stderr_note(err), FailureKind.CRASH)
        result = parse_output(out.decode(errors="replace"), self.objectives, self.feasible_key)
        if result.kind == FailureKind.PARSE and err.strip():
            return Result.failure(result.error + _stderr_note(err, STDERR_TAIL_CHARS // 3), FailureKind.PARSE)
        return result

    def __repr__(self) -> str:
        return f"CommandEvaluator({self.template!r}, objectives={self.objectives}, timeout={self.timeout})"


def _memory_limiter(memory_limit_mb: float) -> Callable[[], None]:
    if not (isinstance(memory_limit_mb, (int, float)) and not isinstance(memory_limit_mb, bool)
            and memory_limit_mb > 0 and math.isfinite(memory_limit_mb)):
        raise EvaluationError(f"memory_limit_mb must be a positive number, but got {memory_limit_mb!r}")
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
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def _drain(proc: subprocess.Popen) -> tuple[bytes, bytes]:
    """Collect what the killed group wrote; give up if a process outside it holds the pipes."""
    try:
        return proc.communicate(timeout=DRAIN_SECONDS)
    except subprocess.TimeoutExpired:
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()
        return b"", b""


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
