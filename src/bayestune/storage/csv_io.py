"""CSV import/export in the HyperMapper 2 / BaCO ``output_samples.csv`` layout.

Those tools write one row per evaluation with the columns

    <input parameters, scenario order> , <objectives> , [<feasible column>] , <timestamp>

where the feasible column (``feasible_output.name``, "Valid" by default) holds ``True`` /
``False`` (HyperMapper 2.0: the scenario's ``true_value`` / ``false_value``, :class:`FlagWords`) and the timestamp is milliseconds since the start of the run (HyperMapper 2 calls
the column "Timestamp", BaCO "timestamp"; both are accepted on import). Permutation values
are written as ``"(1, 0, 2)"`` (the csv module quotes the embedded commas).

Reading such files lets a run warm-start from earlier HyperMapper/BaCO/bayestune runs, so
failures and infeasible rows are kept: a failure is evidence about the hidden constraints.
Extra columns are written after the timestamp and read back as extra metrics, which keeps
the file readable by HyperMapper and BaCO (they look columns up by name).
"""

from __future__ import annotations

import csv
import io
import logging
import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bayestune.exceptions import JournalError
from bayestune.formatting import format_value
from bayestune.pareto import pareto_trials
from bayestune.trial import Result, Trial, TrialStatus

logger = logging.getLogger(__name__)

_TRUE = frozenset({"true", "t", "1", "yes", "y"})
_FALSE = frozenset({"false", "f", "0", "no", "n"})


@dataclass(frozen=True)
class FlagWords:
    """How a peer spells the feasibility flag in its files. HyperMapper 2.0 writes the scenario's
    ``true_value``/``false_value`` and stops on any other word it reads (``strict``); BaCO writes
    ``True``/``False`` and reads anything but ``true_value`` as infeasible. Without it (None) a
    file's flags are read as bayestune reads them (true/false, 1/0, yes/no)."""

    true_value: str = "True"
    false_value: str = "False"
    strict: bool = False  # another word: an error (HyperMapper), else infeasible (BaCO)
    write_declared: bool = False  # write true_value/false_value (HyperMapper), else True/False (BaCO)

    def word(self, feasible: bool) -> str:
        if self.write_declared:
            return self.true_value if feasible else self.false_value
        return str(feasible)

    def read(self, text: str) -> bool | None:
        """The flag ``text`` stands for; None for a word a strict peer refuses."""
        if text == self.true_value:
            return True
        if text == self.false_value or not self.strict:
            return False
        return None


# ---- export -------------------------------------------------------------------------------
def export_csv(
    trials: Sequence[Trial],
    path: str | os.PathLike,
    *,
    parameter_names: Sequence[str],
    objectives: Sequence[str],
    feasible_column: str | None = "Valid",
    timestamp_column: str = "Timestamp",
    metrics: Sequence[str] | None = None,
    error_column: str | None = None,
    start_time: float | None = None,
    flags: FlagWords | None = None,
) -> None:
    """Write finished ``trials`` as a HyperMapper/BaCO sample file.

    ``metrics``: extra value columns written after the timestamp (default: every
    non-objective value found; ``()`` for the strict HyperMapper layout). ``error_column``:
    optionally add the error text of failed trials. ``start_time``: unix time the timestamps
    count from (default: the earliest start among ``trials``; 0 writes epoch milliseconds).
    ``flags``: the peer's words for the feasibility flag (default ``True``/``False``). Failed
    trials get empty objective cells; pending trials are skipped. The file is replaced atomically.
    """
    trials = _finished(trials)
    if metrics is None:
        metrics = _extra_metric_names(trials, objectives)
    header = [*parameter_names, *objectives]
    header += [feasible_column] if feasible_column else []
    header += [timestamp_column, *metrics]
    header += [error_column] if error_column else []
    _check_distinct(header, path)
    if feasible_column is None and any(t.status is TrialStatus.INFEASIBLE for t in trials):
        logger.warning("%s: no feasible column, so infeasible trials will read back as feasible", path)
    t0 = _start_time(trials) if start_time is None else float(start_time)

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for trial in trials:
        row = [format_value(_config_value(trial, name, path)) for name in parameter_names]
        row += [_format_number(trial.values.get(o)) for o in objectives]
        row += [(flags or FlagWords()).word(trial.status is TrialStatus.OK)] if feasible_column else []
        row += [_format_timestamp(trial.finished_at, t0)]
        row += [_format_number(trial.values.get(m)) for m in metrics]
        row += [trial.error or ""] if error_column else []
        writer.writerow(row)
    _write_atomically(Path(path), buffer.getvalue())
    logger.info("exported %d trial(s) to %s", len(trials), path)


