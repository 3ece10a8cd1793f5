"""Where evaluations run: the backend interface, the in-process (serial) backend, and
:func:`make_backend`, which picks one by name.

A *backend* runs evaluations of submitted :class:`Task` objects and reports each outcome as it
arrives: a :class:`~bayestune.trial.Result`, or :class:`WorkerLost` when the process evaluating
it died (the loop then resubmits it once). :mod:`bayestune.execution.loop` drives a backend
from an :class:`~bayestune.optimizer.Optimizer`; the backends are

- :class:`SerialBackend` (here): evaluations in the calling thread, one at a time, or as one
  ``evaluate_batch`` call for batch-capable evaluators (external tools);
- :class:`~bayestune.execution.pool.ProcessPoolBackend`: local worker processes;
- :class:`~bayestune.execution.dask_backend.DaskBackend`: a Dask distributed cluster.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bayestune.evaluators.base import Evaluator, evaluate_safely
from bayestune.exceptions import BayestuneError, EvaluationError
from bayestune.execution.factories import EvaluatorFactory, portable
from bayestune.trial import Result

logger = logging.getLogger(__name__)

#: Names :func:`make_backend` accepts.
BACKENDS = ("serial", "pool", "dask")


# ---- what travels between the loop and a backend --------------------------------------------
@dataclass
class Task:
    """One configuration to evaluate; ``attempt`` counts submissions (resubmits after a lost worker)."""

    config: dict[str, Any]
    task_id: int
    attempt: int = 1


@dataclass(frozen=True)
class WorkerLost:
    """Outcome of a task whose worker process died (or was lost with its node) mid-evaluation."""

    reason: str


Outcome = Result | WorkerLost


class Backend(ABC):
    """Runs up to :attr:`slots` tasks at once and reports outcomes as they arrive."""

    #: How many tasks may be in flight at once.
    slots: int

    @abstractmethod
    def submit(self, task: Task) -> None:
        """Start evaluating ``task`` (callers never exceed :attr:`slots` tasks in flight)."""

    @abstractmethod
    def wait(self) -> list[tuple[Task, Outcome]]:
        """Block until at least one submitted task has finished; return every finished one.

        Raises :class:`~bayestune.execution.factories.WorkerSetupError` when the evaluator could
        not run at all.
        """

    def close(self, *, cancel: bool = False) -> None:
        """Release workers. ``cancel=True`` (after an interrupt) stops running evaluations too."""

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.close(cancel=exc_type is not None)


# ---- the serial backend ----------------------------------------------------------------------
class SerialBackend(Backend):
    """Evaluations in the calling thread. With ``slots > 1`` (lock-step batches) a batch-capable
    evaluator (one with ``evaluate_batch``, e.g. an external tool) gets all submitted tasks in
    one call; other evaluators take them one by one, each reported as soon as it is done.

    ``owns_evaluator``: close the evaluator with the backend (it was built for this run).
    """

    def __init__(self, evaluator: Evaluator, owns_evaluator: bool = False, *, slots: int = 1) -> None:
        if slots < 1:
            raise EvaluationError(f"a backend needs slots >= 1, but got {slots}")
        self.evaluator = evaluator
        self.slots = int(slots)
        self.owns_evaluator = owns_evaluator
        self._queue: list[Task] = []

    def submit(self, task: Task) -> None:
        self._queue.append(task)

    def wait(self) -> list[tuple[Task, Outcome]]:
        if not self._queue:
            raise RuntimeError("SerialBackend.wait() called with nothing submitted")
        batch_fn = getattr(self.evaluator, "evaluate_batch", None)
        if batch_fn is not None and len(self._queue) > 1:
            tasks, self._queue = self._queue, []
            results = list(batch_fn([dict(t.config) for t in tasks]))
            if len(results) != len(tasks):
                raise EvaluationError(f"evaluator {self.evaluator!r} answered {len(results)} results for a batch "
                                      f"of {len(tasks)} configurations")
            return list(zip(tasks, results))
        task = self._queue.pop(0)
        return [(task, evaluate_safely(self.evaluator, task.config))]

    def close(self, *, cancel: bool = False) -> None:
        self._queue.clear()
        if self.owns_evaluator:
            self.evaluator.close()


def make_backend(backend: str | Backend, evaluator: Any, objectives: Sequence[str], *, workers: int | None = None,
                 dask_client: Any = None, batch: int | None = None, mp_context: Any = None,
                 feasible_key: str | None = None) -> Backend:
    """The backend named ``backend`` for ``evaluator`` (see :func:`bayestune.execution.loop.run`).

    A function given to the serial backend is called in this process with the optimizer's
    ``feasible_key``; the others need something workers can rebuild (:func:`portable`).
    """
    if isinstance(backend, Backend):
        return backend
    if backend not in BACKENDS:
        raise BayestuneError(f"unknown backend {backend!r}; allowed: {list(BACKENDS)}")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise BayestuneError(f"workers must be a positive integer, but got {workers!r}")
    if backend == "serial":
        if workers not in (None, 1):
            raise BayestuneError(f"the serial backend runs one evaluation at a time, but got workers={workers}; "
                                 "use backend='pool' or 'dask'")
        return SerialBackend(*_local_evaluator(evaluator, objectives, feasible_key), slots=batch or 1)
    factory = portable(evaluator, objectives)
    if backend == "pool":
        from bayestune.execution.pool import ProcessPoolBackend

        return ProcessPoolBackend(factory, workers or 1, mp_context=mp_context)
    if dask_client is None:
        raise BayestuneError("the dask backend needs dask_client: a distributed.Client or a scheduler address")
    from bayestune.execution.dask_backend import DaskBackend

    return DaskBackend(factory, dask_client, workers=workers)


def _local_evaluator(evaluator: Any, objectives: Sequence[str], feasible_key: str | None) -> tuple[Evaluator, bool]:
    """The evaluator to call in this process, and whether it was built here (and must be closed here)."""
    if isinstance(evaluator, Evaluator):
        return evaluator, False
    if isinstance(evaluator, EvaluatorFactory):
        return evaluator.build(), True
    if isinstance(evaluator, str):
        return portable(evaluator, objectives).build(), True
    if callable(evaluator):
        from bayestune.evaluators.python_callable import CallableEvaluator

        return CallableEvaluator(evaluator, objectives, feasible_key=feasible_key), True
    raise EvaluationError(f"expected an evaluator, an evaluator factory or a function, but got {evaluator!r}")
