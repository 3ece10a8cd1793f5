"""The crash-safe journal of one tuning run: an SQLite file with one row per evaluation.

Why SQLite: evaluations of compilers and systems are expensive (seconds to hours each), so
losing a finished measurement to a crash, a ``kill -9`` or a full disk is costly. Every
method that changes state commits before it returns, so whatever the optimizer has been
told is also on disk. A run resumes by reopening the file: finished rows are replayed into
the models, and rows still ``PENDING`` (in flight when the process died) are marked *lost*
by :meth:`Journal.abandon_pending` and re-run without being charged to the budget.

The file layout (tables, schema versions, the migration of version 1 journals, how a row
reads as a trial) is :mod:`bayestune.storage.sqlite_schema`.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bayestune.exceptions import JournalError
from bayestune.storage.base import (
    LOST_ERROR,
    META_CREATED_AT,
    META_OBJECTIVES,
    JournalQueries,
    StatusFilter,
    encode_config,
    encode_meta,
    encode_repeats,
    measurement_fields,
    objective_names,
    remeasurement_fields,
    result_fields,
    status_filter,
    with_space,
)
from bayestune.storage.sqlite_file import SQLiteFile
from bayestune.storage.sqlite_schema import (
    APPLICATION_ID,
    INSERT_COLUMNS,
    SCHEMA_VERSION,
    damage,
    decode_meta,
    decode_values,
    objectives_finite,
    row_to_trial,
    trial_columns,
    values_json,
)
from bayestune.trial import FailureKind, Origin, Remeasurement, Result, Trial, TrialStatus

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "Journal"]

logger = logging.getLogger(__name__)


def _inserted_id(cur: sqlite3.Cursor) -> int:
    """The id of the row an INSERT just added (sqlite3 types ``lastrowid`` as optional)."""
    if cur.lastrowid is None:
        raise JournalError("SQLite reported no id for an inserted trial")
    return int(cur.lastrowid)


class Journal(SQLiteFile, JournalQueries):
    """SQLite journal of one run. Every state change is committed before returning.

    The optimizer may finish trials from worker threads: they share the one connection of
    :class:`~bayestune.storage.sqlite_file.SQLiteFile`, and each method is one transaction.
    """

    # ---- metadata ----------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON-serialisable run property (scenario, objectives, budget, seed, ...)."""
        text = encode_meta(key, value)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (str(key), text),
            )

    def get_meta(self, key: str, default: Any = None) -> Any:
        rows = self._read("SELECT value FROM meta WHERE key = ?", (str(key),))
        return decode_meta(self.path, str(key), rows[0][0]) if rows else default

    def _objective_names(self) -> list[str] | None:
        try:
            return objective_names(self.get_meta(META_OBJECTIVES))
        except (ValueError, JournalError):
            return None

    def meta(self) -> dict[str, Any]:
        """All metadata as a dict."""
        return {k: decode_meta(self.path, k, v) for k, v in self._read("SELECT key, value FROM meta ORDER BY key")}

    # ---- writing trials ----------------------------------------------------------------
    def start(
        self, config: Mapping[str, Any], *, batch: int | None = None, origin: str = Origin.SUGGESTED, attempt: int = 1
    ) -> int:
        """Record that ``config`` is about to be evaluated; returns its trial id.

        Writing the row *before* the evaluation is what lets a resumed run find out which
        evaluations were in flight when the process died.
        """
        config_text, key = encode_config(config)
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO trials (config, config_key, status, started_at, batch, attempt, origin) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (config_text, key, TrialStatus.PENDING.value, time.time(), batch, int(attempt), origin),
            )
            trial_id = _inserted_id(cur)
        logger.debug("started trial %d: %s", trial_id, config_text)
        return trial_id

    def finish(self, trial_id: int, result: Result) -> Trial:
        """Store the result of a started trial; JournalError if the id is unknown or already finished."""
        status, values, error, kind = result_fields(result, trial_id, self._objective_names())
        repeats, timings = measurement_fields(result)
        with self._write() as conn:
            row = conn.execute("SELECT status FROM trials WHERE trial_id = ?", (int(trial_id),)).fetchone()
            if row is None:
                raise JournalError(f"journal {self.path!r} has no trial {trial_id}")
            if row[0] != TrialStatus.PENDING.value:
                raise JournalError(f"trial {trial_id} is already finished (status {row[0]!r}) in journal {self.path!r}")
            conn.execute(
                'UPDATE trials SET status = ?, "values" = ?, error = ?, failure_kind = ?, finished_at = ?, '
                "repeats = ?, timings = ?, censored = ? WHERE trial_id = ?",
                (
                    status.value,
                    values_json(values),
                    error,
                    kind,
                    time.time(),
                    encode_repeats(repeats),
                    json.dumps(timings),
                    int(result.censored and status is TrialStatus.OK),
                    int(trial_id),
                ),
            )
            trial = self._fetch(conn, int(trial_id))
        logger.debug("finished trial %d: %s", trial_id, status.value)
        return trial

    def record(
        self,
        config: Mapping[str, Any],
        result: Result,
        *,
        origin: str = Origin.SUGGESTED,
        batch: int | None = None,
        started_at: float | None = None,
        finished_at: float | None = None,
        attempt: int = 1,
    ) -> Trial:
        """Insert an already-finished trial in one transaction (imports, replays, manual entries)."""
        with self._write() as conn:
            trial_id = self._insert_finished(
                conn,
                config,
                result,
                origin=origin,
                batch=batch,
                started_at=started_at,
                finished_at=finished_at,
                attempt=attempt,
            )
            return self._fetch(conn, trial_id)

    def record_many(
        self, items: Iterable[tuple[Mapping[str, Any], Result]], *, origin: str = Origin.IMPORTED
    ) -> list[Trial]:
        """Insert finished trials all-or-nothing (a half-imported file would skew a warm start)."""
        with self._write() as conn:
            ids = [self._insert_finished(conn, c, r, origin=origin) for c, r in items]
            return [self._fetch(conn, i) for i in ids]

    def _insert_finished(
        self,
        conn: sqlite3.Connection,
        config: Mapping[str, Any],
        result: Result,
        *,
        origin: str,
        batch: int | None = None,
        started_at: float | None = None,
        finished_at: float | None = None,
        attempt: int = 1,
    ) -> int:
        config_text, key = encode_config(config)
        status, values, error, kind = result_fields(result, None, self._objective_names())
        repeats, timings = measurement_fields(result)
        finished_at = time.time() if finished_at is None else float(finished_at)
        started_at = finished_at if started_at is None else float(started_at)
        cur = conn.execute(
            f"INSERT INTO trials ({INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                config_text,
                key,
                status.value,
                values_json(values),
                error,
                kind,
                started_at,
                finished_at,
                batch,
                int(attempt),
                origin,
                encode_repeats(repeats),
                json.dumps(timings),
                int(result.censored and status is TrialStatus.OK),
            ),
        )
        return _inserted_id(cur)

    def abandon_pending(self) -> list[Trial]:
        """Mark in-flight rows of a previous process as lost; return them so they can be re-run.

        Lost rows stay in the journal (the history shows what happened) but are FAILED with
        ``failure_kind="lost"``, which models must not treat as a hidden-constraint failure
        and :meth:`n_finished` does not charge to the budget. Re-run them with
        ``start(trial.config, attempt=trial.attempt + 1)``.
        """
        with self._write() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT trial_id FROM trials WHERE status = ? ORDER BY trial_id", (TrialStatus.PENDING.value,)
                )
            ]
            conn.execute(
                "UPDATE trials SET status = ?, failure_kind = ?, error = ?, finished_at = ? WHERE status = ?",
                (TrialStatus.FAILED.value, FailureKind.LOST, LOST_ERROR, time.time(), TrialStatus.PENDING.value),
            )
            lost = [self._fetch(conn, i) for i in ids]
        if lost:
            logger.warning(
                "journal %s: %d evaluation(s) were in flight when the optimizer stopped: %s",
                self.path,
                len(lost),
                [t.trial_id for t in lost],
            )
        return lost

    # ---- re-measurement rounds ---------------------------------------------------------
    def record_remeasurement(self, trial_id: int, round: int, result: Result) -> Remeasurement:
        """Keep one re-measurement of a finished trial (round ``round`` of the top-k check)."""
        values, error = remeasurement_fields(result)
        now = time.time()
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM trials WHERE trial_id = ?", (int(trial_id),)).fetchone() is None:
                raise JournalError(f"journal {self.path!r} has no trial {trial_id}")
            conn.execute(
                'INSERT INTO remeasurements (trial_id, round, "values", error, measured_at) VALUES (?, ?, ?, ?, ?)',
                (int(trial_id), int(round), values_json(values), error, now),
            )
        return Remeasurement(int(trial_id), int(round), values, error, now)

    def remeasurements(self, trial_id: int | None = None) -> list[Remeasurement]:
        """Re-measurements in the order they were taken, of one trial or of all."""
        sql = 'SELECT trial_id, round, "values", error, measured_at FROM remeasurements'
        params: tuple[Any, ...] = ()
        if trial_id is not None:
            sql, params = sql + " WHERE trial_id = ?", (int(trial_id),)
        rows = self._read(sql + " ORDER BY id", params)
        try:
            return [Remeasurement(int(t), int(r), decode_values(v), e, at) for t, r, v, e, at in rows]
        except (ValueError, TypeError, AttributeError, RecursionError) as exc:
            raise JournalError(
                f"journal {self.path!r}: a re-measurement row is damaged ({type(exc).__name__}: "
                f"{exc}); repair or delete it in the remeasurements table"
            ) from None

    # ---- reading trials ----------------------------------------------------------------
    def trials(self, status: StatusFilter = None, *, space: Any = None) -> list[Trial]:
        """Trials ordered by id, optionally of some statuses only.

        Configurations come back from JSON, so permutations are lists; pass ``space`` (anything
        with ``validate_config(config) -> dict``) to get canonical values (tuples) back.
        """
        statuses = status_filter(status)
        sql = f"SELECT {self._trial_columns()} FROM trials"
        params: list[Any] = []
        if statuses is not None:
            sql += f" WHERE status IN ({', '.join('?' * len(statuses))})"
            params = statuses
        rows = self._read(sql + " ORDER BY trial_id", params)
        objectives = self._objective_names()
        return [with_space(self._to_trial(r, objectives), space) for r in rows]

    def trial(self, trial_id: int, *, space: Any = None) -> Trial:
        with self._lock:
            return with_space(self._fetch(self._connection, int(trial_id)), space)

    def _fetch(self, conn: sqlite3.Connection, trial_id: int) -> Trial:
        row = conn.execute(f"SELECT {self._trial_columns()} FROM trials WHERE trial_id = ?", (trial_id,)).fetchone()
        if row is None:
            raise JournalError(f"journal {self.path!r} has no trial {trial_id}")
        return self._to_trial(row, self._objective_names())

    def _trial_columns(self) -> str:
        """The columns a trial is read from, defaults standing in for those an unmigrated (read-only) journal lacks."""
        columns = getattr(self, "_columns", None)
        if columns is None:
            present = {r[1] for r in self._read("PRAGMA table_info(trials)")}
            columns = self._columns = trial_columns(present)
        return columns

    def _to_trial(self, row: Sequence[Any], objectives: Sequence[str] | None) -> Trial:
        """A row as a Trial; JournalError naming the journal, the row and what is wrong with it."""
        try:
            return objectives_finite(row_to_trial(row), objectives)
        except (ValueError, TypeError, AttributeError, RecursionError) as exc:
            raise JournalError(
                f"journal {self.path!r}: trial {row[0]} is damaged ({damage(row, exc)}); repair or delete "
                f'that row, e.g. sqlite3 {self.path} "DELETE FROM trials WHERE trial_id = {row[0]}"'
            ) from None

    # ---- CSV ---------------------------------------------------------------------------
    def export_csv(
        self, path: str | os.PathLike, *, parameter_names: Sequence[str], objectives: Sequence[str], **options: Any
    ) -> None:
        """Write finished trials (lost rows excluded: they say nothing about the black box) as CSV.

        See :func:`bayestune.storage.csv_io.export_csv` for ``options``; timestamps count from
        the journal's creation.
        """
        from bayestune.storage.csv_io import export_csv

        trials = [t for t in self.trials() if t.status.is_finished and t.failure_kind != FailureKind.LOST]
        options.setdefault("start_time", self.get_meta(META_CREATED_AT))
        export_csv(trials, path, parameter_names=parameter_names, objectives=objectives, **options)

    def import_csv(
        self,
        path: str | os.PathLike,
        *,
        parameters: Sequence[Any],
        objectives: Sequence[str],
        origin: str = Origin.IMPORTED,
        **options: Any,
    ) -> list[Trial]:
        """Validate a whole CSV file, then record all its rows in one transaction."""
        from bayestune.storage.csv_io import import_csv

        rows = import_csv(path, parameters=parameters, objectives=objectives, **options)
        trials = self.record_many(rows, origin=origin)
        logger.info("imported %d trial(s) from %s into %s", len(trials), path, self.path)
        return trials

    def __repr__(self) -> str:
        state = "closed" if self._conn is None else "open"
        return f"Journal({self.path!r}, {state})"