def _finished(trials: Sequence[Trial]) -> list[Trial]:
    done = [t for t in trials if t.status.is_finished]
    if len(done) != len(trials):
        logger.debug("export skips %d pending trial(s)", len(trials) - len(done))
    return done


def _extra_metric_names(trials: Sequence[Trial], objectives: Sequence[str]) -> list[str]:
    names: dict[str, None] = {}  # insertion-ordered set: columns appear in first-seen order
    for t in trials:
        for name in t.values:
            if name not in objectives:
                names.setdefault(name, None)
    return list(names)


def _check_distinct(header: Sequence[str], path: Any) -> None:
    dupes = sorted(name for name, n in Counter(header).items() if n > 1)
    if dupes:
        raise JournalError(f"{path}: column name(s) {dupes} would appear twice in the header {list(header)}")


def _start_time(trials: Sequence[Trial]) -> float | None:
    times = [t.started_at if t.started_at is not None else t.finished_at for t in trials]
    known = [x for x in times if x is not None]
    return min(known) if known else None


def _config_value(trial: Trial, name: str, path: Any) -> Any:
    if name not in trial.config:
        raise JournalError(
            f"{path}: trial {trial.trial_id} has no value for parameter {name!r}: {dict(trial.config)!r}"
        )
    return trial.config[name]


