"""Evaluators that worker processes can rebuild: small picklable recipes, and the worker side
that builds and runs them.

Worker processes cannot share the optimizer's evaluator object, so they receive an
:class:`EvaluatorFactory`: a recipe that builds the evaluator inside the worker (once per
worker process and thread, then cached). :func:`portable` turns what users hold (a command
evaluator, a ``"module:function"`` target, a picklable function) into one.
"""

from __future__ import annotations

import logging
import pickle
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator, evaluate_safely
from bayestune.exceptions import EvaluationError
from bayestune.trial import Result

logger = logging.getLogger(__name__)


class WorkerSetupError(EvaluationError):
    """A worker could not build or run the evaluator at all (a setup mistake, not a bad configuration)."""


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

    def __init__(
        self, target: str | Callable[..., Any], objectives: Sequence[str], *, base_dir: str | Path | None = None
    ) -> None:
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
    def of(cls, evaluator: Any) -> CommandFactory:
        return cls(
            evaluator.template,
            evaluator.objectives,
            timeout=evaluator.timeout,
            workdir=evaluator.workdir,
            env=evaluator.env,
            memory_limit_mb=evaluator.memory_limit_mb,
        )

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
    :func:`bayestune.measurement.build.make_evaluator` builds it (paths resolved against the scenario's
    directory, which remote workers must see at the same path)."""

    def __init__(self, scenario: Any) -> None:
        super().__init__()
        if scenario.blackbox is None:
            raise EvaluationError(f"scenario {scenario.name!r} has no 'blackbox' section to evaluate in workers")
        self.name = scenario.name
        self.spec = scenario.blackbox
        self.base_dir = str(scenario.base_dir)
        self.objectives = list(scenario.objective_names)
        self.parameter_names = list(scenario.space.names)
        self.feasible_output = scenario.feasible_output
        self.measurement = scenario.measurement
        self.minimize = scenario.objectives[0].minimize

    def build(self) -> Evaluator:
        from bayestune.measurement.build import build_evaluator, measured

        evaluator = build_evaluator(
            self.spec,
            base_dir=Path(self.base_dir),
            objectives=self.objectives,
            parameter_names=self.parameter_names,
            feasible_output=self.feasible_output,
            scenario_name=self.name,
        )
        return measured(evaluator, self.measurement, minimize=self.minimize, base_dir=self.base_dir)

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
            "'path/to/file.py:function' target string (bayestune.execution.CallableFactory), "
            "a module-level function of an importable module, or build a ScenarioFactory from the scenario"
        )


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
        except Exception as exc:  # noqa: BLE001 - reported to the loop as a setup error
            raise WorkerSetupError(
                f"the worker could not build the evaluator ({factory!r}): {type(exc).__name__}: {exc}"
            ) from None
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
    return evaluate_safely(worker_evaluator(factory), config)
