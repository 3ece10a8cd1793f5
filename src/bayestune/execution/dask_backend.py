"""Evaluations on a Dask distributed cluster (optional extra: ``pip install -e ".[dask]" in the bayestune checkout``).

Connect to a running scheduler by address (``tcp://host:8786``) or pass a
``distributed.Client``. Workers must have bayestune installed, and whatever the black box
needs (the scenario's files, a compiler) at the same paths.

Lost workers: when a worker dies mid-task, the scheduler itself re-runs the task elsewhere up
to ``distributed.scheduler.allowed-failures`` times (default 3) before failing it with
``KilledWorker``. A ``KilledWorker`` or a future lost with its scheduler reaches the loop as
:class:`~bayestune.execution.backends.WorkerLost`, and the loop resubmits once more before
recording the evaluation as failed (kind ``"worker_lost"``). When no worker is left at all, a
warning says so at once and the run stops (resumable) after ``NO_WORKERS_PATIENCE_SECONDS``.
"""

from __future__ import annotations

import itertools
import logging
import time
import uuid
from typing import Any

from bayestune.exceptions import EvaluationError
from bayestune.execution.backends import Backend, Outcome, Task, WorkerLost
from bayestune.execution.factories import EvaluatorFactory, WorkerSetupError, evaluate_in_worker
from bayestune.trial import FailureKind, Result

logger = logging.getLogger(__name__)

#: Seconds to wait for the scheduler when connecting by address.
CONNECT_TIMEOUT = 30
#: Seconds to wait for a client this backend opened to close (the scheduler may be gone).
CLOSE_TIMEOUT_SECONDS = 10
#: Seconds between checks that the cluster still has workers while evaluations wait, and how
#: long a run waits with none before it stops (resumable) instead of waiting silently forever.
WORKER_CHECK_SECONDS = 5.0
NO_WORKERS_PATIENCE_SECONDS = 120.0


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise EvaluationError(
            'the Dask backend needs the distributed package: pip install -e ".[dask]" '
            'in the bayestune checkout (or pip install "dask[distributed]")'
        ) from None
    return distributed


