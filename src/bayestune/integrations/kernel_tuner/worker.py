"""A worker process that runs Kernel Tuner configurations, so a hung compile or kernel can be killed.

Kernel Tuner's SequentialRunner compiles and benchmarks in the calling process, and a single
blocking call (``clBuildProgram``, a kernel launch that never returns) cannot be interrupted
from Python. The worker holds its own runner (same kernel source, arguments, device and answer
check) in a spawned process -- spawned, not forked, because an OpenCL/CUDA context does not
survive ``fork`` -- and the parent waits for each answer at most the per-configuration limit,
then kills and later restarts the worker.
"""

from __future__ import annotations

import logging
import multiprocessing
import pickle
from typing import Any

from bayestune.integrations.kernel_tuner.timeouts import ConfigTimeout

logger = logging.getLogger(__name__)

#: Seconds a new worker may take to start (interpreter, imports, device context, argument upload).
STARTUP_TIMEOUT = 300.0


class WorkerError(RuntimeError):
    """The worker raised (its text is the original ``Type: message``) or died."""


def _serve(conn: Any, kernel_source: Any, kernel_options: Any, device_options: dict[str, Any], iterations: int,
           tuning_options: dict[str, Any]) -> None:
    """Worker main loop: receive a parameter tuple, send back Kernel Tuner's result record."""
    from kernel_tuner import util
    from kernel_tuner.interface import Options
    from kernel_tuner.runners.sequential import SequentialRunner

    try:
        runner = SequentialRunner(kernel_source, kernel_options, Options(device_options), iterations, None)
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        conn.send(("raised", f"{type(exc).__name__}: {exc}"))
        return
    options = Options(tuning_options)
    options.update(budget=util.TuningBudget(None, None), cache={}, cachefile=None, metrics=None)
    conn.send(("ready", None))
    while True:
        element = conn.recv()
        if element is None:
            return
        options["cache"] = {}  # Kernel Tuner's runner answers a cached configuration without running it: re-measure
        try:
            conn.send(("ok", runner.run([element], options)[0]))
        except Exception as exc:  # noqa: BLE001 - one configuration's failure, reported
            conn.send(("raised", f"{type(exc).__name__}: {exc}"))


class IsolatedRunner:
    """Runs one configuration at a time in a worker process; see the module docstring."""

    def __init__(self, runner: Any, tuning_options: Any, device_options: dict[str, Any]) -> None:
        keep = ("tune_params", "answer", "atol", "verify", "objective", "objective_higher_is_better", "verbose")
        options = {k: tuning_options[k] for k in keep if k in tuning_options}
        options["verify"] = getattr(tuning_options, "verify", options.get("verify"))
        iterations = getattr(runner.dev, "iterations", 7)
        self._args = (runner.kernel_source, runner.kernel_options, dict(device_options), iterations, options)
        pickle.dumps(self._args)  # fails here (caller falls back in-process) on a lambda verify, say
        self._context = multiprocessing.get_context("spawn")
        self._process: Any = None
        self._conn: Any = None

    def ensure_started(self) -> None:
        """Start the worker if none runs (its start-up is not charged to any configuration)."""
        if self._process is None:
            self._start()

    def _start(self) -> None:
        parent, child = self._context.Pipe()
        self._process = self._context.Process(target=_serve, args=(child, *self._args), daemon=True)
        self._process.start()
        child.close()
        self._conn = parent
        if not parent.poll(STARTUP_TIMEOUT):
            self.close()
            raise WorkerError(f"the Kernel Tuner worker did not start within {STARTUP_TIMEOUT:g} s")
        tag, payload = self._receive()
        if tag != "ready":
            self.close()
            raise WorkerError(f"the Kernel Tuner worker could not set up the device: {payload}")

    def _receive(self) -> tuple[str, Any]:
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            code = self._process.exitcode if self._process is not None else None
            self.close()
            raise WorkerError(f"the worker process died while running the configuration (exit code {code})") from None

    def run(self, element: tuple, timeout: float | None) -> dict[str, Any]:
        """Kernel Tuner's result record for ``element``; ConfigTimeout / WorkerError otherwise."""
        self.ensure_started()
        self._conn.send(element)
        if not self._conn.poll(timeout):
            self.close(kill=True)
            raise ConfigTimeout(f"killed at the per-configuration limit of {timeout:g} s")
        tag, payload = self._receive()
        if tag == "raised":
            raise WorkerError(payload)
        return payload

    def close(self, kill: bool = False) -> None:
        """Stop the worker: politely when it is idle, by kill when it is stuck (``kill=True``)."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if kill and process is not None:
            process.kill()
        if conn is not None:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
            conn.close()
        if process is not None:
            process.join(timeout=2)
            if process.is_alive():
                process.kill()
                process.join(timeout=5)
