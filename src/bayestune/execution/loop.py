"""The evaluation loop: drives an :class:`~bayestune.optimizer.Optimizer` with a backend,
for the CLI, for ``Optimizer.optimize`` (serial) and for parallel runs alike.

:func:`run` keeps ``workers`` evaluations in flight. It is asynchronous: as soon as one
finishes, its result is told to the optimizer (and so committed to the journal) and a new
configuration is asked for the free worker; nobody waits for the slowest of a batch. With
``batch=N`` it works in lock-step instead: ask N, evaluate all N (an external tool gets them
as one request), ask again.

Guarantees, whatever the backend:

- the budget counts finished evaluations plus those in flight, so it is never exceeded; a
  ``time_limit`` (wall-clock seconds: compile, run and optimizer time alike) stops new
  evaluations too, and with ``budget=None`` it is the only limit;
- each trial's ``timings`` gets ``"optimizer"``: its share of the time spent in ``ask``
  (the strategy's suggestion), beside the phases the evaluator reported;
- every result is journaled as it arrives; evaluations in flight when the process dies stay
  ``pending`` in the journal and are re-run by a resumed optimizer;
- an evaluation whose worker dies is resubmitted once (``resubmit=1``); if its worker dies
  again it is recorded as failed with kind ``FailureKind.WORKER_LOST``. It is told to the optimizer
  exactly once either way.
"""

from __future__ import annotations

import itertools
import logging
import operator
import re
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bayestune import run as run_meta
from bayestune.evaluators.base import InterruptedWithResult
from bayestune.exceptions import BayestuneError, EvaluationError
from bayestune.execution.backend_choice import make_backend
from bayestune.execution.backends import Backend, Task, WorkerLost
from bayestune.measurement.timing import OPTIMIZER_PHASE
from bayestune.trial import FailureKind, Result, Trial, TrialStatus

logger = logging.getLogger(__name__)

#: Failed evaluations in a row, with none successful yet, after which a run stops early.
DEFAULT_STOP_AFTER_FAILURES = 10
#: The evaluation budget of a run bounded only by its time limit.
UNLIMITED = 2**62


