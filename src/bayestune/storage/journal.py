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
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
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
from bayestune.storage.sqlite_schema import (
    APPLICATION_ID,
    INSERT_COLUMNS,
    SCHEMA_VERSION,
    TRIAL_COLUMNS,
    check_version,
    create_schema,
    damage,
    decode_meta,
    decode_values,
    objectives_finite,
    row_to_trial,
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


class Journal(JournalQueries):
    """SQLite journal of one run. Every state change is committed before returning.

    One connection is shared by all threads (the optimizer may finish trials from worker
    threads) and serialised by a lock; writes use ``BEGIN IMMEDIATE ... COMMIT`` so each
    method is one atomic, durable transaction.
    """

    def __init__(self, path: str | os.PathLike, *, create: bool = True, run_lock: Any = None,
                 read_only: bool = False) -> None:
        self.path = str(path)
        self.read_only = read_only
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        #: The run's owner lock (:class:`bayestune.storage.lock.RunLock`), released by :meth:`close`.
        self.run_lock = run_lock
        if self.path != ":memory:" and not create and not Path(self.path).is_file():
            raise JournalError(f"journal {self.path!r} does not exist")
        try:
            if read_only:  # a viewer beside a live run (dashboard): SQLite refuses every write
                self._open_read_only()
                return
            target = self.path if self.path == ":memory:" else os.path.realpath(self.path)  # as the run lock does
            self._conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False, timeout=30.0)
            self._configure()
            self._check_or_create_schema(create)
        except sqlite3.OperationalError as exc:  # unreadable path, locked, read-only, ...
            self._close_quietly()
            if create or not self._on_read_only_storage():
                raise JournalError(f"cannot open journal {self.path!r}: {exc}") from None
            logger.info("journal %s is on read-only storage: opened read-only", self.path)
            self.read_only = True
            self._open_read_only()
        except sqlite3.DatabaseError as exc:  # "file is not a database" and other corruption
            self._close_quietly()
            raise JournalError(f"{self.path!r} is not a bayestune journal (SQLite says: {exc})") from None
        except JournalError:
            self._close_quietly()
            raise

    @classmethod
    def open(cls, path: str | os.PathLike, *, read_only: bool = False) -> Journal:
        """Open an existing journal; JournalError naming the path if missing or not a journal.

        ``read_only``: never write, not even the schema check's transaction (a viewer of a live run).
        """
        return cls(path, create=False, read_only=read_only)

    # ---- connection setup --------------------------------------------------------------
    def _configure(self) -> None:
        conn = self._connection
        # WAL: readers (e.g. a dashboard or a test polling progress) never block the writer,
        # and a commit is a single append to the -wal file.
        conn.execute("PRAGMA journal_mode=WAL")
        # FULL rather than NORMAL: with NORMAL a WAL commit survives a process crash but may
        # be rolled back by a power loss or OS crash. One fsync per evaluation costs
        # milliseconds, an evaluation costs seconds to hours, so never lose a measurement.
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")

    def _check_or_create_schema(self, create: bool) -> None:
        # One IMMEDIATE transaction: two processes creating the same file must not race.
        with self._write() as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "bayestune_schema" in tables:
                check_version(conn, self.path)
            elif tables:
                raise JournalError(
                    f"{self.path!r} is an SQLite database but not a bayestune journal "
                    f"(no bayestune_schema table; tables: {sorted(tables)})"
                )
            elif not create:
                raise JournalError(f"{self.path!r} is not a bayestune journal (the database is empty)")
            else:
                create_schema(conn, self.path)

    def _on_read_only_storage(self) -> bool:
        real = os.path.realpath(self.path)
        return not os.access(real, os.W_OK) or not os.access(os.path.dirname(real), os.W_OK)

    def _open_read_only(self) -> None:
        """``mode=ro``; where SQLite cannot make its ``-shm`` file (read-only media, archived runs)
        ``immutable=1`` instead, which is exact only when no ``-wal`` file holds commits: checked."""
        uri = Path(os.path.realpath(self.path)).as_uri()
        try:
            self._connect_read_only(uri + "?mode=ro")
        except (sqlite3.OperationalError, JournalError) as exc:
            self._close_quietly()
            wal = Path(os.path.realpath(self.path) + "-wal")
            if not self._on_read_only_storage():
                raise
            if wal.exists() and wal.stat().st_size > 0:
                raise JournalError(f"journal {self.path!r} is on read-only storage with commits still in its "
                                   f"-wal file, which SQLite cannot read there ({exc}); copy the .db and its "
                                   "-wal file to writable storage and read the copy") from None
            self._connect_read_only(uri + "?mode=ro&immutable=1")

    def _connect_read_only(self, uri: str) -> None:
        self._conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=30.0)
        self._conn.execute("PRAGMA query_only=ON")
        self._check_read_only_schema()

    def _check_read_only_schema(self) -> None:
        tables = {r[0] for r in self._read("SELECT name FROM sqlite_master WHERE type='table'")}
        if "bayestune_schema" not in tables:
            raise JournalError(f"{self.path!r} is not a bayestune journal (tables: {sorted(tables)})")
        version = self._read("PRAGMA user_version")[0][0]
        if not 1 <= version <= SCHEMA_VERSION:
            raise JournalError(f"journal {self.path!r} has schema version {version}; this version reads "
                               f"1 to {SCHEMA_VERSION}")

    @property
    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise JournalError(f"journal {self.path!r} is closed")
        return self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One durable transaction: committed when the block ends, rolled back on any error.

        SQLite failures (disk full, I/O error, lock timeout) surface as JournalError.
        """
        with self._lock:
            conn = self._connection
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise JournalError(f"journal {self.path!r}: write failed: {exc}") from exc

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._connection.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise JournalError(f"journal {self.path!r}: read failed: {exc}") from exc

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
    def start(self, config: Mapping[str, Any], *, batch: int | None = None,
              origin: str = Origin.SUGGESTED, attempt: int = 1) -> int:
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
                "repeats = ?, timings = ? WHERE trial_id = ?",
                (status.value, values_json(values), error, kind, time.time(), encode_repeats(repeats),
                 json.dumps(timings), int(trial_id)),
            )
            trial = self._fetch(conn, int(trial_id))
        logger.debug("finished trial %d: %s", trial_id, status.value)
        return trial

    def record(self, config: Mapping[str, Any], result: Result, *, origin: str = Origin.SUGGESTED,
               batch: int | None = None, started_at: float | None = None,
               finished_at: float | None = None, attempt: int = 1) -> Trial:
        """Insert an already-finished trial in one transaction (imports, replays, manual entries)."""
        with self._write() as conn:
            trial_id = self._insert_finished(conn, config, result, origin=origin, batch=batch,
                                             started_at=started_at, finished_at=finished_at, attempt=attempt)
            return self._fetch(conn, trial_id)

    def record_many(self, items: Iterable[tuple[Mapping[str, Any], Result]], *,
                    origin: str = Origin.IMPORTED) -> list[Trial]:
        """Insert finished trials all-or-nothing (a half-imported file would skew a warm start)."""
        with self._write() as conn:
            ids = [self._insert_finished(conn, c, r, origin=origin) for c, r in items]
            return [self._fetch(conn, i) for i in ids]

    def _insert_finished(self, conn: sqlite3.Connection, config: Mapping[str, Any], result: Result, *,
                         origin: str, batch: int | None = None, started_at: float | None = None,
                         finished_at: float | None = None, attempt: int = 1) -> int:
        config_text, key = encode_config(config)
        status, values, error, kind = result_fields(result, None, self._objective_names())
        repeats, timings = measurement_fields(result)
        finished_at = time.time() if finished_at is None else float(finished_at)
        started_at = finished_at if started_at is None else float(started_at)
        cur = conn.execute(
            f"INSERT INTO trials ({INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (config_text, key, status.value, values_json(values), error, kind, started_at, finished_at,
             batch, int(attempt), origin, encode_repeats(repeats), json.dumps(timings)),
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
            ids = [r[0] for r in conn.execute(
                "SELECT trial_id FROM trials WHERE status = ? ORDER BY trial_id", (TrialStatus.PENDING.value,))]
            conn.execute(
                "UPDATE trials SET status = ?, failure_kind = ?, error = ?, finished_at = ? WHERE status = ?",
                (TrialStatus.FAILED.value, FailureKind.LOST, LOST_ERROR, time.time(), TrialStatus.PENDING.value),
            )
            lost = [self._fetch(conn, i) for i in ids]
        if lost:
            logger.warning("journal %s: %d evaluation(s) were in flight when the optimizer stopped: %s",
                           self.path, len(lost), [t.trial_id for t in lost])
        return lost

    # ---- re-measurement rounds ---------------------------------------------------------
    def record_remeasurement(self, trial_id: int, round: int, result: Result) -> Remeasurement:
        """Keep one re-measurement of a finished trial (round ``round`` of the top-k check)."""
        values, error = remeasurement_fields(result)
        now = time.time()
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM trials WHERE trial_id = ?", (int(trial_id),)).fetchone() is None:
                raise JournalError(f"journal {self.path!r} has no trial {trial_id}")
            conn.execute('INSERT INTO remeasurements (trial_id, round, "values", error, measured_at) '
                         "VALUES (?, ?, ?, ?, ?)", (int(trial_id), int(round), values_json(values), error, now))
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
            raise JournalError(f"journal {self.path!r}: a re-measurement row is damaged ({type(exc).__name__}: "
                               f"{exc}); repair or delete it in the remeasurements table") from None

    # ---- reading trials ----------------------------------------------------------------
    def trials(self, status: StatusFilter = None, *,
               space: Any = None) -> list[Trial]:
        """Trials ordered by id, optionally of some statuses only.

        Configurations come back from JSON, so permutations are lists; pass ``space`` (anything
        with ``validate_config(config) -> dict``) to get canonical values (tuples) back.
        """
        statuses = status_filter(status)
        sql = f"SELECT {TRIAL_COLUMNS} FROM trials"
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
        row = conn.execute(f"SELECT {TRIAL_COLUMNS} FROM trials WHERE trial_id = ?", (trial_id,)).fetchone()
        if row is None:
            raise JournalError(f"journal {self.path!r} has no trial {trial_id}")
        return self._to_trial(row, self._objective_names())

    def _to_trial(self, row: Sequence[Any], objectives: Sequence[str] | None) -> Trial:
        """A row as a Trial; JournalError naming the journal, the row and what is wrong with it."""
        try:
            return objectives_finite(row_to_trial(row), objectives)
        except (ValueError, TypeError, AttributeError, RecursionError) as exc:
            raise JournalError(
                f"journal {self.path!r}: trial {row[0]} is damaged ({damage(row, exc)}); repair or delete "
                f"that row, e.g. sqlite3 {self.path} \"DELETE FROM trials WHERE trial_id = {row[0]}\"") from None

    # ---- CSV ---------------------------------------------------------------------------
    def export_csv(self, path: str | os.PathLike, *, parameter_names: Sequence[str],
                   objectives: Sequence[str], **options: Any) -> None:
        """Write finished trials (lost rows excluded: they say nothing about the black box) as CSV.

        See :func:`bayestune.storage.csv_io.export_csv` for ``options``; timestamps count from
        the journal's creation.
        """
        from bayestune.storage.csv_io import export_csv

        trials = [t for t in self.trials() if t.status.is_finished and t.failure_kind != FailureKind.LOST]
        options.setdefault("start_time", self.get_meta(META_CREATED_AT))
        export_csv(trials, path, parameter_names=parameter_names, objectives=objectives, **options)

    def import_csv(self, path: str | os.PathLike, *, parameters: Sequence[Any],
                   objectives: Sequence[str], origin: str = Origin.IMPORTED, **options: Any) -> list[Trial]:
        """Validate a whole CSV file, then record all its rows in one transaction."""
        from bayestune.storage.csv_io import import_csv

        rows = import_csv(path, parameters=parameters, objectives=objectives, **options)
        trials = self.record_many(rows, origin=origin)
        logger.info("imported %d trial(s) from %s into %s", len(trials), path, self.path)
        return trials

    # ---- lifetime ----------------------------------------------------------------------
    def checkpoint(self) -> None:
        """Move the ``-wal`` file's pages into the database file, so the ``.db`` alone holds the run."""
        with self._lock:
            try:
                self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                logger.warning("journal %s: checkpoint failed: %s", self.path, exc)

    def backup(self, target: str | os.PathLike) -> None:
        """A consistent copy of the journal at ``target``, safe while the run is writing.

        Uses SQLite's online backup, so the copy includes what is still in the ``-wal`` file
        (copying only the ``.db`` of a live or crashed run can lose it).
        """
        target = str(target)
        if os.path.lexists(target):
            raise JournalError(f"backup target {target!r} exists; choose a new file")
        if not os.path.isdir(os.path.dirname(os.path.abspath(target))):
            raise JournalError(f"backup target {target!r}: its directory does not exist; create it first")
        with self._lock:
            try:
                dest = sqlite3.connect(target)
            except sqlite3.Error as exc:
                raise JournalError(f"journal {self.path!r}: cannot create the backup {target!r}: {exc}") from None
            try:
                self._connection.backup(dest)
                dest.execute("PRAGMA journal_mode=DELETE")
            except sqlite3.Error as exc:
                dest.close()
                Path(target).unlink(missing_ok=True)  # no half copy that looks like a journal
                raise JournalError(f"journal {self.path!r}: backup to {target!r} failed: {exc}") from None
            dest.close()

    def close(self) -> None:
        """Checkpoint, close the connection and release the run lock (idempotent).

        Nothing is lost: every write is already committed.
        """
        with self._lock:
            if self._conn is not None and self.path != ":memory:" and not self.read_only:
                self.checkpoint()
            self._close_quietly()

    def _close_quietly(self) -> None:
        try:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None
        finally:
            if self.run_lock is not None:
                self.run_lock.release()

    def __repr__(self) -> str:
        state = "closed" if self._conn is None else "open"
        return f"Journal({self.path!r}, {state})"
