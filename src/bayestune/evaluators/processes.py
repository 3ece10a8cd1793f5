"""The processes of a command black box: started supervised, limited, stopped together.

A command runs in its own session under a supervisor with a death signal (on Linux a child
subreaper, which also catches descendants that call ``setsid`` or double-fork), so neither a
timeout, nor the command's end, nor the death of the optimizer leaves a stray job running
beside the next measurement.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bayestune.evaluators._supervisor import ENDED_ON_SIGTERM
from bayestune.evaluators.base import tail
from bayestune.evaluators.leftovers import with_run_marker
from bayestune.exceptions import EvaluationError

logger = logging.getLogger(__name__)

#: Accepted range of ``memory_limit_mb`` (below 1 MB no shell starts; above 16 TB is no limit).
MIN_MEMORY_LIMIT_MB = 1.0
MAX_MEMORY_LIMIT_MB = 16 * 1024 * 1024.0
#: Characters of stderr quoted in a crash's error text.
STDERR_TAIL_CHARS = 1500
#: Seconds between SIGTERM and SIGKILL when a command times out, for it to clean up.
TERM_GRACE_SECONDS = 2.0
#: Seconds the evaluator waits beyond the grace period for the supervisor to stop a command.
SUPERVISOR_PATIENCE_SECONDS = 5.0
#: The environment variable that marks every process of one evaluation (see :func:`kill_marked`).
EVALUATION_MARKER = "BAYESTUNE_EVALUATION"
#: Seconds between checks of a running command's output size, and the unit freed at once.
OUTPUT_CHECK_SECONDS = 0.1
PUNCH_GRANULE = 1024 * 1024
_SUPERVISOR_SCRIPT = str(Path(__file__).with_name("_supervisor.py"))


class CommandProcesses:
    """A started shell command and every process it starts, stopped together.

    On Linux the shell runs under :mod:`bayestune.evaluators._supervisor`, a child subreaper
    that also stops descendants which left the process group (``setsid``, double forks); the
    supervisor gets the death signal. Elsewhere the shell itself leads the group and gets the
    death signal (:func:`supervised`), and such descendants can escape: a warning says so once.
    """

    def __init__(
        self,
        cmd: str,
        *,
        stdout: Any,
        stderr: Any,
        cwd: str | None,
        env: Mapping[str, str] | None,
        memory_limit: int | None = None,
    ) -> None:
        """``memory_limit``: bytes of address space (see :func:`memory_limit_bytes`), None for no limit."""
        self.supervised = subreaper_available()
        self.marker = f"{uuid.uuid4().hex}"
        env = {**with_run_marker(env), EVALUATION_MARKER: self.marker}  # the run's marker survives us
        if self.supervised:
            argv = [
                sys.executable,
                "-I",
                "-S",
                _SUPERVISOR_SCRIPT,
                repr(TERM_GRACE_SECONDS),
                str(memory_limit or 0),
                "/bin/sh",
                "-c",
                cmd,
            ]
            setup = child_setup(None)
        else:
            argv = ["/bin/sh", "-c", supervised(cmd)]
            setup = child_setup(_rlimit_setter(memory_limit) if memory_limit is not None else None)
        self.proc = subprocess.Popen(
            argv,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            env=env,
            preexec_fn=setup,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def wait(self, timeout: float | None = None, every: Callable[[], None] | None = None) -> int:
        """The command's exit status (subprocess.TimeoutExpired after ``timeout`` s); ``every`` is
        called about every :data:`OUTPUT_CHECK_SECONDS` meanwhile (to bound the output on disk)."""
        if every is None:
            return self.proc.wait(timeout=timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = OUTPUT_CHECK_SECONDS if deadline is None else min(OUTPUT_CHECK_SECONDS, deadline - time.monotonic())
            try:
                return self.proc.wait(timeout=max(left, 0.0))
            except subprocess.TimeoutExpired:
                every()
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    def finish(self) -> None:
        """After the command's own process ended: kill whatever it left in its process group, and,
        when the supervisor itself was killed (it then could not stop what it held), every process
        that still carries this evaluation's marker in its environment."""
        _signal_group(self.proc, signal.SIGKILL)
        if self.supervised and self.proc.returncode is not None and self.proc.returncode < 0:
            kill_marked(self.marker)

    def terminate(self) -> str:
        """SIGTERM everything, SIGKILL what is left after a grace period; says what it did."""
        if not self.supervised:
            return terminate_group(self.proc)
        _signal_group(self.proc, signal.SIGTERM)  # the group at once; the supervisor signals the rest
        try:
            rc = self.proc.wait(timeout=TERM_GRACE_SECONDS + SUPERVISOR_PATIENCE_SECONDS)
        except subprocess.TimeoutExpired:
            logger.warning("the supervisor of pid %d did not stop its command in time; killing its group", self.pid)
            kill_group(self.proc)
            self.proc.wait()
            kill_marked(self.marker)
            rc = None
        return (
            "SIGTERM ended"
            if rc == ENDED_ON_SIGTERM
            else f"SIGTERM, then after {TERM_GRACE_SECONDS:g} s SIGKILL, ended"
        )

    def kill(self) -> None:
        """SIGKILL everything now (Ctrl-C in the optimizer)."""
        if self.supervised:
            _signal_process(self.proc.pid, signal.SIGHUP)  # the supervisor's "kill everything" signal
            try:
                self.proc.wait(timeout=SUPERVISOR_PATIENCE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        kill_group(self.proc)
        self.proc.wait()
        kill_marked(self.marker)


def kill_marked(marker: str) -> int:
    """SIGKILL every process whose environment holds ``EVALUATION_MARKER=marker`` (Linux ``/proc``);
    how many. What a killed supervisor leaves behind (``setsid`` jobs re-parented to init) is found
    this way: every descendant inherits the environment."""
    needle = f"{EVALUATION_MARKER}={marker}".encode()
    killed = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                found = needle in f.read().split(b"\0")
        except OSError:
            continue  # ended meanwhile, or not ours to read
        if found:
            _signal_process(int(entry), signal.SIGKILL)
            killed += 1
    return killed


@functools.lru_cache(maxsize=1)
def subreaper_available() -> bool:
    """True where a command can be supervised by a child subreaper (Linux with prctl)."""
    if sys.platform.startswith("linux") and sys.executable and _libc_prctl() is not None:
        return True
    logger.warning(
        "no child subreaper on %s: a command's processes that leave its process group (setsid, "
        "double fork) are not stopped at its timeout or end",
        sys.platform,
    )
    return False


def _libc_prctl() -> Callable[..., int] | None:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError, ImportError):
        return None


