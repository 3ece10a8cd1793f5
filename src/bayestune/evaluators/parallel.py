"""Running evaluations somewhere else: the backend interface, portable evaluator factories and
the in-process (serial) backend.

A *backend* runs evaluations of submitted :class:`Task` objects and reports each outcome as it
arrives: a :class:`~bayestune.trial.Result`, or :class:`WorkerLost` when the process evaluating
it died (the runner then resubmits it once). :mod:`bayestune.runner` drives a backend from an
:class:`~bayestune.optimizer.Optimizer`; the backends are

- :class:`SerialBackend` (here): evaluations in the calling thread, one at a time, or as one
  ``evaluate_batch`` call for batch-capable evaluators (external tools);
- :class:`~bayestune.evaluators.pool.ProcessPoolBackend`: local worker processes;
- :class:`~bayestune.evaluators.dask_backend.DaskBackend`: a Dask distributed cluster.

Worker processes cannot share the optimizer's evaluator object, so they receive an
:class:`EvaluatorFactory`: a small picklable recipe that builds the evaluator inside the worker
(once per worker process and thread, then cached). :func:`portable` turns what users hold
(a command evaluator, a ``"module:function"`` target, a picklable function) into one.
"""

from __future__ import annotations

import logging
import pickle
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator
from bayestune.exceptions import EvaluationError
from bayestune.trial import Result

logger = logging.getLogger(__name__)

#: ``failure_kind`` of an evaluation whose worker died on every attempt.
WORKER_LOST = "worker_lost"


# ---- what travels between the runner and a backend --------------------------------------------
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


class WorkerSetupError(EvaluationError):
    """A worker could not build or run the evaluator at all (a setup mistake, not a bad configuration)."""


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

        Raises :class:`WorkerSetupError` when the evaluator could not run at all.
        """

    def close(self, *, cancel: bool = False) -> None:
        """Release workers. ``cancel=True`` (after an interrupt) stops running evaluations too."""

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.close(cancel=exc_type is not None)


# ---- evaluator factories ---------------------------------------------------------------------
class EvaluatorFactory(ABC):
    """A picklable recipe for an evaluator, built inside each worker.

    ``token`` identifies the recipe: a worker builds the evaluator of one token once and
    reuses it for every later task (an external tool keeps running, a module is imported once).
    """

    def __init__(self) -> None:
        self.token = uuid.uuid4().hex

    @abstractmethod
    def build(self) -> Evaluator:
        """The evaluator, freshly built (EvaluationError on setup mistakes)."""

    def __call__(self) -> Evaluator:
        return self.build()


class CallableFactory(EvaluatorFactory):
    """An in-process black box for workers: a ``"module:function"`` / ``"file.py:function"``
    target loaded in the worker, or a function pickled by reference (a module-level function
    of an importable module)."""

    def __init__(self, target: str | Callable[..., Any], objectives: Sequence[str], *,
                 base_dir: str | Path | None = None) -> None:
        super().__init__()
        if not isinstance(target, str) and not callable(target):
            raise EvaluationError(f"expected a 'module:function' target or a function, but got {target!r}")
        self.target = target
        self.objectives = list(objectives)
        self.base_dir = str(base_dir) if base_dir is not None else None

    def build(self) -> Evaluator:
        from bayestune.evaluators.python_callable import CallableEvaluator, load_callable

        fn = load_callable(self.target, self.base_dir) if isinstance(self.target, str) else self.target
        return CallableEvaluator(fn, self.objectives)

    def __repr__(self) -> str:
        return f"CallableFactory({self.target!r}, objectives={self.objectives})"


class CommandFactory(EvaluatorFactory):
    """A :class:`~bayestune.evaluators.command.CommandEvaluator` rebuilt in the worker from its settings."""

    def __init__(self, template: str, objectives: Sequence[str], **options: Any) -> None:
        super().__init__()
        self.template = template
        self.objectives = list(objectives)
        self.options = dict(options)

    @classmethod
    def of(cls, evaluator: Any) -> "CommandFactory":
        return cls(evaluator.template, evaluator.objectives, timeout=evaluator.timeout, workdir=evaluator.workdir,
                   env=evaluator.env, memory_limit_mb=evaluator.memory_limit_mb)

    def build(self) -> Evaluator:
        from bayestune.evaluators.command import CommandEvaluator

        return CommandEvaluator(self.template, self.objectives, **self.options)

    def __repr__(self) -> str:
        return f"CommandFactory({self.template!r}, objectives={self.objectives})"


class InstanceFactory(EvaluatorFactory):
    """A picklable evaluator instance, copied into each worker as it is."""

    def __init__(self, evaluator: Evaluator) -> None:
        super().__init__()
        self.evaluator = evaluator

    def build(self) -> Evaluator:
        return self.evaluator

    def __repr__(self) -> str:
        return f"InstanceFactory({self.evaluator!r})"


class ScenarioFactory(EvaluatorFactory):
    """The evaluator of a scenario's ``blackbox`` section, built in the worker exactly as
    :func:`bayestune.evaluators.make_evaluator` builds it (paths resolved against the scenario's
    directory, which remote workers must see at the same path)."""

    def __init__(self, scenario: Any) -> None:
        super().__init__()
        from bayestune.evaluators import scenario_dir

        if scenario.blackbox is None:
            raise EvaluationError(f"scenario {scenario.name!r} has no 'blackbox' section to evaluate in workers")
        self.name = scenario.name
        self.spec = scenario.blackbox
        self.base_dir = str(scenario_dir(scenario))
        self.objectives = list(scenario.objective_names)
        self.parameter_names = list(scenario.space.names)
        self.feasible_output = scenario.feasible_output

    def build(self) -> Evaluator:
        from bayestune.evaluators import build_evaluator

        return build_evaluator(self.spec, base_dir=Path(self.base_dir), objectives=self.objectives,
                               parameter_names=self.parameter_names, feasible_output=self.feasible_output,
                               scenario_name=self.name)

    def __repr__(self) -> str:
        return f"ScenarioFactory({self.name!r}, {self.spec.kind}={self.spec.target!r})"


def portable(evaluator: Any, objectives: Sequence[str] | None = None) -> EvaluatorFactory:
    """An :class:`EvaluatorFactory` for ``evaluator`` that worker processes can rebuild.

    Accepts a factory (returned as is), a :class:`~bayestune.evaluators.command.CommandEvaluator`
    (rebuilt from its settings), a ``"module:function"`` target string or a function (needs
    ``objectives``), or any evaluator that pickles. Functions loaded from a ``file.py:function``
    target live in a private module that workers cannot import: pass the target string, or
    build the factory with :class:`ScenarioFactory`. EvaluationError says what to do otherwise.
    """
    from bayestune.evaluators.command import CommandEvaluator
    from bayestune.evaluators.python_callable import CallableEvaluator

    if isinstance(evaluator, EvaluatorFactory):
        return evaluator
    if isinstance(evaluator, CommandEvaluator):
        return CommandFactory.of(evaluator)
    if isinstance(evaluator, CallableEvaluator):
        objectives, evaluator = evaluator.objectives, evaluator.fn
    if isinstance(evaluator, str) or (callable(evaluator) and not isinstance(evaluator, Evaluator)):
        if objectives is None:
            raise EvaluationError("a function or target black box needs the objective names to run in workers")
        if not isinstance(evaluator, str):
            _check_picklable(evaluator, "the black box function")
        return CallableFactory(evaluator, objectives)
    if isinstance(evaluator, Evaluator):
        _check_picklable(evaluator, f"evaluator {evaluator!r}")
        return InstanceFactory(evaluator)
    raise EvaluationError(f"expected an evaluator, an evaluator factory or a function, but got {evaluator!r}")


def _check_picklable(obj: Any, what: str) -> None:
    module = getattr(obj, "__module__", "") or ""
    problem = None
    if module.startswith("_bayestune_blackbox_"):
        problem = "it was loaded from a file under a private module name that workers cannot import"
    else:
        try:
            pickle.dumps(obj)
        except Exception as exc:  # noqa: BLE001 - any pickling failure means the same thing here
            problem = f"it cannot be pickled ({type(exc).__name__}: {exc})"
    if problem:
        raise EvaluationError(
            f"{what} cannot be sent to worker processes: {problem}; pass a 'module:function' or "
            "'path/to/file.py:function' target string (bayestune.evaluators.parallel.CallableFactory), "
            "a module-level function of an importable module, or build a ScenarioFactory from the scenario")


# ---- the worker side -------------------------------------------------------------------------
_local = threading.local()


def worker_evaluator(factory: EvaluatorFactory) -> Evaluator:
    """This worker thread's evaluator of ``factory`` (built on first use, then reused)."""
    cache: dict[str, Evaluator] | None = getattr(_local, "evaluators", None)
    if cache is None:
        cache = _local.evaluators = {}
    evaluator = cache.get(factory.token)
    if evaluator is None:
        try:
            evaluator = factory.build()
        except Exception as exc:  # noqa: BLE001 - reported to the runner as a setup error
            raise WorkerSetupError(f"the worker could not build the evaluator ({factory!r}): "
                                   f"{type(exc).__name__}: {exc}") from None
        cache[factory.token] = evaluator
        _close_at_exit(evaluator)
    return evaluator


