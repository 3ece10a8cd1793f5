"""External-process mode: a long-running tool, in any language, evaluates configurations that
bayestune sends over its stdin, and answers on its stdout (HyperMapper 2.0's client-server idea).

The line protocol is specified in ``docs/external_protocol.md``. In short, bayestune writes::

    Request 2
    tile,order
    16,"(0, 1, 2)"
    32,"(2, 1, 0)"

and the tool answers with a header naming the parameters, the objectives and optionally a
feasibility column, then one row per configuration::

    tile,order,runtime,Valid
    16,"(0, 1, 2)",3.25,True
    32,"(2, 1, 0)",,False

At the end bayestune writes ``End`` and closes the tool's stdin.

Anything that breaks the protocol (an unknown or missing column, a wrong number of values, a
non-numeric objective, rows missing, the tool exiting or not answering in time) fails every
configuration of that request with an error naming the tool's stdout line and what was
expected; the tool is then stopped and started afresh for the next request, since its
stream can no longer be trusted. NaN/inf objective values are ordinary failed evaluations
(kind ``"nan"``), not protocol errors.
"""

from __future__ import annotations

import csv
import io
import logging
import math
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator
from bayestune.evaluators.tool_process import ProtocolError, ToolProcess
from bayestune.exceptions import EvaluationError
from bayestune.formatting import format_value
from bayestune.trial import FailureKind, Result, coerce_result

logger = logging.getLogger(__name__)

#: Feasibility column names accepted when none is configured (HyperMapper writes "Valid").
FEASIBLE_COLUMNS = ("Valid", "valid", "feasible")
#: ``metrics`` value that accepts every extra column of the answer as a logged metric.
ANY_METRICS = "*"
#: Characters of an offending line quoted in an error.
QUOTED_CHARS = 200

_TRUE = frozenset({"true", "t", "1", "yes", "y"})
_FALSE = frozenset({"false", "f", "0", "no", "n"})