def connect(client: Any) -> Any:
    """A ``distributed.Client``: the one given, or a new one connected to the scheduler address given."""
    distributed = _distributed()
    if isinstance(client, str):
        try:
            return distributed.Client(client, timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            raise EvaluationError(f"cannot connect to the Dask scheduler at {client!r}: {exc}") from None
    if not isinstance(client, distributed.Client):
        raise EvaluationError(f"expected a distributed.Client or a scheduler address, but got {client!r}")
    return client


class DaskBackend(Backend):
    """Evaluations as Dask tasks; ``workers`` in flight (default: the cluster's worker threads).

    ``client``: a ``distributed.Client`` (left open on close) or a scheduler address (a client
    is created here and closed with the backend).
    """

    def __init__(self, factory: EvaluatorFactory, client: Any, *, workers: int | None = None) -> None:
        distributed = _distributed()
        if not isinstance(factory, EvaluatorFactory):
            raise EvaluationError(f"DaskBackend needs an EvaluatorFactory (see parallel.portable), but got {factory!r}")
        self.factory = factory
        self._own_client = isinstance(client, str)
        self.client = client = connect(client)
        if workers is None:
            workers = sum(client.nthreads().values())
            if workers < 1:
                self._close_client()
                raise EvaluationError(
                    f"the Dask cluster at {client.scheduler.address} has no workers; "
                    "start some or pass workers=N explicitly"
                )
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            self._close_client()
            raise EvaluationError(f"workers must be a positive integer, but got {workers!r}")
        self.slots = workers
        self._running: dict[Any, Task] = {}
        self._run_id = uuid.uuid4().hex[:8]
        self._counter = itertools.count(1)
        self._distributed = distributed

    def submit(self, task: Task) -> None:
        key = f"bayestune-{self._run_id}-{task.task_id}-{task.attempt}-{next(self._counter)}"
        future = self.client.submit(evaluate_in_worker, self.factory, dict(task.config), key=key, pure=False)
        self._running[future] = task

    def wait(self) -> list[tuple[Task, Outcome]]:
        if not self._running:
            raise RuntimeError("DaskBackend.wait() called with nothing submitted")
        no_workers_since: float | None = None
        while True:
            try:
                done, _ = self._distributed.wait(
                    list(self._running), timeout=WORKER_CHECK_SECONDS, return_when="FIRST_COMPLETED"
                )
                break
            except TimeoutError:
                no_workers_since = self._check_workers(no_workers_since)
            except Exception as exc:  # noqa: BLE001 - FuturesCancelledError, CommClosedError, OSError, ...
                return self._connection_lost(exc)
        out: list[tuple[Task, Outcome]] = []
        for future in done:
            try:
                outcome = self._outcome(future)
            except OSError as exc:  # CommClosedError: fetching the result needs the scheduler
                if out:  # hand over what arrived; the next wait() meets the loss again
                    return out
                return self._connection_lost(exc)
            out.append((self._running.pop(future), outcome))
            future.release()
        return out

    def _check_workers(self, since: float | None) -> float | None:
        """While tasks wait: say so when the cluster has no worker left, and give up (SchedulerLost,
        the journal resumable) after :data:`NO_WORKERS_PATIENCE_SECONDS`; None while workers are there."""
        try:
            workers = len(self.client.nthreads())
        except Exception as exc:  # noqa: BLE001 - the scheduler went away while we waited
            self._connection_lost(exc)
            return since
        address = getattr(getattr(self.client, "scheduler", None), "address", "?")
        now = time.monotonic()
        if workers:
            if since is not None:
                logger.warning("Dask: %d worker(s) connected to %s again", workers, address)
            return None
        if since is None:
            logger.warning(
                "Dask: no worker is connected to the scheduler %s; %d evaluation(s) wait for one "
                "(giving up after %g s)",
                address,
                len(self._running),
                NO_WORKERS_PATIENCE_SECONDS,
            )
            return now
        if now - since >= NO_WORKERS_PATIENCE_SECONDS:
            raise SchedulerLost(
                f"no Dask worker connected to the scheduler {address} for {NO_WORKERS_PATIENCE_SECONDS:g} s; the "
                f"{len(self._running)} evaluation(s) in flight stay pending in the journal and are re-run by "
                "--resume once workers are back"
            )
        return since

    def _connection_lost(self, exc: Exception) -> list[tuple[Task, Outcome]]:
        """Every running task as lost (resubmitted) if the scheduler still answers, else SchedulerLost."""
        if self.client.status == "running":
            try:
                self.client.scheduler_info()
            except Exception:  # noqa: BLE001 - the scheduler is gone after all
                pass
            else:
                lost: list[tuple[Task, Outcome]] = [
                    (task, WorkerLost(f"the Dask task was cancelled ({type(exc).__name__})"))
                    for task in self._running.values()
                ]
                self._running.clear()
                return lost
        address = getattr(getattr(self.client, "scheduler", None), "address", "?")
        raise SchedulerLost(
            f"lost the Dask scheduler {address} ({type(exc).__name__}: {str(exc)[:200]}); the evaluations in flight "
            "stay pending in the journal and are re-run by --resume once the scheduler is back"
        )

    def _outcome(self, future: Any) -> Outcome:
        status = future.status
        if status == "finished":
            result = future.result()
            if isinstance(result, Result):
                return result
            return Result.failure(f"the worker returned {result!r} instead of a Result", FailureKind.EXCEPTION)
        if status in ("cancelled", "lost"):
            return WorkerLost(f"the Dask task was {status} (its worker or the scheduler went away)")
        try:
            exc = future.exception()
        except self._distributed.CancelledError:
            return WorkerLost("the Dask task was cancelled (its worker or the scheduler went away)")
        if isinstance(exc, self._distributed.KilledWorker):
            return WorkerLost(f"the Dask worker died mid-evaluation ({type(exc).__name__}: {exc})")
        if isinstance(exc, WorkerSetupError):
            raise WorkerSetupError(str(exc))
        raise WorkerSetupError(f"the Dask worker could not run the evaluation: {type(exc).__name__}: {exc}")

    def close(self, *, cancel: bool = False) -> None:
        running = list(self._running)
        self._running.clear()
        if running:
            try:
                self.client.cancel(running)
            except Exception:  # noqa: BLE001 - the scheduler may be gone already
                logger.debug("could not cancel %d Dask task(s)", len(running), exc_info=True)
        self._close_client()

    def _close_client(self) -> None:
        if self._own_client:
            self._own_client = False
            try:
                self.client.close(timeout=CLOSE_TIMEOUT_SECONDS)
            except Exception:  # noqa: BLE001 - the scheduler may be gone
                logger.debug("closing the Dask client failed", exc_info=True)


class SchedulerLost(EvaluationError):
    """The Dask scheduler went away mid-run; the journal is intact and the run resumable."""