def supervised(cmd: str) -> str:
    """The shell script that runs ``cmd`` and kills its own process group on SIGHUP (no subreaper).

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
    prctl = _libc_prctl()
    if prctl is None:
        return None
    pr_set_pdeathsig = 1

    def arm() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGHUP), 0, 0, 0)

    return arm


def memory_limit_bytes(memory_limit_mb: float) -> int:
    """``memory_limit_mb`` checked and in bytes (EvaluationError naming the range if out of it)."""
    if not (
        isinstance(memory_limit_mb, (int, float))
        and not isinstance(memory_limit_mb, bool)
        and MIN_MEMORY_LIMIT_MB <= memory_limit_mb <= MAX_MEMORY_LIMIT_MB
    ):
        raise EvaluationError(
            f"memory_limit_mb must be a number of megabytes in [{MIN_MEMORY_LIMIT_MB}, "
            f"{MAX_MEMORY_LIMIT_MB:g}], but got {memory_limit_mb!r}"
        )
    try:
        import resource  # noqa: F401
    except ImportError:
        raise EvaluationError(f"memory_limit_mb needs POSIX resource limits, unavailable on {sys.platform}") from None
    if not sys.platform.startswith("linux"):
        logger.warning("memory_limit_mb: RLIMIT_AS may not be enforced on %s", sys.platform)
    return int(memory_limit_mb * 1024 * 1024)


def _rlimit_setter(limit: int) -> Callable[[], None]:
    import resource

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


def _signal_process(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


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


class OutputBound:
    """Keeps a command's output file at most about ``keep`` bytes on disk while the command
    writes it: the start is freed (``fallocate`` punching a hole; the file keeps its size and the
    writer its offset), since only the end is ever read (:func:`read_end`). Linux only; elsewhere,
    or on a file system without holes, it does nothing."""

    def __init__(self, file: Any, keep: int) -> None:
        self.fd, self.keep, self.freed = file.fileno(), keep, 0
        self._punch = _hole_puncher()

    def __call__(self) -> None:
        if self._punch is None:
            return
        upto = (os.fstat(self.fd).st_size - self.keep) // PUNCH_GRANULE * PUNCH_GRANULE
        if upto > self.freed and not self._punch(self.fd, self.freed, upto - self.freed):
            self._punch = None  # not supported here: stop trying
        self.freed = max(self.freed, upto)


@functools.lru_cache(maxsize=1)
def _hole_puncher() -> Callable[[int, int, int], bool] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        fallocate = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError, ImportError):
        return None
    fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    punch_hole_keep_size = 0x02 | 0x01  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE

    def punch(fd: int, offset: int, length: int) -> bool:
        return fallocate(fd, punch_hole_keep_size, offset, length) == 0

    return punch


def read_end(file: Any, limit: int) -> bytes:
    """The last ``limit`` bytes a command wrote to ``file`` (output beyond the cap is dropped)."""
    file.flush()
    size = file.seek(0, os.SEEK_END)
    if size > limit:
        file.seek(size - limit)
        data = file.read(limit)
        cut = data.find(b"\n")
        return data[cut + 1 :] if cut >= 0 else data
    file.seek(0)
    return file.read()


def long_last_line(file: Any, limit: int) -> int | None:
    """The size of ``file`` when its last ``limit`` bytes hold no line break but at their very end:
    its last line is longer than what :func:`read_end` keeps (which then reads as nothing printed)."""
    size = file.seek(0, os.SEEK_END)
    if size <= limit:
        return None
    file.seek(size - limit)
    return None if b"\n" in file.read(limit).rstrip(b"\r\n") else size


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
