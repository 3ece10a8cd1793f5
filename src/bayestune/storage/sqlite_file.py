"""One SQLite file opened the way a journal needs it: durable writes, readers beside a live run,
read-only storage, a consistent backup.

Kept apart from :mod:`bayestune.storage.journal` (what a row means) because how the file is opened,
locked and closed does not depend on what the rows hold.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from bayestune.exceptions import JournalError
from bayestune.storage.sqlite_schema import SCHEMA_VERSION, check_version, create_schema

logger = logging.getLogger(__name__)

_File = TypeVar("_File", bound="SQLiteFile")


def what_it_is(path: str | os.PathLike, *, creating: bool = False) -> str | None:
    """What ``path`` is when a journal cannot be there ("does not exist", "is a directory", "is a
    named pipe (FIFO)", ...), None when it can: a regular file, or with ``creating`` a path to create.
    A FIFO is never opened (that would block); a symbolic link into a missing directory is refused
    rather than the directory created where the link points."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if not os.path.islink(path):
            return None if creating else "does not exist"
        target = os.path.realpath(path)
        if not os.path.isdir(os.path.dirname(target)):
            return f"is a symbolic link into a missing directory ({os.path.dirname(target)!r}); create it first"
        return None if creating else f"is a symbolic link to a missing file ({target!r})"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    kinds = (
        (stat.S_ISREG, None),
        (stat.S_ISDIR, "is a directory, not a journal file"),
        (stat.S_ISFIFO, "is a named pipe (FIFO), not a journal file"),
        (stat.S_ISSOCK, "is a socket, not a journal file"),
        (stat.S_ISCHR, "is a character device, not a journal file"),
        (stat.S_ISBLK, "is a block device, not a journal file"),
    )
    return next((what for test, what in kinds if test(mode)), "is not a regular file")


class SQLiteFile:
    """The journal's connection. One connection is shared by all threads and serialised by a lock;
    writes use ``BEGIN IMMEDIATE ... COMMIT`` so each one is one atomic, durable transaction."""

    def __init__(
        self, path: str | os.PathLike, *, create: bool = True, run_lock: Any = None, read_only: bool = False
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        #: The run's owner lock (:class:`bayestune.storage.lock.RunLock`), released by :meth:`close`.
        self.run_lock = run_lock
        what = None if self.path == ":memory:" else what_it_is(self.path, creating=create)
        if what is not None:
            raise JournalError(f"journal {self.path!r} {what}")
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
    def open(cls: type[_File], path: str | os.PathLike, *, read_only: bool = False) -> _File:
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
                raise JournalError(
                    f"journal {self.path!r} is on read-only storage with commits still in its "
                    f"-wal file, which SQLite cannot read there ({exc}); copy the .db and its "
                    "-wal file to writable storage and read the copy"
                ) from None
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
            raise JournalError(
                f"journal {self.path!r} has schema version {version}; this version reads 1 to {SCHEMA_VERSION}"
            )

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

    def check_integrity(self) -> None:
        """JournalError unless SQLite's ``quick_check`` finds the file sound. A run checks before it
        writes: appending to a damaged file can spread the damage or lose the new rows with it."""
        with self._lock:
            try:
                rows = self._connection.execute("PRAGMA quick_check(5)").fetchall()
            except sqlite3.DatabaseError as exc:
                rows = [(str(exc),)]
        problems = [str(r[0]) for r in rows if r[0] != "ok"]
        if problems:
            found = "; ".join(" ".join(p.split()) for p in problems)  # one line
            raise JournalError(
                f"journal {self.path!r} is damaged (SQLite's quick_check: {found[:300]}); nothing was written "
                f"to it. Recover its readable rows into a new file with `sqlite3 {self.path} .recover | sqlite3 "
                "recovered.db`, or start over with --force"
            )

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
