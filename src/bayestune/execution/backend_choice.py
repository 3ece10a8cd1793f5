"""Which backend runs a run's evaluations: :func:`make_backend` picks one by name.

The choice stands above the backends it names (serial, local processes, Dask), so the backend
interface they all build on never has to import its own subclasses. The Dask backend imports
``distributed`` only when it starts, so naming it here costs nothing without the extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bayestune.evaluators.base import Evaluator
from bayestune.exceptions import BayestuneError, EvaluationError
from bayestune.execution.backends import Backend, SerialBackend
from bayestune.execution.dask_backend import DaskBackend
from bayestune.execution.factories import EvaluatorFactory, portable
from bayestune.execution.pipeline import PipelineBackend
from bayestune.execution.pipeline_dask import DaskPlaces
from bayestune.execution.pool import ProcessPoolBackend

#: Names :func:`make_backend` accepts.
BACKENDS = ("serial", "pool", "dask", "pipeline")


def make_backend(
    backend: str | Backend,
    evaluator: Any,
    objectives: Sequence[str],
    *,
    workers: int | None = None,
    dask_client: Any = None,
    batch: int | None = None,
    mp_context: Any = None,
    feasible_key: str | None = None,
    build_workers: int | None = None,
    devices: Sequence[str] | None = None,
) -> Backend:
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
            raise BayestuneError(
                f"the serial backend runs one evaluation at a time, but got workers={workers}; "
                "use backend='pool' or 'dask'"
            )
        return SerialBackend(*_local_evaluator(evaluator, objectives, feasible_key), slots=batch or 1)
    factory = portable(evaluator, objectives)
    if backend == "pipeline":
        if dask_client is None:
            return PipelineBackend(
                factory, build_workers=build_workers, devices=devices or ("cpu",), mp_context=mp_context
            )
        places = DaskPlaces(dask_client)
        offered_builds, offered_devices = places.offered()
        devices = list(devices) if devices else [f"dask-device-{i}" for i in range(offered_devices)]
        build_workers = build_workers or max(offered_builds, 1)
        places.check(build_workers, len(devices))
        return PipelineBackend(factory, build_workers=build_workers, devices=devices, places=places)
    if backend == "pool":
        return ProcessPoolBackend(factory, workers or 1, mp_context=mp_context)
    if dask_client is None:
        raise BayestuneError("the dask backend needs dask_client: a distributed.Client or a scheduler address")
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
