"""The evaluation loop: drives an :class:`~bayestune.optimizer.Optimizer` with a backend that
runs several evaluations at once.

:func:`run` keeps ``workers`` evaluations in flight. It is asynchronous: as soon as one
finishes, its result is told to the optimizer (and so committed to the journal) and a new
configuration is asked for the free worker; nobody waits for the slowest of a batch. With
``batch=N`` it works in lock-step instead: ask N, evaluate all N (an external tool gets them
as one request), ask again.

Guarantees, whatever the backend:

- the budget counts finished evaluations plus those in flight, so it is never exceeded;
- every result is journaled as it arrives; evaluations in flight when the process dies stay
  ``pending`` in the journal and are re-run by a resumed optimizer;
- an evaluation whose worker dies is resubmitted once (``resubmit=1``); if its worker dies
  again it is recorded as failed with kind ``"worker_lost"``. It is told to the optimizer
  exactly once either way.
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from bayestune.evaluators.base import Evaluator
from bayestune.evaluators.parallel import (
    WORKER_LOST,
    Backend,
    EvaluatorFactory,
    SerialBackend,
    Task,
    WorkerLost,
    portable,
)
from bayestune.exceptions import BayestuneError, EvaluationError
from bayestune.trial import Result, Trial

logger = logging.getLogger(__name__)

BACKENDS = ("serial", "pool", "dask")


def run(optimizer: Any, evaluator: Any, budget: int, *, backend: str | Backend = "serial",
        workers: int | None = None, dask_client: Any = None, batch: int | None = None,
        resubmit: int = 1, callback: Callable[[Trial], None] | None = None,
        mp_context: Any = None) -> Trial | None:
    """Evaluate until ``budget`` evaluations are journaled (or the space is exhausted); return the best trial.

    ``evaluator``: an :class:`~bayestune.evaluators.base.Evaluator`, a function
    ``config -> values`` (see :func:`bayestune.trial.coerce_result`), a ``"module:function"``
    target, or an :class:`~bayestune.evaluators.parallel.EvaluatorFactory`. The ``"pool"`` and
    ``"dask"`` backends need something workers can rebuild (see
    :func:`~bayestune.evaluators.parallel.portable`).

    ``backend``: ``"serial"`` (this thread), ``"pool"`` (``workers`` local processes),
    ``"dask"`` (a Dask cluster: ``dask_client`` is a ``distributed.Client`` or a scheduler
    address; ``workers`` defaults to its thread count), or a :class:`Backend` instance.
    ``batch``: lock-step batches of this many configurations instead of asynchronous refills.
    ``resubmit``: how often an evaluation whose worker died is submitted again.
    ``callback``: called with every trial as it is journaled.
    """
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise BayestuneError(f"budget must be a positive integer, but got {budget!r}")
    if batch is not None and (not isinstance(batch, int) or isinstance(batch, bool) or batch < 1):
        raise BayestuneError(f"batch must be a positive integer, but got {batch!r}")
    if not isinstance(resubmit, int) or resubmit < 0:
        raise BayestuneError(f"resubmit must be a non-negative integer, but got {resubmit!r}")
    objectives = [o.name for o in optimizer.objectives]
    engine = make_backend(backend, evaluator, objectives, workers=workers, dask_client=dask_client,
                          batch=batch, mp_context=mp_context)
    try:
        _Loop(optimizer, engine, budget, batch=batch, resubmit=resubmit, callback=callback).run()
    except BaseException:
        engine.close(cancel=True)
        raise
    engine.close()
    return optimizer.best


def make_backend(backend: str | Backend, evaluator: Any, objectives: list[str], *, workers: int | None = None,
                 dask_client: Any = None, batch: int | None = None, mp_context: Any = None) -> Backend:
    """The backend named ``backend`` for ``evaluator`` (see :func:`run`)."""
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
        owns = False
        if isinstance(evaluator, EvaluatorFactory):
            evaluator, owns = evaluator.build(), True
        elif isinstance(evaluator, str) or (callable(evaluator) and not isinstance(evaluator, Evaluator)):
            evaluator, owns = portable(evaluator, objectives).build(), True
        if not isinstance(evaluator, Evaluator):
            raise EvaluationError(f"expected an evaluator, an evaluator factory or a function, but got {evaluator!r}")
        return SerialBackend(evaluator, slots=batch or 1, owns_evaluator=owns)
    factory = portable(evaluator, objectives)
    if backend == "pool":
        from bayestune.evaluators.pool import ProcessPoolBackend

        return ProcessPoolBackend(factory, workers or 1, mp_context=mp_context)
    if dask_client is None:
        raise BayestuneError("the dask backend needs dask_client: a distributed.Client or a scheduler address")
    from bayestune.evaluators.dask_backend import DaskBackend

    return DaskBackend(factory, dask_client, workers=workers)


class _Loop:
    """State of one :func:`run`: configurations asked but not yet submitted, and those in flight."""

    def __init__(self, optimizer: Any, engine: Backend, budget: int, *, batch: int | None, resubmit: int,
                 callback: Callable[[Trial], None] | None) -> None:
        self.optimizer = optimizer
        self.engine = engine
        self.budget = budget
        self.batch = batch
        self.resubmit = resubmit
        self.callback = callback
        self.queue: deque[Task] = deque()  # asked, waiting for a free slot (resubmits go first)
        self.in_flight = 0
        self.exhausted = False
        self._ids = itertools.count(1)

    def room(self) -> int:
        """Evaluations the budget still allows beyond the finished, queued and running ones."""
        return self.budget - self.optimizer.n_evaluated - len(self.queue) - self.in_flight

    def run(self) -> None:
        while True:
            self._ask()
            while self.queue and self.in_flight < self.engine.slots:
                self.engine.submit(self.queue.popleft())
                self.in_flight += 1
            if self.in_flight == 0:
                if self.exhausted and self.optimizer.n_evaluated < self.budget:
                    logger.info("every feasible configuration has been evaluated")
                return
            for task, outcome in self.engine.wait():
                self.in_flight -= 1
                self._finish(task, outcome)

    def _ask(self) -> None:
        if self.exhausted:
            return
        if self.batch is not None:  # lock-step: a new batch once the previous one is done
            want = min(self.batch, self.room()) if not self.queue and self.in_flight == 0 else 0
        else:
            want = min(self.engine.slots - self.in_flight - len(self.queue), self.room())
        if want <= 0:
            return
        configs = self.optimizer.ask(want)
        if len(configs) < want:
            self.exhausted = True
        self.queue.extend(Task(config, next(self._ids)) for config in configs)

    def _finish(self, task: Task, outcome: Any) -> None:
        if isinstance(outcome, WorkerLost):
            if task.attempt <= self.resubmit:
                logger.warning("the worker evaluating %s died (%s); resubmitting (attempt %d)",
                               task.config, outcome.reason, task.attempt + 1)
                task.attempt += 1
                self.queue.appendleft(task)
                return
            outcome = Result.failure(
                f"the worker died on each of {task.attempt} attempt(s) to evaluate this configuration; "
                f"last: {outcome.reason}", WORKER_LOST)
        trial = self.optimizer.tell(task.config, outcome)
        if self.callback is not None:
            self.callback(trial)