def run(
    optimizer: Any,
    evaluator: Any,
    budget: int | None,
    *,
    backend: str | Backend = "serial",
    workers: int | None = None,
    dask_client: Any = None,
    batch: int | None = None,
    resubmit: int = 1,
    callback: Callable[[Trial], None] | None = None,
    mp_context: Any = None,
    stop_after_failures: int | None = DEFAULT_STOP_AFTER_FAILURES,
    time_limit: float | None = None,
    build_workers: int | None = None,
    devices: Any = None,
) -> Trial | None:
    """Evaluate until ``budget`` evaluations are journaled (or the space is exhausted); return the best trial.

    ``evaluator``: an :class:`~bayestune.evaluators.base.Evaluator`, a function
    ``config -> values`` (see :func:`bayestune.trial.coerce_result`), a ``"module:function"``
    target, or an :class:`~bayestune.execution.factories.EvaluatorFactory`. The ``"pool"`` and
    ``"dask"`` backends need something workers can rebuild (see
    :func:`~bayestune.execution.factories.portable`).

    ``backend``: ``"serial"`` (this thread), ``"pool"`` (``workers`` local processes),
    ``"dask"`` (a Dask cluster: ``dask_client`` is a ``distributed.Client`` or a scheduler
    address; ``workers`` defaults to its thread count), or a :class:`Backend` instance.
    ``batch``: lock-step batches of this many configurations instead of asynchronous refills.
    ``resubmit``: how often an evaluation whose worker died is submitted again.
    ``callback``: called with every trial as it is journaled.
    ``stop_after_failures``: stop early when this many evaluations in a row have failed and none
    of the run has succeeded yet (a broken black box should not spend the whole budget); None
    or 0 never stops. The optimizer's ``stopped_reason`` then says why.
    ``time_limit``: wall-clock seconds after which no new evaluation starts (those running finish);
    ``budget=None`` runs until then (or until the space is exhausted).
    ``build_workers`` / ``devices``: with ``backend="pipeline"`` (a black box with a build step),
    builds at once and the devices that each measure one configuration at a time
    (:mod:`bayestune.execution.pipeline`); with ``dask_client`` they run on the Dask workers
    offering the ``build`` and ``device`` resources.
    """
    if budget is None and time_limit is None:
        raise BayestuneError("budget=None needs a time_limit: a run must be bounded by evaluations, seconds, or both")
    unlimited = budget is None
    budget = UNLIMITED if budget is None else _positive_int(budget, "budget")
    if batch is not None:
        batch = _positive_int(batch, "batch")
    if not isinstance(resubmit, int) or resubmit < 0:
        raise BayestuneError(f"resubmit must be a non-negative integer, but got {resubmit!r}")
    if stop_after_failures is not None and (
        isinstance(stop_after_failures, bool) or not isinstance(stop_after_failures, int) or stop_after_failures < 0
    ):
        raise BayestuneError(
            f"stop_after_failures must be a non-negative integer or None, but got {stop_after_failures!r}"
        )
    if time_limit is not None and (
        isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0
    ):
        raise BayestuneError(f"time_limit must be a positive number of seconds, but got {time_limit!r}")
    objectives = [o.name for o in optimizer.objectives]
    chosen = make_backend(
        backend,
        evaluator,
        objectives,
        workers=workers,
        dask_client=dask_client,
        batch=batch,
        mp_context=mp_context,
        feasible_key=optimizer.feasible_output,
        build_workers=build_workers,
        devices=devices,
    )
    if not unlimited:
        run_meta.record_budget(optimizer.journal, budget)
    loop = EvaluationLoop(
        optimizer,
        chosen,
        budget,
        batch=batch,
        resubmit=resubmit,
        callback=callback,
        stop_after_failures=stop_after_failures or None,
        time_limit=time_limit,
    )
    try:
        loop.run()
    except BaseException:
        chosen.close(cancel=True)
        raise
    chosen.close()
    if loop.stopped_reason is not None:
        raise AllFailedError(loop.stopped_reason)
    return optimizer.best


class AllFailedError(EvaluationError):
    """A run stopped early because every evaluation failed; the message quotes the most common error."""


def most_common_failure(trials: Any) -> str:
    """ "the most common error (n of m, kind k): <text>" over the failed trials, lost ones excluded."""
    failed = [t for t in trials if t.status is TrialStatus.FAILED and t.failure_kind != FailureKind.LOST]
    if not failed:
        return "no evaluation failed"
    counts = Counter((t.failure_kind, _signature(t.error or "")) for t in failed)
    (kind, signature), n = counts.most_common(1)[0]
    example = next(
        t.error for t in reversed(failed) if (t.failure_kind, _signature(t.error or "")) == (kind, signature)
    )
    return f"the most common error ({n} of {len(failed)} failures, kind {kind}):\n{example}"


