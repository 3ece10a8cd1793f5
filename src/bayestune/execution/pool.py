"""Local worker processes: ``workers`` evaluations at once on this machine.

Each slot is a one-process :class:`concurrent.futures.ProcessPoolExecutor`. One pool per slot
(rather than one pool of ``workers`` processes) is what makes a dying worker attributable:
when a black box kills its process (a segfaulting extension, ``os._exit``, the OOM killer),
a shared pool breaks *every* running future, so the innocent evaluations beside it would be
charged with the crash; here only the task of the dead slot is reported lost, and that slot
alone is restarted.

Workers start from a ``forkserver`` (POSIX) that has already imported bayestune, so a
restarted worker is ready in milliseconds and no worker is forked from a multi-threaded
parent. The evaluator reaches the workers as an
:class:`~bayestune.execution.factories.EvaluatorFactory` and is built once per worker.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from bayestune.evaluators.leftovers import current_marker, set_marker
from bayestune.exceptions import EvaluationError
from bayestune.execution.backends import Backend, Outcome, Task, WorkerLost
from bayestune.execution.factories import EvaluatorFactory, WorkerSetupError, evaluate_in_worker
from bayestune.trial import FailureKind, Result

logger = logging.getLogger(__name__)

#: Seconds a cancelled worker gets to kill its command's process group before SIGKILL.
STOP_GRACE_SECONDS = 2.0
#: Seconds a new worker process may take to start and answer.
START_TIMEOUT_SECONDS = 120.0
#: How often a worker checks that the optimizer process is still alive.
PARENT_POLL_SECONDS = 0.5
#: Modules the forkserver imports once, so that forked workers start warm (``__main__`` as
#: multiprocessing does by default, so functions of the main script can be pickled by reference).
PRELOAD = [
    "__main__",
    "bayestune.execution.factories",
    "bayestune.evaluators.command",
    "bayestune.evaluators.python_callable",
    "bayestune.evaluators.external",
]


def default_context() -> Any:
    """``forkserver`` where available (POSIX), else ``spawn``: never a plain fork of a threaded parent."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)  # no effect once the server runs: harmless
        return ctx
    return multiprocessing.get_context("spawn")


def _ping() -> int:
    return os.getpid()