def _format_number(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return ""
    return repr(float(value))


def _format_timestamp(finished_at: float | None, t0: float | None) -> str:
    if finished_at is None or t0 is None:
        return ""
    return str(int(round((finished_at - t0) * 1000.0)))


def _write_atomically(path: Path, text: str) -> None:
    """Write to a sibling temp file and rename, so readers never see half a file."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise JournalError(f"cannot write {str(path)!r}: {exc}") from None


# ---- import -------------------------------------------------------------------------------
def import_csv(
    path: str | os.PathLike,
    *,
    parameters: Sequence[Any],
    objectives: Sequence[str],
    feasible_column: str | None = "Valid",
    timestamp_column: str = "Timestamp",
    error_column: str | None = None,
    flags: FlagWords | None = None,
) -> list[tuple[dict, Result]]:
    """Read a HyperMapper/BaCO sample file into ``(config, Result)`` pairs, in file order.

    Every parameter cell goes through ``Parameter.validate``; a bad cell raises JournalError
    naming the file, line, column and value (nothing is returned for a partly bad file).
    Rows whose objectives are empty, non-numeric or not finite become FAILED results;
    rows whose feasible flag is false become INFEASIBLE (or FAILED if values are missing).
    Other numeric columns are kept as extra metrics; non-numeric ones are ignored.
    Pass ``feasible_column=None`` for files written without a feasibility column; ``flags``
    for a peer's own words for the flag.
    """
    header, rows = _read_table(path)
    pairs = read_table(
        path,
        header,
        rows,
        parameters=parameters,
        objectives=objectives,
        feasible_column=feasible_column,
        timestamp_column=timestamp_column,
        error_column=error_column,
        flags=flags,
    )
    logger.info("read %d row(s) from %s", len(pairs), path)
    return pairs


def _read_table(path: str | os.PathLike) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header (stripped names) and ``(line number, cells)`` of every non-blank row."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:  # -sig: tolerate an Excel BOM
            reader = csv.reader(f)
            header = [h.strip() for h in next(reader, [])]
            rows = []
            for cells in reader:
                if any(c.strip() for c in cells):
                    rows.append((reader.line_num, cells))
    except FileNotFoundError:
        raise JournalError(f"CSV file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise JournalError(f"cannot read CSV file {str(path)!r}: {exc}") from None
    except csv.Error as exc:
        raise JournalError(f"{path}, line {reader.line_num}: malformed CSV: {exc}") from None
    if not any(header):
        raise JournalError(f"CSV file {str(path)!r} is empty (no header row)")
    for line, cells in rows:
        if len(cells) != len(header):
            raise JournalError(
                f"{path}, line {line}: the row has {len(cells)} cell(s) but the header has {len(header)} "
                f"column(s) {header}"
            )
    return header, rows


def _column_index(path: Any, header: list[str], required: Sequence[str], feasible_column: str | None) -> dict[str, int]:
    missing = [name for name in required if name not in header]
    if missing:
        hint = ""
        if feasible_column in missing:
            hint = " (pass feasible_column=None if the file has no feasibility column)"
        raise JournalError(f"{path}: missing required column(s) {missing}; the header is {header}{hint}")
    dupes = sorted({name for name in required if header.count(name) > 1})
    if dupes:
        raise JournalError(f"{path}: column(s) {dupes} appear more than once in the header {header}")
    return {name: i for i, name in enumerate(header)}


def _numeric_extra_columns(
    header: list[str],
    rows: list[tuple[int, list[str]]],
    required: set[str],
    timestamp_names: set[str],
    error_column: str | None,
) -> list[str]:
    """Columns that are neither inputs, objectives, flags nor timestamps and hold only numbers."""
    extras = []
    for i, name in enumerate(header):
        if not name or name in required or name.lower() in timestamp_names or name == error_column:
            continue
        if header.count(name) > 1:
            logger.debug("ignoring duplicated column %r", name)
            continue
        if all(_to_float(cells[i]) is not None for _, cells in rows if cells[i].strip()):
            extras.append(name)
        else:
            logger.debug("ignoring non-numeric column %r", name)
    return extras


def read_table(
    where: Any,
    header: list[str],
    rows: list[tuple[int, list[str]]],
    *,
    parameters: Sequence[Any],
    objectives: Sequence[str],
    feasible_column: str | None = "Valid",
    timestamp_column: str = "Timestamp",
    error_column: str | None = None,
    flags: FlagWords | None = None,
) -> list[tuple[dict, Result]]:
    """:func:`import_csv` on a table already split into cells (``where`` names it in errors):
    the HyperMapper/BaCO client-server reply is such a table."""
    required = [p.name for p in parameters] + list(objectives) + ([feasible_column] if feasible_column else [])
    index = _column_index(where, header, required, feasible_column)
    extras = _numeric_extra_columns(header, rows, set(required), {timestamp_column.lower(), "timestamp"}, error_column)
    pairs = []
    for line, cells in rows:
        if len(cells) != len(header):
            raise JournalError(
                f"{where}, line {line}: the row has {len(cells)} cell(s) but the header has "
                f"{len(header)} column(s) {header}"
            )
        cell = _CellReader(where, line, header, index, cells)
        config = {p.name: _parse_parameter(p, cell) for p in parameters}
        pairs.append((config, _parse_result(cell, objectives, feasible_column, extras, error_column, flags)))
    return pairs


class _CellReader:
    """One row of the file, able to name the file, line and column in error messages."""

    def __init__(self, path: Any, line: int, header: list[str], index: Mapping[str, int], cells: list[str]):
        self.path, self.line, self.header, self.index, self.cells = path, line, header, index, cells

    def __getitem__(self, column: str) -> str:
        return self.cells[self.index[column]].strip()

    def where(self, column: str) -> str:
        return f"{self.path}, line {self.line}, column {column!r}, value {self[column]!r}"

    def error(self, column: str, problem: str) -> JournalError:
        return JournalError(f"{self.where(column)}: {problem}")


def _to_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _parse_parameter(parameter: Any, cell: _CellReader) -> Any:
    """Turn a cell's text into the parameter's canonical value (numbers are parsed first)."""
    name, text = parameter.name, cell[parameter.name]
    if not text:
        raise cell.error(name, "empty cell")
    kind = getattr(parameter, "kind", None)
    value: Any = text  # categoricals and permutations read their own string forms
    if kind in ("real", "ordinal", "integer"):
        value = _parse_int(text) if kind == "integer" else _to_float(text)
        if value is None:
            raise cell.error(name, f"expected a number for {kind} parameter {name!r}")
    try:
        return parameter.validate(value)
    except ValueError as exc:  # SpaceError is a ValueError
        raise cell.error(name, str(exc)) from exc


def _parse_int(text: str) -> int | float | None:
    """An int if the text is one, else a float (``validate`` then checks it is integral)."""
    try:
        return int(text)
    except ValueError:
        return _to_float(text)


def _parse_bool(cell: _CellReader, column: str, flags: FlagWords | None = None) -> bool:
    if flags is not None:
        flag = flags.read(cell[column])
        if flag is None:
            raise cell.error(
                column, f"expected {flags.true_value!r} or {flags.false_value!r}, as the scenario declares"
            )
        return flag
    text = cell[column].lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise cell.error(column, "expected True or False")


def _parse_result(
    cell: _CellReader,
    objectives: Sequence[str],
    feasible_column: str | None,
    extras: Sequence[str],
    error_column: str | None,
    flags: FlagWords | None = None,
) -> Result:
    feasible = _parse_bool(cell, feasible_column, flags) if feasible_column else True
    values: dict[str, float] = {}
    problems: list[str] = []
    kinds: list[str] = []
    for name in [*objectives, *extras]:
        text = cell[name]
        number = _to_float(text) if text else None
        if number is not None and math.isfinite(number):
            values[name] = number
        elif name in objectives:
            problems.append(f"objective {name!r} is {'empty' if not text else repr(text)}")
            kinds.append("missing" if not text else ("nan" if number is not None else "parse"))
    error_text = cell[error_column] if error_column and error_column in cell.index else ""
    if problems or error_text:
        error = error_text or f"{'; '.join(problems)} ({cell.path}, line {cell.line})"
        kind = kinds[0] if kinds else "unknown"
        return Result(values=values, feasible=False, error=error, kind=kind)
    return Result(values=values, feasible=feasible)


# ---- the peers' own sample file -------------------------------------------------------------
@dataclass(frozen=True)
class PeerSamples:
    """The sample file a HyperMapper 2.0 / BaCO run writes unless told otherwise, in that peer's
    header, the file its ``resume_optimization`` continues from, and the other files a peer's
    run leaves (Pareto front, log). Relative paths are taken from the working directory, as the
    peers take them."""

    path: str  # output_data_file, else <application_name>_output_samples.csv
    parameter_names: tuple[str, ...]
    objectives: tuple[str, ...]
    feasible_column: str | None  # only when the file enables the feasibility predictor
    timestamp_column: str  # BaCO: "timestamp"; HyperMapper: its `timestamp` key ("Timestamp")
    resume_from: str | None = None  # resume_optimization: the sample file to continue from
    pareto_path: str | None = None  # several objectives: hm-compute-pareto's front file (output_pareto_file)
    log_path: str | None = None  # the peer's log file (`bayestune serve` logs there: stdout is the protocol's)
    flags: FlagWords | None = None  # the peer's words for the feasibility flag
    peer: str = "hypermapper"  # whose file: hypermapper | baco (what a resume continues with)
    extra_columns: tuple[str, ...] = ()  # written after the timestamp (BaCO's std_estimate)
    print_best: bool | None = None  # HyperMapper's print_best: None ("auto") prints outside client-server mode

    def write(self, trials: Sequence[Trial], *, start_time: float | None = None) -> Path:
        """Write the finished ``trials`` to :attr:`path` (replaced atomically), and their feasible
        Pareto front to :attr:`pareto_path` when set, in the same layout; return :attr:`path`."""
        finished = _finished(trials)
        t0 = _start_time(finished) if start_time is None else start_time

        def write_csv(rows: Sequence[Trial], path: str) -> None:
            export_csv(
                rows,
                path,
                parameter_names=self.parameter_names,
                objectives=self.objectives,
                feasible_column=self.feasible_column,
                timestamp_column=self.timestamp_column,
                metrics=self.extra_columns,
                start_time=t0,
                flags=self.flags,
            )

        for path in (self.path, self.pareto_path):
            if path is not None and os.path.dirname(path):  # the peers create their run_directory
                os.makedirs(os.path.dirname(path), exist_ok=True)
        write_csv(finished, self.path)
        if self.pareto_path is not None:
            write_csv(pareto_trials(finished, self.objectives), self.pareto_path)
        return Path(self.path)

    def resumed(self, parameters: Sequence[Any]) -> list[tuple[dict, Result]]:
        """The evaluations of :attr:`resume_from` (none when not resuming)."""
        if self.resume_from is None:
            return []
        return import_csv(
            self.resume_from,
            parameters=parameters,
            objectives=self.objectives,
            feasible_column=self.feasible_column,
            timestamp_column=self.timestamp_column,
            flags=self.flags,
        )
