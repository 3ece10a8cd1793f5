"""The processes of a command black box: started supervised, limited, stopped as a group.

A command runs in its own session with a death signal, so neither a timeout nor the death of
the optimizer leaves a stray job running beside the next measurement.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from bayestune.evaluators.base import tail
from bayestune.exceptions import EvaluationError

logger = logging.getLogger(__name__)

#: Accepted range of ``memory_limit_mb`` (below 1 MB no shell starts; above 16 TB is no limit).
MIN_MEMORY_LIMIT_MB = 1.0
MAX_MEMORY_LIMIT_MB = 16 * 1024 * 1024.0
#: Characters of stderr quoted in a crash's error text.
STDERR_TAIL_CHARS = 1500
#: Seconds between SIGTERM and SIGKILL when a command times out, for it to clean up.
TERM_GRACE_SECONDS = 2.0


def supervised(cmd: str) -> str:
    """The shell script that runs ``cmd`` and kills its own process group on SIGHUP.

    SIGHUP is the shell's death signal (see :func:`child_setup`); ``wait`` returns at once
    when a trapped signal arrives, while a foreground command would delay the trap until it
    ends. ``cmd``'s exit status is the script's.
    """
    return f"trap 'kill -KILL 0' HUP\n(\n{cmd}\n) &\nwait $!\n"


def child_setup(limit_memory: Callable[[], None] | None) -> Callable[[], None]:
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


def memory_limiter(memory_limit_mb: float) -> Callable[[], None]:
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


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the command's process group (its pgid is its pid: it leads a new session)."""
    _signal_group(proc, signal.SIGKILL)


def _signal_group(proc: subprocess.Popen, sig: int) -> bool:
    try:
        os.killpg(proc.pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False  # the group is already gone


def terminate_group(proc: subprocess.Popen) -> str:
    """SIGTERM the group, SIGKILL what is left after a grace period; says what it did."""
    _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + TERM_GRACE_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None and not _group_alive(proc.pid):
            proc.wait()
            return "SIGTERM ended"
        time.sleep(0.02)
    kill_group(proc)
    proc.wait()
    return f"SIGTERM, then after {TERM_GRACE_SECONDS:g} s SIGKILL, ended"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def read_end(file: Any, limit: int) -> bytes:
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


def describe_exit(rc: int) -> str:
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


def stderr_note(err: bytes, limit: int = STDERR_TAIL_CHARS) -> str:
    text = err.decode(errors="replace").strip()
    return f"\nstderr (end):\n{tail(text, limit)}" if text else ""