def _close_at_exit(evaluator: Evaluator) -> None:
    """Close the evaluator when the worker process ends (multiprocessing skips ``atexit``)."""
    try:
        from multiprocessing import util

        util.Finalize(evaluator, evaluator.close, exitpriority=10)
    except Exception:  # noqa: BLE001 - best effort: a tool left behind sees EOF on its stdin
        pass


def evaluate_in_worker(factory: EvaluatorFactory, config: Mapping[str, Any]) -> Result:
    """Task function run by worker processes: evaluate ``config``; never raises for a bad evaluation."""
    evaluator = worker_evaluator(factory)
    try:
        result = evaluator.evaluate(dict(config))
    except Exception as exc:  # noqa: BLE001 - evaluators should not raise, but a bad one must not kill the run
        return Result.failure(f"evaluator {evaluator!r} raised {type(exc).__name__}: {exc}", "exception")
    if not isinstance(result, Result):
        return Result.failure(f"evaluator {evaluator!r} returned {result!r} instead of a Result", "exception")
    return result


# ---- the serial backend ----------------------------------------------------------------------
class SerialBackend(Backend):
    """Evaluations in the calling thread. With ``slots > 1`` (lock-step batches) a batch-capable
    evaluator (one with ``evaluate_batch``, e.g. an external tool) gets all submitted tasks in
    one call; other evaluators take them one by one, each reported as soon as it is done.

    ``owns_evaluator``: close the evaluator with the backend (it was built for this run).
    """

    def __init__(self, evaluator: Evaluator, *, slots: int = 1, owns_evaluator: bool = False) -> None:
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
        try:
            result = self.evaluator.evaluate(dict(task.config))
        except Exception as exc:  # noqa: BLE001 - see evaluate_in_worker
            result = Result.failure(f"evaluator {self.evaluator!r} raised {type(exc).__name__}: {exc}", "exception")
        return [(task, result)]

    def close(self, *, cancel: bool = False) -> None:
        self._queue.clear()
        if self.owns_evaluator:
            self.evaluator.close()
