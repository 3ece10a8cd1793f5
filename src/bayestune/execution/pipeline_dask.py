"""The pipeline's builds and measurements on a Dask cluster, placed by worker resources.

Start each GPU machine's worker with one ``device`` per GPU it measures on
(``dask worker tcp://scheduler:8786 --resources "device=1"``, one worker process per GPU) and
build machines with ``build=N`` (``--resources "build=8" --nthreads 8``). A build task asks for
one ``build``, a measurement for one ``device``: the scheduler then never runs two
measurements on one device, and builds fill every build slot. The artefact's bytes travel with
the measurement task, so build and GPU machines need no shared filesystem.

The pipeline's device names are the cluster's device slots (``dask-device-0`` ...); which worker
takes a measurement is the scheduler's choice among those with a free ``device``.
"""

from __future__ import annotations

from typing import Any

from bayestune.exceptions import EvaluationError
from bayestune.execution.dask_backend import _distributed, connect

#: The worker resources the pipeline asks for.
BUILD_RESOURCE = "build"
DEVICE_RESOURCE = "device"


def cluster_resources(client: Any) -> dict[str, float]:
    """Total of each resource the cluster's workers offer."""
    totals: dict[str, float] = {}
    for worker in client.scheduler_info().get("workers", {}).values():
        for name, amount in (worker.get("resources") or {}).items():
            totals[name] = totals.get(name, 0.0) + float(amount)
    return totals


class DaskPlaces:
    """Builds and measurements as Dask tasks with resource restrictions (see the module docstring)."""

    ships = True

    def __init__(self, client: Any) -> None:
        self._own_client = isinstance(client, str)
        self.client = connect(client)
        self._distributed = _distributed()

    def offered(self) -> tuple[int, int]:
        """(build slots, devices) the cluster's workers offer."""
        totals = cluster_resources(self.client)
        return int(totals.get(BUILD_RESOURCE, 0)), int(totals.get(DEVICE_RESOURCE, 0))

    def check(self, build_workers: int, devices: int) -> None:
        """One-line errors before the first evaluation when the cluster cannot give what is asked."""
        builds, offered = self.offered()
        if offered < 1:
            raise EvaluationError(
                "the Dask cluster offers no 'device' resource: start each measuring worker with "
                '--resources "device=1" (one per device it measures on)'
            )
        if devices > offered:
            raise EvaluationError(
                f"{devices} device(s) asked for, but the Dask workers offer {offered} 'device' resource(s)"
            )
        if builds < 1:
            raise EvaluationError(
                "the Dask cluster offers no 'build' resource: start build workers with --resources \"build=N\""
            )

    def submit_build(self, *args: Any) -> Any:
        from bayestune.execution.pipeline import build_in_worker

        return self.client.submit(build_in_worker, *args, resources={BUILD_RESOURCE: 1}, pure=False)

    def submit_run(self, device: str, *args: Any) -> Any:
        from bayestune.execution.pipeline import measure_in_worker

        return self.client.submit(measure_in_worker, *args, resources={DEVICE_RESOURCE: 1}, pure=False)

    def wait_any(self, futures: list[Any]) -> set[Any]:
        done = self._distributed.wait(futures, return_when="FIRST_COMPLETED").done
        return set(done)

    def lost(self, exc: BaseException, device: str | None) -> str | None:
        if isinstance(exc, self._distributed.KilledWorker) or type(exc).__name__ in (
            "CancelledError",
            "FutureCancelledError",
        ):
            return f"the Dask worker running it was lost ({type(exc).__name__}: {exc})"
        return None

    def close(self, cancel: bool) -> None:
        if self._own_client:
            try:
                self.client.close(timeout=10)
            except Exception:  # noqa: BLE001 - the scheduler may be gone already
                pass
