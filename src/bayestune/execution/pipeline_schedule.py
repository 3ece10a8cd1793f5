"""Who builds and who measures next: the rules of the two-stage pipeline, with no clock and no
processes, so the real backend (:mod:`bayestune.execution.pipeline`) and the simulated clock of
the benchmarks follow exactly the same rules.

A configuration in flight passes through four places: waiting for a builder, building, built
(waiting for a device), measuring on a device. The rules:

- at most ``build_slots`` builds at once, in submission order;
- each device measures one configuration at a time, built ones in the order their builds
  finished (a build finishing out of order is measured first);
- with ``exclusive_host`` (the only device is the CPU the builds run on) a measurement never
  shares the cores it is timed on: once a configuration is built, no new build starts; the
  measurement waits for the builds still running, and builds resume when nothing is left to
  measure. A compiler on the other cores would otherwise slow the timed run by an amount that
  depends on what else happens to be building — noise the model would take for signal.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bayestune.exceptions import BayestuneError

#: The device name of "measure on this machine's CPU".
CPU_DEVICE = "cpu"


def check_devices(devices: Sequence[str]) -> tuple[str, ...]:
    """``devices`` as a tuple of names; a one-line error for an empty list, a blank name or a duplicate."""
    if isinstance(devices, str) or not isinstance(devices, Sequence) or not devices:
        raise BayestuneError(
            f"devices must be a non-empty list of device names, e.g. ['0', '1'] or ['cpu'], got {devices!r}"
        )
    names = tuple(str(d).strip() for d in devices)
    if any(not n for n in names):
        raise BayestuneError(f"devices: a device name is empty in {list(devices)!r}")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise BayestuneError(
            f"devices: {duplicates} listed more than once; each device measures one configuration at a time, "
            "so list it once"
        )
    return names


def check_build_workers(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BayestuneError(f"build_workers must be a positive integer, but got {value!r}")
    return value


@dataclass
class PipelineSchedule:
    """The state of a build/measure pipeline; task ids are whatever the caller uses."""

    build_slots: int
    devices: tuple[str, ...] = (CPU_DEVICE,)
    exclusive_host: bool | None = None  # None: the devices are exactly ("cpu",)
    max_in_flight: int | None = None  # None: builders + devices
    to_build: deque[Any] = field(default_factory=deque)
    building: set[Any] = field(default_factory=set)
    built: deque[Any] = field(default_factory=deque)
    measuring: dict[str, Any] = field(default_factory=dict)  # device -> task

    def __post_init__(self) -> None:
        self.build_slots = check_build_workers(self.build_slots)
        self.devices = check_devices(self.devices)
        if self.exclusive_host is None:
            self.exclusive_host = self.devices == (CPU_DEVICE,)

    # ---- what the caller reports ----------------------------------------------------------
    def submit(self, task: Any) -> None:
        self.to_build.append(task)

    def build_finished(self, task: Any, ok: bool) -> None:
        """A build ended; a failed one leaves the pipeline (it never reaches a device)."""
        self.building.discard(task)
        if ok:
            self.built.append(task)

    def measurement_finished(self, device: str) -> Any:
        return self.measuring.pop(device)

    def forget(self, task: Any) -> None:
        """Drop ``task`` wherever it is (a lost worker, a cancelled run)."""
        for queue in (self.to_build, self.built):
            if task in queue:
                queue.remove(task)
        self.building.discard(task)
        for device, running in list(self.measuring.items()):
            if running == task:
                del self.measuring[device]

    # ---- what to start now ----------------------------------------------------------------
    def start_measurements(self) -> list[tuple[str, Any]]:
        """(device, task) pairs to start now, each marked as measuring."""
        if self.exclusive_host and self.building:
            return []  # wait for the builds still running: the measurement gets the cores alone
        started = []
        for device in self.devices:
            if not self.built:
                break
            if device not in self.measuring:
                task = self.built.popleft()
                self.measuring[device] = task
                started.append((device, task))
        return started

    def start_builds(self) -> list[Any]:
        """Tasks to start building now, each marked as building."""
        if self.exclusive_host and (self.measuring or self.built):
            return []  # a measurement runs or waits for the cores
        started = []
        while self.to_build and len(self.building) < self.build_slots:
            task = self.to_build.popleft()
            self.building.add(task)
            started.append(task)
        return started

    # ---- what a progress line shows -------------------------------------------------------
    @property
    def in_flight(self) -> int:
        return len(self.to_build) + len(self.building) + len(self.built) + len(self.measuring)

    @property
    def capacity(self) -> int:
        """The most configurations in flight: every builder busy and one measuring per device."""
        return self.max_in_flight if self.max_in_flight is not None else self.build_slots + len(self.devices)

    def accepts(self) -> bool:
        """Whether a new configuration is worth asking for now: a builder would take it at once
        and no device has more than one built configuration waiting.

        Asking earlier only conditions the model on more configurations in flight (each one a
        guess the model must hedge against) without using the hardware any better: where builds
        are fast and measurements slow, a device needs one configuration ready, not eight.
        """
        return (
            self.in_flight < self.capacity
            and len(self.to_build) + len(self.building) < self.build_slots
            and len(self.built) < len(self.devices)
        )

    def status(self) -> dict[str, int]:
        return {
            "queued": len(self.to_build),
            "building": len(self.building),
            "built": len(self.built),
            "measuring": len(self.measuring),
            "devices": len(self.devices),
            "build_slots": self.build_slots,
        }
