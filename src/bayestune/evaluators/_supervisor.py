"""The supervisor of one command black box (Linux): a child subreaper that leaves no descendant behind.

A process group cannot hold a command that calls ``setsid`` or double-forks: its grandchildren
leave the group and, once their parent exits, are re-parented to init, out of reach of a
timeout kill. This tiny process runs between the evaluator and the command's shell. It marks
itself a child subreaper (``PR_SET_CHILD_SUBREAPER``), so every orphaned descendant is
re-parented to it, and before it exits it stops every process below it, found by walking the
parent links in ``/proc``. It is a separate process because the subreaper flag would otherwise
make the optimizer (and its Dask or pool workers) the parent of every orphan they ever create.

    python -I -S _supervisor.py GRACE_SECONDS MEMORY_LIMIT_BYTES PROGRAM [ARG...]

Signals it acts on: SIGTERM stops every descendant (SIGTERM, then SIGKILL after GRACE_SECONDS)
and exits with :data:`ENDED_ON_SIGTERM` or :data:`NEEDED_SIGKILL`; SIGHUP (its death signal,
armed by the evaluator) and SIGINT SIGKILL every descendant at once. When the command's
program ends by itself, whatever it left running is SIGKILLed and the supervisor exits as the
program did (same code, or the same signal). Only the standard library is imported: it starts
in about 20 ms.
"""

from __future__ import annotations

import os
import signal
import sys
import time

#: Exit codes after a SIGTERM: every descendant ended within the grace period, or some needed SIGKILL.
ENDED_ON_SIGTERM = 0
NEEDED_SIGKILL = 1
#: Exit code when the program cannot be started (as a shell's "not executable").
CANNOT_START = 126
#: Seconds spent SIGKILLing descendants that will not go (a process in uninterruptible sleep).
KILL_PATIENCE_SECONDS = 10.0
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


class _Stop(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _prctl():
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl


def descendants(root: int) -> list[int]:
    """Pids of every living (not zombie) process below ``root``, from the parent links in /proc."""
    children: dict[int, list[int]] = {}
    zombies: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # it ended while we looked
        fields = stat[stat.rfind(b")") + 2 :].split()
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)
        if fields[0] == b"Z":
            zombies.add(pid)
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            stack.append(child)
            if child not in zombies:
                found.append(child)
    return found


def _reap() -> None:
    """Collect the exit status of every child that has ended (orphans re-parented to us included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _send(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_all(root: int) -> None:
    """SIGKILL every descendant of ``root`` until none is left (new ones forked meanwhile too)."""
    deadline = time.monotonic() + KILL_PATIENCE_SECONDS
    while time.monotonic() < deadline:
        _reap()
        alive = descendants(root)
        if not alive:
            return
        _send(alive, signal.SIGKILL)
        time.sleep(0.01)


def terminate_all(root: int, grace: float, escalate: list[bool]) -> bool:
    """SIGTERM every descendant, SIGKILL what is left after ``grace`` s; True if SIGTERM sufficed."""
    signalled: set[int] = set()
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and not escalate[0]:
        _reap()
        alive = descendants(root)
        if not alive:
            return True
        _send([p for p in alive if p not in signalled], signal.SIGTERM)
        signalled.update(alive)
        time.sleep(0.02)
    kill_all(root)
    return False


def _exit_like(status: int) -> None:
    """Exit as a child with wait status ``status`` did: its code, or death by its signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the program's crash, not ours, dumps core
        except (ImportError, ValueError, OSError):
            pass
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))


def _start(command: list[str], memory_limit: int, supervisor: int, prctl) -> int:
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: dies with the supervisor, limited, then becomes the program
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != supervisor:
            os._exit(1)
        if memory_limit > 0:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
        os.execv(command[0], command)
    except BaseException as exc:  # noqa: BLE001 - the child must never return into the supervisor's code
        try:
            os.write(2, f"bayestune: cannot start {command[0]!r}: {exc}\n".encode())
        finally:
            os._exit(CANNOT_START)
    raise AssertionError("unreachable")


def main(argv: list[str]) -> None:
    grace, memory_limit, command = float(argv[0]), int(argv[1]), argv[2:]
    me = os.getpid()
    escalate = [False]
    stopping = [False]

    def on_signal(signum: int, _frame) -> None:
        if stopping[0]:
            escalate[0] = escalate[0] or signum != signal.SIGTERM
            return
        stopping[0] = True
        raise _Stop(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    prctl = _prctl()
    try:
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        program = _start(command, memory_limit, me, prctl)
        while True:  # reap re-parented orphans as they end, until the program itself ends
            pid, status = os.waitpid(-1, 0)
            if pid == program:
                break
        stopping[0] = True
        kill_all(me)  # what the program left running
        _exit_like(status)
    except _Stop as stop:
        if stop.signum == signal.SIGTERM:
            os._exit(ENDED_ON_SIGTERM if terminate_all(me, grace, escalate) else NEEDED_SIGKILL)
        kill_all(me)
        os._exit(128 + stop.signum)


if __name__ == "__main__":
    main(sys.argv[1:])