def _worker_init(parent_pid: int, run_marker: str | None = None) -> None:
    """In each worker: SIGTERM raises SystemExit, so an evaluation in progress unwinds (a
    command evaluator kills its process group) instead of the worker vanishing mid-way; SIGINT
    is ignored (on Ctrl-C the optimizer stops its workers with SIGTERM); and a
    watcher thread ends the worker when the optimizer process is gone (``kill -9``), which a
    worker blocked on its task queue would otherwise never notice. ``run_marker``: the run's
    process marker, which the worker's evaluations carry (:mod:`bayestune.evaluators.leftovers`)."""
    set_marker(run_marker)

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole terminal group: the optimizer decides
    threading.Thread(target=_watch_parent, args=(parent_pid,), name="bayestune-parent-watch", daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    while _alive(parent_pid):
        time.sleep(PARENT_POLL_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(STOP_GRACE_SECONDS)
    os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed parent not yet reaped is a zombie: gone as far as we are concerned
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class ProcessPoolBackend(Backend):
    """``workers`` local worker processes evaluating ``factory``'s evaluator.

    ``mp_context``: a :mod:`multiprocessing` context or start-method name (default: see
    :func:`default_context`).
    """

    def __init__(self, factory: EvaluatorFactory, workers: int, *, mp_context: Any = None) -> None:
        if not isinstance(factory, EvaluatorFactory):
            raise EvaluationError(
                f"ProcessPoolBackend needs an EvaluatorFactory (see parallel.portable), but got {factory!r}"
            )
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise EvaluationError(f"workers must be a positive integer, but got {workers!r}")
        self.factory = factory
        self.slots = workers
        if isinstance(mp_context, str):
            mp_context = multiprocessing.get_context(mp_context)
        self._context = mp_context or default_context()
        self._executors: list[ProcessPoolExecutor | None] = [None] * workers
        self._running: dict[Future, tuple[int, Task]] = {}
        self.restarts = 0  # workers replaced after dying

    def _executor(self, slot: int) -> ProcessPoolExecutor:
        """The slot's executor, started (and checked to be alive) on first use."""
        executor = self._executors[slot]
        if executor is None:
            executor = ProcessPoolExecutor(
                max_workers=1,
                mp_context=self._context,
                initializer=_worker_init,
                initargs=(os.getpid(), current_marker()),
            )
            # A worker that cannot even start would otherwise look like one killed by every
            # configuration, and the whole budget would be recorded as "worker_lost".
            try:
                executor.submit(_ping).result(timeout=START_TIMEOUT_SECONDS)
            except Exception as exc:  # noqa: BLE001 - BrokenProcessPool, timeout, ...
                executor.shutdown(wait=False, cancel_futures=True)
                raise WorkerSetupError(
                    f"cannot start a worker process ({self._context.get_start_method()}): {type(exc).__name__}: {exc}"
                ) from exc
            self._executors[slot] = executor
        return executor

    def _free_slot(self) -> int:
        busy = {slot for slot, _ in self._running.values()}
        for slot in range(self.slots):
            if slot not in busy:
                return slot
        raise EvaluationError(f"all {self.slots} worker(s) are busy: wait() before submitting more")

    def submit(self, task: Task) -> None:
        slot = self._free_slot()
        try:
            future = self._executor(slot).submit(evaluate_in_worker, self.factory, task.config)
        except BrokenProcessPool:  # died between two tasks: start it afresh
            self._replace(slot)
            future = self._executor(slot).submit(evaluate_in_worker, self.factory, task.config)
        self._running[future] = (slot, task)

    def wait(self) -> list[tuple[Task, Outcome]]:
        if not self._running:
            raise RuntimeError("ProcessPoolBackend.wait() called with nothing submitted")
        done, _ = wait_futures(list(self._running), return_when=FIRST_COMPLETED)
        out: list[tuple[Task, Outcome]] = []
        for future in done:
            slot, task = self._running.pop(future)
            out.append((task, self._outcome(future, slot)))
        return out

    def _outcome(self, future: Future, slot: int) -> Outcome:
        exc = future.exception()
        if exc is None:
            result = future.result()
            if isinstance(result, Result):
                return result
            return Result.failure(f"the worker returned {result!r} instead of a Result", FailureKind.EXCEPTION)
        if isinstance(exc, BrokenProcessPool):
            self._replace(slot)
            return WorkerLost(f"worker process died mid-evaluation ({exc})")
        if isinstance(exc, WorkerSetupError):
            raise exc
        # Could not send the task or receive its result (pickling), or the worker function itself failed.
        raise WorkerSetupError(f"the worker could not run the evaluation: {type(exc).__name__}: {exc}") from exc

    def _replace(self, slot: int) -> None:
        executor = self._executors[slot]
        self._executors[slot] = None
        self.restarts += 1
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        logger.warning("worker %d died; starting a new one", slot)

    def close(self, *, cancel: bool = False) -> None:
        executors = [e for e in self._executors if e is not None]
        self._executors = [None] * self.slots
        if cancel:
            for executor in executors:
                _stop_workers(executor)
        for executor in executors:
            executor.shutdown(wait=not cancel, cancel_futures=True)
        self._running.clear()


def _stop_workers(executor: ProcessPoolExecutor) -> None:
    """SIGTERM the executor's processes (their evaluations unwind), then SIGKILL stragglers."""
    processes = list(getattr(executor, "_processes", {}).values())  # private, but the only handle there is
    for proc in processes:
        if proc.is_alive():
            try:
                os.kill(proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
    for proc in processes:
        proc.join(STOP_GRACE_SECONDS)
        if proc.is_alive():
            proc.kill()
            proc.join(STOP_GRACE_SECONDS)
