"""Black boxes run as shell commands: fill a template, run it, read the objectives from stdout.

A template names parameters in braces: ``"./bench --tile {tile} --order {order}"``. Every value
is shell-quoted (``shlex.quote``) before it is put in, so a categorical value such as
``a; rm -rf /`` reaches the program as one literal argument; do not add quotes around
placeholders yourself. A placeholder may stand only where that quoting makes the value one
literal word: inside quotes, right after a backslash, inside backquotes or in a here-document
the template is refused, and in ``$((...))`` arithmetic only a number is filled in. Permutations are written as comma-separated positions (``1,0,2``).
A format spec is applied to the value before quoting (``{alpha:.3f}``); literal braces are
written ``{{`` and ``}}``.

Each command runs in a new session (its own process group) with stdin closed, under a small
supervisor (:class:`~bayestune.evaluators.processes.CommandProcesses`). When it exceeds
``timeout`` every process it started gets SIGTERM, then SIGKILL after a grace period; when it
finishes, whatever it left running in the background is killed as well. On Linux this includes
descendants that left the group (``setsid``, double forks), so no stray job outlives its
evaluation (and skews the next measurement).

What the command prints on stdout is read by :func:`bayestune.evaluators.output.parse_output`;
starting, limiting and stopping its processes is :mod:`bayestune.evaluators.processes`.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shlex
import shutil
import string
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator
from bayestune.evaluators.output import OutputRule, parse_output
from bayestune.evaluators.processes import (
    PUNCH_GRANULE,
    STDERR_TAIL_CHARS,
    CommandProcesses,
    OutputBound,
    describe_exit,
    long_last_line,
    memory_limit_bytes,
    read_end,
    stderr_note,
)
from bayestune.evaluators.template_code import code_context
from bayestune.exceptions import EvaluationError
from bayestune.trial import FailureKind, Result

logger = logging.getLogger(__name__)

#: Default and largest cap (MB) on the stdout/stderr kept per evaluation (their ends are kept).
DEFAULT_MAX_OUTPUT_MB = 8.0
MAX_OUTPUT_MB_LIMIT = 1024.0
#: Shell words that start a command template without naming a program to look for.
SHELL_WORDS = frozenset(
    "! { ( [ [[ . : case cd command echo eval exec exit export for if printf read set test time trap true false "
    "ulimit umask unset until wait while".split()
)


# ---- template ------------------------------------------------------------------------------
def render_value(value: Any) -> str:
    """A parameter value as command-line text (before quoting): permutations as ``1,0,2``."""
    if isinstance(value, (tuple, list)):
        return ",".join(render_value(v) for v in value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalar
    return str(value)


class _Quoted:
    """A value that formats as one shell word (format spec applied first). Where quotes do not
    protect, only what is inert there: a number in arithmetic, one line in a comment."""

    __slots__ = ("value", "field", "context")

    def __init__(self, value: Any, field: str = "", context: str = "") -> None:
        self.value, self.field, self.context = value, field, context

    def __format__(self, spec: str) -> str:
        text = format(self.value, spec) if spec else render_value(self.value)
        if self.context == "((" and not _NUMBER.fullmatch(text):
            raise ValueError(
                f"placeholder '{{{self.field}}}' stands in $((...)) arithmetic, where only a number "
                f"is safe, but its value is {text!r}"
            )
        if self.context == "#" and "\n" in text:
            raise ValueError(
                f"placeholder '{{{self.field}}}' stands in a # comment, which a line break in its "
                f"value would end, and its value is {text!r}"
            )
        return shlex.quote(text)

    def __str__(self) -> str:
        return shlex.quote(render_value(self.value))

    __repr__ = __str__


class _QuotedConfig(dict):
    def __init__(self, config: Mapping[str, Any], contexts: Mapping[str, str] | None = None) -> None:
        super().__init__((k, _Quoted(v, k, (contexts or {}).get(k, ""))) for k, v in config.items())

    def __missing__(self, key: str) -> Any:
        raise KeyError(f"the configuration has no parameter {key!r} (it has {sorted(self)})")


def template_fields(template: str) -> list[str]:
    """Parameter names used as ``{placeholders}`` in ``template``; EvaluationError if malformed
    or if a placeholder stands where its quoted value could be interpreted by the shell."""
    return _checked_fields(template)[0]


def _checked_fields(template: str) -> tuple[list[str], dict[str, str]]:
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
                f"but got '{{{field}}}'"
            )
        if spec and "{" in spec:
            raise EvaluationError(
                f"command template {template!r}: nested placeholders in '{{{field}:{spec}}}' are not supported"
            )
        if field not in names:
            names.append(field)
    return names, _refuse_unsafe_placeholders(template, parsed)


_MARK = "\x00"  # stands for a placeholder while the template's shell syntax is scanned
_NUMBER = re.compile(r"[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")
_HEREDOC_WORD = re.compile(r"<<(-?)[ \t]*((?:[^\s;|&<>()]|\\.)+)")


def _placeholder_contexts(template: str, parsed: Sequence[tuple[str, str | None, str | None, str | None]]) -> list[str]:
    """The shell context of each placeholder of ``template``, in order: ``""`` (a plain word,
    where a quoted value is one literal argument), ``"'"``, ``'"'``, ``"\\"`` (right after a
    backslash), ``"`"``, ``"<<"`` (a here-document body), ``"(("`` (arithmetic) or ``"#"`` (a comment)."""
    text = "".join(lit.replace(_MARK, " ") + (_MARK if field is not None else "") for lit, field, _, _ in parsed)
    contexts: list[str] = []
    stack: list[str] = [""]  # "" unquoted, "'" '"' quotes, "(" $(...) or (...), "((" arithmetic, "`"
    heredocs: list[tuple[str, bool]] = []  # delimiters met on this line, their bodies start at the newline
    i = 0
    while i < len(text):
        ch, top = text[i], stack[-1]
        if ch == _MARK:
            why = (
                code_context(text[:i].replace(_MARK, "X"), text[i + 1 :].replace(_MARK, "X"))
                if top in ("", "(")
                else None
            )
            contexts.append(top if top in ("'", '"', "`", "((") else f"code:{why}" if why else "")
        elif top == "'":
            if ch == "'":
                stack.pop()
        elif ch == "\\":
            if text[i + 1 : i + 2] == _MARK:
                contexts.append("\\")
            i += 1  # the next character is escaped
        elif ch == "$" and text[i + 1 : i + 3] == "((":
            stack.append("((")
            i += 2
        elif ch == "$" and text[i + 1 : i + 2] == "(":
            stack.append("(")
            i += 1
        elif ch == "`":
            stack.pop() if top == "`" else stack.append("`")
        elif top == '"':
            if ch == '"':
                stack.pop()
        elif ch in "'\"":
            stack.append(ch)
        elif ch == ")" and top == "((" and text[i + 1 : i + 2] == ")":
            stack.pop()
            i += 1
        elif ch == "(":
            stack.append("((" if text[i + 1 : i + 2] == "(" and top != "((" else "(")
            i += 1 if stack[-1] == "((" else 0
        elif ch == ")" and top in ("(", "(("):
            stack.pop()
        elif ch == "#" and (i == 0 or text[i - 1] in " \t\n;&|("):
            while i + 1 < len(text) and text[i + 1] != "\n":
                i += 1  # a comment: nothing in it reaches the shell
                contexts += ["#"] if text[i] == _MARK else []
        elif text[i : i + 2] == "<<" and text[i + 2 : i + 3] != "<" and text[i - 1 : i] != "<":
            match = _HEREDOC_WORD.match(text, i)
            if match:
                word = match.group(2)
                contexts += ["<<"] * word.count(_MARK)
                heredocs.append((re.sub(r"\\(.)|['\"]", r"\1", word), bool(match.group(1))))
                i = match.end() - 1
        elif ch == "\n" and heredocs:
            i = _skip_heredoc_bodies(text, i + 1, heredocs, contexts) - 1
            heredocs = []
        i += 1
    return contexts


def _skip_heredoc_bodies(text: str, i: int, heredocs: Sequence[tuple[str, bool]], contexts: list[str]) -> int:
    """Where the here-document bodies starting at ``i`` end; each placeholder in them is noted."""
    for delimiter, strip_tabs in heredocs:
        while i < len(text):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            line = text[i:end]
            i = end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
            contexts += ["<<"] * line.count(_MARK)
    return min(i, len(text))


_WHY = {
    "'": "inside '...' quotes; bayestune quotes every value as one shell word itself, and inside your quotes "
    "that quoting breaks: remove the quotes around it",
    '"': 'inside "..." quotes; bayestune quotes every value as one shell word itself, and inside your quotes '
    "that quoting breaks: remove the quotes around it",
    "\\": "right after a backslash, which escapes the quote bayestune puts around the value: remove the backslash",
    "eval": "in a command that parses its arguments as shell code again (eval, sh -c): pass the value as "
    "an argument or in the environment instead",
    "`": "inside `...` command substitution, where a value's backquote ends it: write $(...) instead",
    "<<": "in a here-document, where the shell (or the program reading it) interprets the text as it stands: "
    "pass the value as an argument or in the environment instead (e.g. VALUE={%s} python3 - <<'EOF')",
}


def _refuse_unsafe_placeholders(
    template: str, parsed: Sequence[tuple[str, str | None, str | None, str | None]]
) -> dict[str, str]:
    """EvaluationError if a placeholder stands where a quoted value would not be one literal word
    (shell injection through a value); the fields that stand in arithmetic (``"(("``, numbers only)
    or in a comment (``"#"``, one line only)."""
    fields = [field for _, field, _, _ in parsed if field is not None]
    restricted: dict[str, str] = {}
    for field, context in zip(fields, _placeholder_contexts(template, parsed)):
        if context in ("((", "#"):
            if restricted.get(field) != "((":
                restricted[field] = context
        elif context.startswith("code:"):
            raise EvaluationError(
                f"command template {template!r}: placeholder '{{{field}}}' stands as {context[5:]} "
                "(shell injection through a value): pass the value as an argument of a script, or in the "
                "environment, instead"
            )
        elif context:
            why = _WHY[context] % field if "%s" in _WHY[context] else _WHY[context]
            raise EvaluationError(
                f"command template {template!r}: placeholder '{{{field}}}' stands {why} "
                "(shell injection through a value)"
            )
    return restricted


# ---- the evaluator -------------------------------------------------------------------------
class CommandEvaluator(Evaluator):
    """Runs ``template`` filled with a configuration as a shell command; reads stdout.

    ``parameter_names``: the space's parameter names; when given, the template is checked
    against them once, here (an unknown placeholder is an EvaluationError naming it and the
    known parameters). ``timeout``: seconds before every process of the command gets SIGTERM, then
    SIGKILL after ``TERM_GRACE_SECONDS`` (a failure of kind ``"timeout"``). ``workdir``: the
    command's working directory. ``env``: variables added to (overriding) the inherited
    environment. ``memory_limit_mb``: address-space limit (``RLIMIT_AS``) of the command and its
    children; reliable on Linux only (macOS does not enforce it) and unavailable on Windows.
    Allocation failures under the limit usually surface as a non-zero exit, a failure of kind
    ``"crash"``. ``output_regex`` / ``output_json``: an :class:`OutputRule` that replaces the
    default output forms. ``max_output_mb``: the most of stdout/stderr kept (their ends).

    How the command runs: stdout and stderr go to temporary files, not pipes, so a background
    job that keeps them open cannot hold the result back; the result is read when the command's
    own process exits, and whatever it left running is killed then. On Linux a supervisor that
    is a child subreaper (``PR_SET_CHILD_SUBREAPER``) stands between us and the shell, so even
    descendants that call ``setsid`` or double-fork are found and stopped; it gets a death
    signal (``PR_SET_PDEATHSIG``): when the process that started it dies, even by ``kill -9``,
    it kills every process below it, so no black box keeps running beside its own re-run.
    """

    def __init__(
        self,
        template: str,
        objectives: Sequence[str],
        *,
        parameter_names: Sequence[str] | None = None,
        timeout: float | None = None,
        workdir: str | os.PathLike | None = None,
        env: Mapping[str, Any] | None = None,
        memory_limit_mb: float | None = None,
        feasible_key: str | None = None,
        output_regex: str | None = None,
        output_json: Mapping[str, str] | str | None = None,
        max_output_mb: float = DEFAULT_MAX_OUTPUT_MB,
        read_output: bool = True,
    ) -> None:
        if not isinstance(template, str) or not template.strip():
            raise EvaluationError(f"command template must be a non-empty string, but got {template!r}")
        super().__init__(objectives)
        self.template = template
        self.feasible_key = feasible_key
        self.fields, self._contexts = _checked_fields(template)
        if parameter_names is not None:
            known = list(parameter_names)
            unknown = [f for f in self.fields if f not in known]
            if unknown:
                raise EvaluationError(
                    f"command template {template!r} uses placeholder(s) {['{' + u + '}' for u in unknown]} "
                    f"that are not parameters; known parameters: {known}"
                )
        if timeout is not None and not (
            isinstance(timeout, (int, float))
            and not isinstance(timeout, bool)
            and timeout > 0
            and math.isfinite(timeout)
        ):
            raise EvaluationError(f"command timeout must be a positive number of seconds, but got {timeout!r}")
        self.timeout = float(timeout) if timeout is not None else None
        if workdir is not None and not Path(workdir).is_dir():
            raise EvaluationError(f"command working directory {str(workdir)!r} does not exist")
        self.workdir = str(workdir) if workdir is not None else None
        self.env = {**os.environ, **{str(k): str(v) for k, v in (env or {}).items()}} if env else None
        self.memory_limit_mb = memory_limit_mb
        if isinstance(output_json, str):
            if len(self.objectives) != 1:
                raise EvaluationError(
                    f"output_json {output_json!r} is one path but there are "
                    f"{len(self.objectives)} objectives: map each objective to its path"
                )
            output_json = {self.objectives[0]: output_json}
        self.output_rule = (
            OutputRule(regex=output_regex, json_fields=output_json)
            if output_regex is not None or output_json is not None
            else None
        )
        if self.output_rule is not None:
            self.output_rule.check(self.objectives)
        if (
            isinstance(max_output_mb, bool)
            or not isinstance(max_output_mb, (int, float))
            or not 0 < max_output_mb <= MAX_OUTPUT_MB_LIMIT
        ):
            raise EvaluationError(
                f"max_output_mb must be a number in (0, {MAX_OUTPUT_MB_LIMIT}], but got {max_output_mb!r}"
            )
        self.max_output_bytes = int(max_output_mb * 1024 * 1024)
        self.read_output = bool(read_output)  # False: a step whose success is its exit status (a build)
        self._memory_limit = memory_limit_bytes(memory_limit_mb) if memory_limit_mb is not None else None

    def render(self, config: Mapping[str, Any]) -> str:
        """The shell command for ``config`` (KeyError/ValueError/TypeError if it does not fit)."""
        return self.template.format_map(_QuotedConfig(config, self._contexts))

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        try:
            cmd = self.render(config)
        except (KeyError, ValueError, TypeError) as exc:
            return Result.failure(f"cannot fill command template {self.template!r}: {exc}", FailureKind.TEMPLATE)
        with (
            tempfile.TemporaryFile(prefix="bayestune-out-") as out_file,
            tempfile.TemporaryFile(prefix="bayestune-err-") as err_file,
        ):
            try:
                procs = CommandProcesses(
                    cmd,
                    stdout=out_file,
                    stderr=err_file,
                    cwd=self.workdir,
                    env=self.env,
                    memory_limit=self._memory_limit,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                return Result.failure(f"cannot start command {cmd!r}: {exc}", FailureKind.CRASH)
            start = time.monotonic()  # the limit counts from the command's start, not the supervisor's launch
            logger.debug("started pid %d: %s", procs.pid, cmd)
            try:
                bounds = [OutputBound(f, self.max_output_bytes + PUNCH_GRANULE) for f in (out_file, err_file)]

                def check_bounds() -> None:
                    for bound in bounds:
                        bound()

                rc = procs.wait(timeout=self.timeout, every=check_bounds)
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - start
                how = procs.terminate()
                err = read_end(err_file, self.max_output_bytes)
                return Result.failure(
                    f"timed out after {elapsed:.1f} s (timeout {self.timeout:g} s); {how} the processes of "
                    f"{cmd!r}" + stderr_note(err),
                    FailureKind.TIMEOUT,
                )
            except BaseException:  # Ctrl-C: the command runs in its own session, so it must be killed here
                procs.kill()
                raise
            procs.finish()  # background jobs the command left behind
            out = read_end(out_file, self.max_output_bytes)
            err = read_end(err_file, self.max_output_bytes)
            too_long = long_last_line(out_file, self.max_output_bytes) if rc == 0 and not out.strip() else None
        if too_long is not None and self.read_output:
            return Result.failure(
                f"command {cmd!r} printed {too_long:,} bytes on stdout ending in one line longer than the "
                f"{self.max_output_bytes / 2**20:g} MB kept (max_output_mb), so no line of it could be read; "
                "print the objective on a line of its own" + stderr_note(err),
                FailureKind.PARSE,
            )
        if rc != 0:
            return Result.failure(f"command {cmd!r} {describe_exit(rc)}" + stderr_note(err), FailureKind.CRASH)
        if not self.read_output:
            return Result()
        result = parse_output(out.decode(errors="replace"), self.objectives, self.feasible_key, self.output_rule)
        if result.kind == FailureKind.PARSE and err.strip():
            return Result.failure((result.error or "") + stderr_note(err, STDERR_TAIL_CHARS // 3), FailureKind.PARSE)
        return result

    def check_program(self) -> None:
        """EvaluationError if the template's program (its first word) does not exist or is not
        executable: a typo is caught before a run spends its budget on ``not found``."""
        try:
            words = shlex.split(self.template.strip().splitlines()[0] if self.template.strip() else "")
        except ValueError:
            return
        while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():  # VAR=value prefixes
            words.pop(0)
        if not words or words[0] in SHELL_WORDS or "{" in words[0] or "$" in words[0]:
            return
        program = words[0]
        workdir = Path(self.workdir or ".")
        if "/" in program:
            path = workdir / program
            if not path.exists():
                raise EvaluationError(f"the black box's program {program!r} does not exist (looked in {workdir})")
            if not os.access(path, os.X_OK):
                raise EvaluationError(f"the black box's program {program!r} is not executable (chmod +x {path})")
        elif shutil.which(program, path=(self.env or os.environ).get("PATH")) is None:
            raise EvaluationError(f"the black box's program {program!r} is not on PATH")

    def __repr__(self) -> str:
        return f"CommandEvaluator({self.template!r}, objectives={self.objectives}, timeout={self.timeout})"
