"""Where evaluations run: the backend interface and the in-process (serial) backend.

A *backend* runs evaluations of submitted :class:`Task` objects and reports each outcome as it
arrives: a :class:`~bayestune.trial.Result`, or :class:`WorkerLost` when the process evaluating
it died (the loop then resubmits it once). :mod:`bayestune.execution.loop` drives a backend
from an :class:`~bayestune.optimizer.Optimizer`; the backends are

- :class:`SerialBackend` (here): evaluations in the calling thread, one at a time, or as one
  ``evaluate_batch`` call for batch-capable evaluators (external tools);
- :class:`~bayestune.execution.pool.ProcessPoolBackend`: local worker processes;
- :class:`~bayestune.execution.dask_backend.DaskBackend`: a Dask distributed cluster.

:func:`~bayestune.execution.backend_choice.make_backend` picks one by name; it lives above all
three so that this module, which they build on, names none of its subclasses.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from bayestune.evaluators.base import Evaluator, InterruptedWithResult, evaluate_safely
from bayestune.exceptions import EvaluationError
from bayestune.trial import Result

logger = logging.getLogger(__name__)


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

    def close(self, *, cancel: bool = False) -> None:  # noqa: B027 - an optional hook, a no-op by default
        """Release workers. ``cancel=True`` (after an interrupt) stops running evaluations too."""

    def __enter__(self) -> Backend:
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
                raise EvaluationError(
                    f"evaluator {self.evaluator!r} answered {len(results)} results for a batch "
                    f"of {len(tasks)} configurations"
                )
            return list(zip(tasks, results))
        task = self._queue.pop(0)
        try:
            return [(task, evaluate_safely(self.evaluator, task.config))]
        except InterruptedWithResult as stop:
            stop.task = task  # the loop journals its completed runs before the run stops
            raise

    def close(self, *, cancel: bool = False) -> None:
        self._queue.clear()
        if self.owns_evaluator:
            self.evaluator.close()
