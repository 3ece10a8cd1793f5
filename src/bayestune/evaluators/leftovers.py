"""A run's durable process marker: what the evaluations of a killed run left running is stopped
when the run resumes (Linux).

A command's supervisor (:mod:`bayestune.evaluators._supervisor`) stops everything below it, and
the optimizer's death signal reaches the supervisor. A ``kill -9`` of both (``pkill -9 -f
bayestune``) leaves a job that called ``setsid`` re-parented to init, and the marker of its
evaluation lived only in the dead optimizer's memory. So every process an evaluation starts also
carries ``BAYESTUNE_RUN=<token>:<device>:<inode>`` in its environment: the token is stored in the
journal's metadata, the device and inode name the journal file (a copy of the journal is another
run). A run that opens a journal holding a token already holds the journal's lock, so no live
optimizer writes it: every process of this user whose environment holds exactly that entry is a
leftover of a lost evaluation, and is killed before the first evaluation.

The marker is held here while the run holds its journal (:func:`marking`) and handed to pool
workers as they start (:mod:`bayestune.execution.pool`); only the processes of evaluations get it
in their environment (:func:`with_run_marker`), never the optimizer, its workers or the
forkserver, so a resume kills nothing but leftovers.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from bayestune.storage import TrialJournal

logger = logging.getLogger(__name__)

#: The environment variable naming the run (its journal) an evaluation's processes belong to.
RUN_MARKER = "BAYESTUNE_RUN"
#: The journal metadata key of the run's token.
META_PROCESS_MARKER = "process_marker"
#: Seconds given to killed leftovers to vanish (re-parented to init, which reaps them).
GONE_PATIENCE_SECONDS = 5.0


_current: list[str | None] = [None]  # the marker of the run this process evaluates for


def current_marker() -> str | None:
    """The marker of the run this process evaluates for (None: no journal, nothing durable)."""
    return _current[0]


def set_marker(marker: str | None) -> None:
    """Make ``marker`` the run's marker here (a pool worker, at its start)."""
    _current[0] = marker


def with_run_marker(env: Mapping[str, str] | None) -> dict[str, str]:
    """``env`` (None: this process's environment) with the run's marker, if there is one (it
    replaces the marker of an enclosing run this process is an evaluation of)."""
    out = dict(os.environ if env is None else env)
    if _current[0]:
        out[RUN_MARKER] = _current[0]
    return out


def run_marker(journal: TrialJournal, path: str | os.PathLike) -> tuple[str | None, str]:
    """The marker of the previous run of ``journal`` (None: it never marked processes) and of this run.

    Both name the same token and file; a journal without a token gets one (written at once)."""
    token = journal.get_meta(META_PROCESS_MARKER)
    previous = isinstance(token, str) and token.isalnum()
    if not previous:
        token = uuid.uuid4().hex
        journal.set_meta(META_PROCESS_MARKER, token)
    st = os.stat(path)
    marker = f"{token}:{st.st_dev}:{st.st_ino}"
    return (marker if previous else None), marker


def kill_leftovers(marker: str) -> list[int]:
    """SIGKILL every process of this user whose environment holds ``BAYESTUNE_RUN=marker`` (exactly);
    their pids, once they are gone (or after :data:`GONE_PATIENCE_SECONDS`). Linux ``/proc`` only."""
    if not sys.platform.startswith("linux"):
        return []
    needle = f"{RUN_MARKER}={marker}".encode()
    killed = []
    for pid in _marked(needle):
        if _kill(pid, needle):
            killed.append(pid)
    deadline = time.monotonic() + GONE_PATIENCE_SECONDS
    while any(_alive(p) for p in killed) and time.monotonic() < deadline:
        time.sleep(0.02)
    return killed


def _marked(needle: bytes) -> Iterator[int]:
    me, uid = os.getpid(), os.getuid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue  # another user's process: never ours to stop
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    yield int(entry)
        except OSError:
            continue  # it ended while we looked, or is not readable


def _kill(pid: int, needle: bytes) -> bool:
    """SIGKILL ``pid`` if it is still the process whose environment was read (a pidfd pins it)."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    try:
        if fd is not None:
            with open(f"/proc/{pid}/environ", "rb") as f:  # re-read: the pidfd now pins this process
                if needle not in f.read().split(b"\0"):
                    return False
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
        return True
    except (OSError, AttributeError):
        return False
    finally:
        if fd is not None:
            os.close(fd)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


@contextmanager
def marking(
    journal: TrialJournal, path: str | os.PathLike, announce: Callable[[str], None] | None = None
) -> Iterator[str]:
    """While the run holds ``journal`` (at ``path``): leftovers of its previous run killed first,
    then every evaluation started here (and in pool workers started later) carries the run's marker."""
    previous, marker = run_marker(journal, path)
    if previous is not None:
        killed = kill_leftovers(previous)
        if killed:
            note = (
                f"stopped {len(killed)} process(es) left running by evaluations lost when the previous "
                f"run of this journal was killed (pids {', '.join(map(str, sorted(killed)))})"
            )
            (announce or logger.warning)(note)
    before = _current[0]
    _current[0] = marker
    try:
        yield marker
    finally:
        _current[0] = before