def _csv_line(cells: Sequence[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(cells)
    return buffer.getvalue()


def _same_value(sent: str, echoed: str) -> bool:
    """Whether the tool's echo of a parameter value is the value sent (numbers within 1e-6
    relative, so ``0.1`` matches ``0.100000``; text ignoring spaces, so ``(1,0,2)`` matches)."""
    if sent == echoed:
        return True
    try:
        a, b = float(sent), float(echoed)
    except ValueError:
        return "".join(sent.split()) == "".join(echoed.split())
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)


def _quote(line: str) -> str:
    return repr(line if len(line) <= QUOTED_CHARS else line[:QUOTED_CHARS] + "...")


# ---- the tool process ---------------------------------------------------------------------------
class ExternalEvaluator(Evaluator):
    """Drives a long-running tool over stdin/stdout with the line protocol (see the module docstring).

    ``command``: shell command starting the tool (started on the first request, restarted after
    a protocol error). ``parameter_names``: the space's parameters, in the order they are sent.
    ``timeout``: seconds per configuration: a request of N rows must be fully answered within
    N x ``timeout`` (None: wait forever). ``feasible_column``: the only accepted name of the
    feasibility column (default: any of ``Valid``, ``valid``, ``feasible``). ``metrics``: extra
    numeric output columns to accept and keep, or ``"*"`` for every column the header adds (a tool
    that logs many counters, e.g. for the ``bograph`` strategy). ``workdir``/``env``: as for
    command black boxes.

    One request at a time per evaluator (a lock serialises callers); for parallel evaluation
    use a process pool, which starts one tool per worker.
    """

    def __init__(
        self,
        command: str,
        objectives: Sequence[str],
        *,
        parameter_names: Sequence[str],
        timeout: float | None = None,
        feasible_column: str | None = None,
        metrics: Sequence[str] = (),
        workdir: str | os.PathLike | None = None,
        env: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(command, str) or not command.strip():
            raise EvaluationError(f"external tool command must be a non-empty string, but got {command!r}")
        super().__init__(objectives)
        if isinstance(parameter_names, str) or not parameter_names:
            raise EvaluationError(f"parameter_names must be a non-empty list, but got {parameter_names!r}")
        if timeout is not None and not (
            isinstance(timeout, (int, float))
            and not isinstance(timeout, bool)
            and timeout > 0
            and math.isfinite(timeout)
        ):
            raise EvaluationError(f"external tool timeout must be a positive number of seconds, but got {timeout!r}")
        if isinstance(metrics, str) and metrics != ANY_METRICS:
            raise EvaluationError(
                f"metrics must be a list of column names or {ANY_METRICS!r} (any extra column), but got {metrics!r}"
            )
        if workdir is not None and not Path(workdir).is_dir():
            raise EvaluationError(f"external tool working directory {str(workdir)!r} does not exist")
        self.command = command
        self.parameter_names = list(parameter_names)
        self.timeout = float(timeout) if timeout is not None else None
        self.feasible_column = feasible_column
        self.any_metrics = metrics == ANY_METRICS
        self.metrics = [] if self.any_metrics else [str(m) for m in metrics]
        self.workdir = str(workdir) if workdir is not None else None
        self.env_overrides = {str(k): str(v) for k, v in (env or {}).items()}
        names = [*self.parameter_names, *self.objectives, *self.metrics]
        clash = sorted({n for n in names if names.count(n) > 1})
        if clash:
            raise EvaluationError(
                f"external tool: column names {clash} are used twice among parameters, objectives and metrics"
            )
        self._flags = (feasible_column,) if feasible_column else FEASIBLE_COLUMNS
        self._lock = threading.Lock()
        self._tool: ToolProcess | None = None
        self.requests = 0  # requests sent
        self.starts = 0  # tool processes started

    # pickled for worker processes as its settings (each worker starts its own tool)
    def __reduce__(self) -> tuple:
        return (
            _rebuild,
            (
                self.command,
                self.objectives,
                self.parameter_names,
                self.timeout,
                self.feasible_column,
                ANY_METRICS if self.any_metrics else self.metrics,
                self.workdir,
                self.env_overrides,
            ),
        )

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        return self.evaluate_batch([config])[0]

    def evaluate_batch(self, configs: Sequence[Mapping[str, Any]]) -> list[Result]:
        """One request for all ``configs``; one Result each, in order (all failures on a protocol error)."""
        configs = list(configs)
        if not configs:
            return []
        with self._lock:
            try:
                rows = [[format_value(c[name]) for name in self.parameter_names] for c in configs]
            except KeyError as exc:
                return [
                    Result.failure(f"configuration lacks parameter {exc} for the external tool", FailureKind.TEMPLATE)
                    for _ in configs
                ]
            try:
                return self._request(rows)
            except ProtocolError as exc:
                self._stop_tool()
                logger.warning("%s", exc)
                return [Result.failure(str(exc), exc.kind) for _ in configs]

    # ---- one request ----------------------------------------------------------------------
    def _start_tool(self) -> ToolProcess:
        if self._tool is None or self._tool.proc.poll() is not None:
            if self._tool is not None:
                self._tool.kill()
            env = {**os.environ, **self.env_overrides} if self.env_overrides else None
            self._tool = ToolProcess(self.command, self.workdir, env)
            self.starts += 1
        return self._tool

    def _stop_tool(self) -> None:
        if self._tool is not None:
            self._tool.kill()
            self._tool = None

    def _request(self, rows: list[list[str]]) -> list[Result]:
        tool = self._start_tool()
        n = len(rows)
        self.requests += 1
        message = f"Request {n}\n" + _csv_line(self.parameter_names) + "".join(_csv_line(r) for r in rows)
        try:
            tool.send(message)
        except (BrokenPipeError, ValueError, OSError):
            raise ProtocolError(
                f"external tool {self.command!r} {tool.exit_note()} before it read request {self.requests}",
                FailureKind.CRASH,
            ) from None
        deadline = time.monotonic() + self.timeout * n if self.timeout is not None else None
        reader = _AnswerReader(self, tool, n, deadline)
        header = reader.header()
        results: list[Result | None] = [None] * n
        for i in range(n):
            cells, where = reader.row(i, len(header))
            index = reader.match(cells, header, rows, results, i, where)
            results[index] = self._result(cells, header, where)
        return [r for r in results if r is not None]

    def _result(self, cells: list[str], header: list[str], where: str) -> Result:
        values: dict[str, Any] = {}
        feasible = True
        for name, cell in zip(header, cells):
            if name in self.parameter_names:
                continue
            if name in self.objectives or name in self.metrics or (self.any_metrics and name not in self._flags):
                values[name] = cell
            else:  # the feasibility column
                text = cell.strip().lower()
                if text not in _TRUE and text not in _FALSE:
                    raise ProtocolError(f"{where}: column {name!r}: expected True or False, but got {cell!r}")
                feasible = text in _TRUE
        numbers: dict[str, float] = {}
        for name, cell in values.items():
            if not cell.strip():
                if feasible and name in self.objectives:
                    raise ProtocolError(
                        f"{where}: column {name!r}: expected a number, but the cell is empty "
                        "(only infeasible rows may leave objectives empty)"
                    )
                continue
            try:
                numbers[name] = float(cell)
            except ValueError:
                raise ProtocolError(f"{where}: column {name!r}: expected a number, but got {cell!r}") from None
        if not feasible:
            return Result(values={k: v for k, v in numbers.items() if math.isfinite(v)}, feasible=False)
        return coerce_result(numbers, self.objectives)

    def close(self) -> None:
        with self._lock:
            if self._tool is not None:
                self._tool.close()
                self._tool = None

    def __repr__(self) -> str:
        return f"ExternalEvaluator({self.command!r}, objectives={self.objectives})"


def _rebuild(
    command: str,
    objectives: list[str],
    parameter_names: list[str],
    timeout: float | None,
    feasible_column: str | None,
    metrics: list[str],
    workdir: str | None,
    env: dict[str, str],
) -> ExternalEvaluator:
    return ExternalEvaluator(
        command,
        objectives,
        parameter_names=parameter_names,
        timeout=timeout,
        feasible_column=feasible_column,
        metrics=metrics,
        workdir=workdir,
        env=env or None,
    )


class _AnswerReader:
    """Reads one answer (header + n rows) and says where anything went wrong."""

    def __init__(self, owner: ExternalEvaluator, tool: ToolProcess, n: int, deadline: float | None) -> None:
        self.owner, self.tool, self.n, self.deadline = owner, tool, n, deadline
        self.prefix = f"external tool {owner.command!r}, request {owner.requests}"
        self.echoes_parameters = False

    def _line(self, what: str) -> tuple[str, str]:
        try:
            line = self.tool.read_line(self.deadline)
        except TimeoutError:
            limit = self.owner.timeout * self.n if self.owner.timeout is not None else 0.0
            raise ProtocolError(
                f"{self.prefix}: timed out after {limit:g} s ({self.n} configuration(s) x {self.owner.timeout:g} s) "
                f"waiting for {what} (after line {self.tool.line_no} of the tool's stdout)" + self.tool.stderr_note(),
                FailureKind.TIMEOUT,
            ) from None
        if line is None:
            raise ProtocolError(
                f"{self.prefix}: expected {what} at line {self.tool.line_no + 1} of the tool's stdout, but the tool "
                f"{self.tool.exit_note()}",
                FailureKind.CRASH,
            )
        return line, f"{self.prefix}: line {self.tool.line_no} of the tool's stdout ({what})"

    def header(self) -> list[str]:
        owner = self.owner
        line, where = self._line("the answer's header")
        names = [c.strip() for c in next(csv.reader([line]))]
        flag_names = owner._flags
        expected = (
            f"expected a header of the parameters {owner.parameter_names} (optional, all or none), the "
            f"objectives {owner.objectives}, an optional feasibility column "
            f"{' or '.join(map(repr, flag_names))}"
            + (f" and metrics {owner.metrics}" if owner.metrics else "")
            + (" and any metric columns" if owner.any_metrics else "")
        )
        duplicated = sorted({x for x in names if names.count(x) > 1})
        if duplicated:
            raise ProtocolError(f"{where}: {expected}, but column(s) {duplicated} appear twice in {_quote(line)}")
        known = {*owner.parameter_names, *owner.objectives, *owner.metrics}
        unknown = [] if owner.any_metrics else [x for x in names if x not in known and x not in flag_names]
        if unknown:
            raise ProtocolError(f"{where}: {expected}, but column(s) {unknown} are unknown in {_quote(line)}")
        flags = [x for x in names if x in flag_names]
        if len(flags) > 1:
            raise ProtocolError(f"{where}: {expected}, but got several feasibility columns {flags}")
        missing = [o for o in owner.objectives if o not in names]
        if missing:
            raise ProtocolError(f"{where}: {expected}, but objective column(s) {missing} are missing in {_quote(line)}")
        echoed = [p for p in owner.parameter_names if p in names]
        if echoed and len(echoed) != len(owner.parameter_names):
            lacking = [p for p in owner.parameter_names if p not in names]
            raise ProtocolError(f"{where}: {expected}, but it names some parameters and lacks {lacking}")
        self.echoes_parameters = bool(echoed)
        return names

    def row(self, i: int, width: int) -> tuple[list[str], str]:
        line, where = self._line(f"row {i + 1} of {self.n}")
        cells = [c.strip() for c in next(csv.reader([line]))]
        if len(cells) != width:
            raise ProtocolError(
                f"{where}: expected {width} comma-separated values (one per header column), "
                f"but got {len(cells)} in {_quote(line)}"
            )
        return cells, where

    def match(
        self, cells: list[str], header: list[str], rows: list[list[str]], results: list[Any], i: int, where: str
    ) -> int:
        """Index of the request row this answer row belongs to: by echoed parameters, else by position."""
        if not self.echoes_parameters:
            return i
        echoed = [cells[header.index(p)] for p in self.owner.parameter_names]
        order = [i, *(k for k in range(len(rows)) if k != i)]  # same position first
        for k in order:
            if results[k] is None and all(_same_value(s, e) for s, e in zip(rows[k], echoed)):
                return k
        shown = ", ".join(f"{p}={v}" for p, v in zip(self.owner.parameter_names, echoed))
        if any(all(_same_value(s, e) for s, e in zip(rows[k], echoed)) for k in range(len(rows))):
            raise ProtocolError(f"{where}: configuration ({shown}) is answered twice")
        raise ProtocolError(f"{where}: configuration ({shown}) is not one of the {len(rows)} requested")