_VARYING = re.compile(r"'[^']*'|\"[^\"]*\"|[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _signature(error: str) -> str:
    """What errors of different configurations share: the stderr part, else the text without quoted parts and numbers."""
    marker = "stderr (end):"
    if marker in error:
        return error.split(marker, 1)[1].strip()
    return _VARYING.sub("_", error)


def _positive_int(value: Any, name: str) -> int:
    try:
        number = operator.index(value)
    except TypeError:
        number = 0
    if isinstance(value, bool) or number < 1:
        raise BayestuneError(f"{name} must be a positive integer, but got {value!r}")
    return number


class EvaluationLoop:
    """State of one :func:`run`: configurations asked but not yet submitted, and those in flight."""

    def __init__(
        self,
        optimizer: Any,
        backend: Backend,
        budget: int,
        *,
        batch: int | None,
        resubmit: int,
        callback: Callable[[Trial], None] | None,
        stop_after_failures: int | None = None,
        time_limit: float | None = None,
    ) -> None:
        self.optimizer = optimizer
        self.deadline = None if time_limit is None else time.monotonic() + time_limit
        self.timed_out = False
        self.backend = backend
        self.budget = budget
        self.batch = batch
        self.resubmit = resubmit
        self.callback = callback
        self.queue: deque[Task] = deque()  # asked, waiting for a free slot (resubmits go first)
        self.in_flight = 0
        self.exhausted = False
        self._ids = itertools.count(1)
        self.stop_after_failures = stop_after_failures
        self.stopped_reason: str | None = None
        self.failures_in_a_row = 0
        self.suggestion_seconds: dict[int, float] = {}  # task id -> its share of the time in ask()
        self.succeeded = any(t.status is not TrialStatus.FAILED for t in optimizer.trials if t.status.is_finished)

    def unclaimed(self) -> int:
        """Evaluations the budget still allows beyond the finished, queued and running ones."""
        return self.budget - self.optimizer.n_evaluated - len(self.queue) - self.in_flight

    def run(self) -> None:
        while True:
            while True:  # a pipeline's slots open one at a time as it accepts configurations
                before = len(self.queue) + self.in_flight
                self._ask()
                while self.queue and self.in_flight < self.backend.slots:
                    self.backend.submit(self.queue.popleft())
                    self.in_flight += 1
                if len(self.queue) + self.in_flight == before:
                    break
            if self.in_flight == 0:
                if self.exhausted and self.optimizer.n_evaluated < self.budget:
                    logger.info("every feasible configuration has been evaluated")
                return
            try:
                finished = self.backend.wait()
            except InterruptedWithResult as stop:  # a configuration's completed runs are kept
                if stop.task is not None:
                    self.in_flight -= 1
                    self._finish(stop.task, stop.result)
                raise
            for task, outcome in finished:
                self.in_flight -= 1
                self._finish(task, outcome)

    def _ask(self) -> None:
        if self.exhausted:
            return
        if self.deadline is not None and time.monotonic() >= self.deadline:
            if not self.timed_out:
                logger.info("the time limit is reached: no new evaluation starts")
            self.timed_out = True
            return
        if self.batch is not None:  # lock-step: a new batch once the previous one is done
            want = min(self.batch, self.unclaimed()) if not self.queue and self.in_flight == 0 else 0
        else:
            want = min(self.backend.slots - self.in_flight - len(self.queue), self.unclaimed())
        if want <= 0:
            return
        started = time.perf_counter()
        configs = self.optimizer.ask(want)
        share = (time.perf_counter() - started) / max(len(configs), 1)
        if len(configs) < want:
            self.exhausted = True
        for config in configs:
            task = Task(config, next(self._ids))
            self.suggestion_seconds[task.task_id] = share
            self.queue.append(task)

    def _finish(self, task: Task, outcome: Any) -> None:
        if isinstance(outcome, WorkerLost):
            if task.attempt <= self.resubmit:
                logger.warning(
                    "the worker evaluating %s died (%s); resubmitting (attempt %d)",
                    task.config,
                    outcome.reason,
                    task.attempt + 1,
                )
                task.attempt += 1
                self.queue.appendleft(task)
                return
            outcome = Result.failure(
                f"the worker died on each of {task.attempt} attempt(s) to evaluate this configuration; "
                f"last: {outcome.reason}",
                FailureKind.WORKER_LOST,
            )
        share = self.suggestion_seconds.pop(task.task_id, None)
        if isinstance(outcome, Result) and share is not None:
            outcome = replace(outcome, timings={**outcome.timings, OPTIMIZER_PHASE: share})
        trial = self.optimizer.tell(task.config, outcome)
        if self.callback is not None:
            self.callback(trial)
        self._watch_failures(trial)

    def _watch_failures(self, trial: Trial) -> None:
        if trial.status is not TrialStatus.FAILED:
            self.succeeded, self.failures_in_a_row = True, 0
            return
        if trial.failure_kind == FailureKind.LOST:
            return
        self.failures_in_a_row += 1
        limit = self.stop_after_failures
        if limit and not self.succeeded and self.failures_in_a_row >= limit and not self.exhausted:
            reason = (
                f"stopped early: the first {self.failures_in_a_row} evaluations of this run all failed "
                f"(stop_after_failures={limit}); {most_common_failure(self.optimizer.trials)}"
            )
            self.stopped_reason = reason
            self.exhausted = True
            self.queue.clear()
