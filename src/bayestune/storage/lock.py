"""The exclusive owner lock of a run's journal: never two writers on one run.

Two optimizers appending to one journal interleave silently (every configuration measured
twice, the budget exceeded), and ``--force`` beside a live run would delete its journal. So a
run holds an exclusive lock for its whole lifetime: ``flock`` on a side file ``<journal>.lock``
that records the owner (pid, host, start time). The kernel releases ``flock`` when its owner
dies, even by ``kill -9``, so a lock is never left held by a dead process; a lock file that
still names an owner when its lock is free is a *stale* lock of a run that died, reported
and taken over.

Why a side file and not the database: ``--force`` replaces the database file (a new inode),
and SQLite's own POSIX locks are per process and released by any ``close()`` of the file.
A clean release deletes the side file while still holding it; so that a process that opened
the old inode cannot lock it after the delete, :meth:`RunLock.acquire` checks, once locked,
that the path still names the file it locked, and starts over if not.

One journal has one lock whatever it is called: the lock belongs to the journal's resolved
path (``alias.db -> j.db`` locks ``j.db.lock``), and the lock file itself is opened without
following a symbolic link (a link planted there would make us truncate its target) and only
if it is a regular file. A hard link is another path to the same file, which no path can
tell: so once the journal is open, the run also holds ``flock`` on the journal file itself
(:meth:`RunLock.lock_journal_file`), which belongs to its inode whatever name opened it.
(SQLite's own locks are POSIX record locks, which ``flock`` does not touch on Linux.)

Worker processes of one run (pool, Dask) never open the journal: the run's process writes
every result, so they need no share of the lock.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import socket
import stat
import time
from pathlib import Path
from typing import Any

from bayestune.exceptions import JournalError

logger = logging.getLogger(__name__)

#: Appended to the journal's path to name its lock file.
LOCK_SUFFIX = ".lock"


def lock_path(journal_path: str | os.PathLike) -> Path:
    """The lock file of the journal at ``journal_path``: beside its resolved path (symlinks followed
    to the journal itself, so every name of one journal shares one lock)."""
    return Path(os.path.realpath(os.fspath(journal_path)) + LOCK_SUFFIX)


def _open_lock_file(path: Path, flags: int) -> int:
    """A descriptor of the regular file ``path``, never through a symbolic link (OSError otherwise)."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IsADirectoryError(errno.EINVAL, "not a regular file")
    return fd


def describe_owner(owner: dict[str, Any] | None) -> str:
    if not owner:
        return "another process (owner unknown)"
    started = owner.get("started_at")
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)) if isinstance(started, (int, float)) else "?"
    return f"bayestune pid {owner.get('pid', '?')} on host {owner.get('host', '?')} (since {since})"


def read_owner(journal_path: str | os.PathLike) -> dict[str, Any] | None:
    """The owner recorded in the lock file, or None (no file, empty, unreadable, not UTF-8 JSON, a link)."""
    try:
        fd = _open_lock_file(lock_path(journal_path), os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 64 * 1024)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        owner = json.loads(data.decode("utf-8")) if data.strip() else None
    except ValueError:  # UnicodeDecodeError is one
        return None
    return owner if isinstance(owner, dict) else None


def _lock_current_file(path: Path, journal_path: str | os.PathLike, fcntl: Any) -> int:
    """A descriptor of ``path`` locked by this process, the file the path names now (a holder
    deletes it on release, so a lock taken on the deleted file is dropped and taken again)."""
    while True:
        try:
            fd = _open_lock_file(path, os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            why = (
                "it is a symbolic link or not a regular file; remove it"
                if isinstance(exc, IsADirectoryError) or exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO)
                else exc.strerror or str(exc)
            )
            raise JournalError(
                f"cannot open the lock file {str(path)!r} of journal {str(journal_path)!r}: {why}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise JournalError(
                f"journal {str(journal_path)!r} is in use by {describe_owner(read_owner(journal_path))}; "
                "wait for that run to finish or stop it (two writers would measure every configuration "
                "twice and overrun the budget)"
            ) from None
        try:
            now = os.stat(path, follow_symlinks=False)
        except OSError:
            now = None
        mine = os.fstat(fd)
        if now is not None and (now.st_ino, now.st_dev) == (mine.st_ino, mine.st_dev):
            return fd
        os.close(fd)


class RunLock:
    """An exclusive, process-lifetime lock on one journal path. :meth:`acquire` or JournalError.

    ``stale_owner`` is the owner a dead run left in the lock file (None when the lock was clean).
    """

    def __init__(self, journal_path: str | os.PathLike, fd: int, stale_owner: dict[str, Any] | None) -> None:
        self.journal_path = str(journal_path)
        self._fd: int | None = fd
        self._file_fd: int | None = None  # flock on the journal file itself (its inode)
        self.stale_owner = stale_owner

    def lock_journal_file(self) -> None:
        """Also lock the journal file itself, so a hard link (another name of the same file) cannot
        get a second writer past the lock; JournalError if another run holds it."""
        if self._fd is None or self._fd < 0:
            return
        if self._file_fd is not None:
            try:
                current = os.stat(self.journal_path)
            except OSError:
                current = None
            held = os.fstat(self._file_fd)
            if current is not None and (current.st_ino, current.st_dev) == (held.st_ino, held.st_dev):
                return  # this file is locked already
            os.close(self._file_fd)  # the file was replaced (--force): lock the new one
            self._file_fd = None
        import fcntl

        try:
            fd = os.open(self.journal_path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return  # not created yet, or unreadable: the journal itself will say so
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise JournalError(
                f"journal {self.journal_path!r} is in use by another run under another name (a hard link to "
                "the same file); two writers would measure every configuration twice and overrun the budget"
            ) from None
        self._file_fd = fd

    @classmethod
    def acquire(cls, journal_path: str | os.PathLike) -> RunLock:
        """Lock ``journal_path`` for this process, without waiting.

        JournalError naming the live owner (pid, host, start) if another process holds it.
        """
        try:
            import fcntl
        except ImportError:  # Windows: no flock; the run goes unlocked, as before
            logger.warning(
                "no file locking on this platform: %s is not protected against a second writer", journal_path
            )
            return cls(journal_path, -1, None)
        path = lock_path(journal_path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalError(
                f"cannot create the directory of journal {str(journal_path)!r}: {exc.strerror or exc}"
            ) from None
        fd = _lock_current_file(path, journal_path, fcntl)
        stale = read_owner(journal_path)
        if stale is not None:  # debug only: the caller reports ``stale_owner`` once (run.open_run_journal)
            logger.debug(
                "journal %s: stale lock of %s (that run died without releasing it); taking it over",
                journal_path,
                describe_owner(stale),
            )
        owner = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(owner).encode(), 0)
        os.fsync(fd)
        return cls(journal_path, fd, stale)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Clear the owner record, delete the lock file and unlock (idempotent)."""
        fd, self._fd = self._fd, None
        file_fd, self._file_fd = self._file_fd, None
        if file_fd is not None:
            os.close(file_fd)
        if fd is None or fd < 0:
            return
        try:
            os.ftruncate(fd, 0)
            lock_path(self.journal_path).unlink()  # still held: a waiter re-checks the path after locking
        except OSError:
            pass
        os.close(fd)  # closing the only descriptor releases the flock

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"RunLock({self.journal_path!r}, {'held' if self.held else 'released'})"
