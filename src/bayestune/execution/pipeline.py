"""Build in parallel, measure alone: the backend of black boxes with a build and a run step.

Builds run in a pool of ``build_workers`` processes; each device in ``devices`` has one worker
process that measures one built configuration at a time (``BAYESTUNE_DEVICE`` names it in that
process; a command's ``{device}`` placeholder and a Python run's ``config["device"]`` too). Who
builds and who measures next is :class:`~bayestune.execution.pipeline_schedule.PipelineSchedule`'s
rule, shared with the benchmarks' simulated clock; on a machine whose only device is its own CPU
(``devices=["cpu"]``) builds pause while a measurement runs, and the optimizer's own work waits
too: :meth:`PipelineBackend.wait` returns only while nothing is being measured.

The loop sees an ordinary backend: it asks for a new configuration whenever the schedule
:meth:`~PipelineSchedule.accepts` one, and every configuration comes back once, measured or
failed. A failed build comes back at once as a ``compile`` failure and never reaches a device.
A build or measurement whose worker dies is reported lost (the loop resubmits it once); an
interrupted run leaves its configurations pending in the journal, and a resumed run builds
them again. Artefacts live in a temporary directory per configuration, removed once measured.

With Dask (:class:`DaskPlaces`) builds go to workers offering the ``build`` resource and
measurements to workers offering ``device`` (e.g. ``dask worker --resources device=1`` on each
GPU machine); an artefact built on another machine travels with the task (its bytes), so no
shared filesystem is needed.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from bayestune.evaluators.staged import merge_timings
from bayestune.exceptions import EvaluationError
from bayestune.execution.backends import Backend, Outcome, Task, WorkerLost
from bayestune.execution.factories import EvaluatorFactory, WorkerSetupError, worker_evaluator
from bayestune.execution.pipeline_schedule import PipelineSchedule, check_build_workers, check_devices
from bayestune.execution.pool import _worker_init, default_context
from bayestune.trial import Result, TrialStatus

logger = logging.getLogger(__name__)

#: Largest artefact (bytes) sent between machines with its task.
MAX_SHIPPED_BYTES = 256 * 1024 * 1024
#: A built configuration: the build's Result (its time), the artefact, its bytes when shipped, its directory.
Built = tuple[Result, str, bytes | None, str | None]
#: The environment variable that names a device worker's device.
DEVICE_VARIABLE = "BAYESTUNE_DEVICE"


# ---- the worker side --------------------------------------------------------------------------
def _staged(factory: EvaluatorFactory) -> Any:
    from bayestune.evaluators.staged import StagedEvaluator

    evaluator = worker_evaluator(factory)
    if not isinstance(evaluator, StagedEvaluator):
        raise WorkerSetupError(f"the pipeline needs a black box with a build step, but got {evaluator!r}")
    return evaluator


def build_in_worker(
    factory: EvaluatorFactory, config: dict[str, Any], directory: str | None, ship: bool = False
) -> tuple[Result, str | None, bytes | None]:
    """Build ``config`` (into ``directory``, or a new temporary one); with ``ship`` the artefact's
    bytes come back too, for a device on another machine."""
    directory = directory or tempfile.mkdtemp(prefix="bayestune-build-")
    built, artefact = _staged(factory).build_into(config, directory)
    payload = None
    if ship and artefact is not None and os.path.isfile(artefact) and os.path.getsize(artefact) <= MAX_SHIPPED_BYTES:
        with open(artefact, "rb") as f:
            payload = f.read()
        shutil.rmtree(directory, ignore_errors=True)  # it travels as bytes; nothing stays on the build machine
    elif ship and artefact is None:
        shutil.rmtree(directory, ignore_errors=True)
    return built, artefact, payload


def measure_in_worker(
    factory: EvaluatorFactory,
    config: dict[str, Any],
    artefact: str,
    device: str,
    incumbent: float | None = None,
    payload: bytes | None = None,
) -> Result:
    """Measure a built artefact on ``device``; an artefact built elsewhere arrives as ``payload``."""
    staged = _staged(factory)
    if incumbent is not None and hasattr(staged.run, "incumbent"):
        own: float | None = staged.run.incumbent
        if own is None or (incumbent < own if getattr(staged.run, "minimize", True) else incumbent > own):
            staged.run.incumbent = incumbent  # early stop compares with the best of every device
    local_dir = None
    if payload is not None and not os.path.exists(artefact):
        local_dir = tempfile.mkdtemp(prefix="bayestune-artefact-")
        artefact = os.path.join(local_dir, os.path.basename(artefact))
        with open(artefact, "wb") as f:
            f.write(payload)
        os.chmod(artefact, 0o755)
    try:
        return staged.measure(config, artefact, device)
    finally:
        if local_dir is not None:
            shutil.rmtree(local_dir, ignore_errors=True)


def _device_init(parent_pid: int, device: str) -> None:
    os.environ[DEVICE_VARIABLE] = device
    _worker_init(parent_pid)


# ---- where builds and measurements run --------------------------------------------------------
class LocalPlaces:
    """A process pool for builds and one process per device, on this machine."""

    ships = False

    def __init__(self, build_workers: int, devices: tuple[str, ...], mp_context: Any = None) -> None:
        self._context = mp_context or default_context()
        self.build_workers = build_workers
        self.devices = devices
        self._builds: ProcessPoolExecutor | None = None
        self._runs: dict[str, ProcessPoolExecutor] = {}

    def submit_build(self, *args: Any) -> Future:
        if self._builds is None:
            self._builds = ProcessPoolExecutor(
                self.build_workers, mp_context=self._context, initializer=_worker_init, initargs=(os.getpid(),)
            )
        return self._builds.submit(build_in_worker, *args)

    def submit_run(self, device: str, *args: Any) -> Future:
        if device not in self._runs:
            self._runs[device] = ProcessPoolExecutor(
                1, mp_context=self._context, initializer=_device_init, initargs=(os.getpid(), device)
            )
        return self._runs[device].submit(measure_in_worker, *args)

    def wait_any(self, futures: list[Any]) -> set[Any]:
        return wait_futures(futures, return_when=FIRST_COMPLETED)[0]

    def lost(self, exc: BaseException, device: str | None) -> str | None:
        """Why the worker of a failed future is gone (its pool is then replaced), or None if it is not."""
        if not isinstance(exc, BrokenProcessPool):
            return None
        pool = self._runs.pop(device, None) if device is not None else self._builds
        if device is None:
            self._builds = None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        return f"the {'device ' + device if device else 'build'} worker process died ({exc})"

    def close(self, cancel: bool) -> None:
        from bayestune.execution.pool import _stop_workers

        pools = [p for p in [self._builds, *self._runs.values()] if p is not None]
        self._builds, self._runs = None, {}
        for pool in pools:
            if cancel:
                _stop_workers(pool)
            pool.shutdown(wait=not cancel, cancel_futures=True)


class PipelineBackend(Backend):
    """Configurations built on ``build_workers`` and measured on ``devices`` (see the module docstring)."""

    def __init__(
        self,
        factory: EvaluatorFactory,
        *,
        build_workers: int | None = None,
        devices: Sequence[str] = ("cpu",),
        places: Any = None,
        mp_context: Any = None,
        max_in_flight: int | None = None,
    ) -> None:
        if not isinstance(factory, EvaluatorFactory):
            raise EvaluationError(f"PipelineBackend needs an EvaluatorFactory, but got {factory!r}")
        build_workers = check_build_workers(build_workers if build_workers is not None else (os.cpu_count() or 1))
        devices = check_devices(devices)
        self.factory = factory
        self.schedule = PipelineSchedule(build_workers, devices, max_in_flight=max_in_flight)
        self.places = places or LocalPlaces(build_workers, devices, mp_context)
        self._tasks: dict[int, Task] = {}
        self._running: dict[Any, tuple[str, int, str | None]] = {}  # future -> (stage, task id, device)
        self._built: dict[int, Built] = {}
        self._started: dict[int, float] = {}
        self.incumbent: float | None = None
        self.device_seconds = 0.0
        self.started_at = time.monotonic()

    # ---- the Backend interface ------------------------------------------------------------------
    @property
    def slots(self) -> int:  # type: ignore[override]  # how many the loop may have in flight now
        return self.schedule.in_flight + (1 if self.schedule.accepts() else 0)

    def submit(self, task: Task) -> None:
        self._tasks[task.task_id] = task
        self.schedule.submit(task.task_id)

    def wait(self) -> list[tuple[Task, Outcome]]:
        if not self._tasks:
            raise RuntimeError("PipelineBackend.wait() called with nothing submitted")
        finished: list[tuple[Task, Outcome]] = []
        while True:
            self._dispatch()
            if finished and not (self.schedule.exclusive_host and self.schedule.measuring):
                return finished  # on the CPU device the optimizer never works beside a measurement
            if not self._running:
                raise EvaluationError("the pipeline has configurations but nothing building or measuring")
            for future in self.places.wait_any(list(self._running)):
                finished.extend(self._complete(future))

    def close(self, *, cancel: bool = False) -> None:
        self.places.close(cancel)
        for _, _, _, directory in self._built.values():
            if directory:
                shutil.rmtree(directory, ignore_errors=True)
        self._built.clear()
        self._running.clear()

    def status(self) -> dict[str, Any]:
        """What a progress line shows: builds in flight, configurations waiting, device use."""
        elapsed = max(time.monotonic() - self.started_at, 1e-9)
        use = self.device_seconds / (elapsed * len(self.schedule.devices))
        return {**self.schedule.status(), "device_use": min(use, 1.0)}

    # ---- moving configurations along ----------------------------------------------------------
    def _dispatch(self) -> None:
        ship = self.places.ships
        for tid in self.schedule.start_builds():
            directory = None if ship else tempfile.mkdtemp(prefix="bayestune-build-")
            future = self.places.submit_build(self.factory, dict(self._tasks[tid].config), directory, ship)
            self._running[future] = ("build", tid, None)
            self._built[tid] = (Result(), "", None, directory)
            self._started[tid] = time.monotonic()
        for device, tid in self.schedule.start_measurements():
            built, artefact, payload, _ = self._built[tid]
            future = self.places.submit_run(
                device, self.factory, dict(self._tasks[tid].config), artefact, device, self.incumbent, payload
            )
            self._running[future] = ("run", tid, device)
            self._started[tid] = time.monotonic()

    def _complete(self, future: Any) -> list[tuple[Task, Outcome]]:
        stage, tid, device = self._running.pop(future)
        task = self._tasks[tid]
        seconds = time.monotonic() - self._started.pop(tid, time.monotonic())
        exc = future.exception()
        if exc is not None:
            if isinstance(exc, WorkerSetupError):
                raise exc
            reason = self.places.lost(exc, device)
            if reason is None:
                raise WorkerSetupError(f"the {stage} worker could not run: {type(exc).__name__}: {exc}") from exc
            return self._leave(task, WorkerLost(reason))
        if stage == "build":
            built, artefact, payload = future.result()
            directory = self._built[tid][3]
            if artefact is None:
                self.schedule.build_finished(tid, False)
                return self._leave(task, built)
            self._built[tid] = (built, artefact, payload, directory)
            self.schedule.build_finished(tid, True)
            return []
        self.device_seconds += seconds
        self.schedule.measurement_finished(device)  # type: ignore[arg-type]
        measured: Result = future.result()
        result = merge_timings(self._built[tid][0], measured)
        self._note_incumbent(result)
        return self._leave(task, result)

    def _leave(self, task: Task, outcome: Outcome) -> list[tuple[Task, Outcome]]:
        """``task`` leaves the pipeline (measured, failed or lost): its artefact is removed."""
        self.schedule.forget(task.task_id)
        self._tasks.pop(task.task_id, None)
        _, _, _, directory = self._built.pop(task.task_id, (None, None, None, None))
        if directory:
            shutil.rmtree(directory, ignore_errors=True)
        return [(task, outcome)]

    def _note_incumbent(self, result: Result) -> None:
        """The best measured (not censored) value of the first objective, for every device's early stop."""
        objectives = getattr(self.factory, "objectives", None)
        if result.status is not TrialStatus.OK or result.censored or not objectives:
            return
        value = result.values.get(objectives[0])
        if value is None:
            return
        minimize = getattr(self.factory, "minimize", True)
        if self.incumbent is None or (value < self.incumbent if minimize else value > self.incumbent):
            self.incumbent = value
