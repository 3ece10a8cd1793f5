"""A worker process that runs Kernel Tuner configurations, so a hung compile or kernel can be killed.

Kernel Tuner's SequentialRunner compiles and benchmarks in the calling process, and a single
blocking call (``clBuildProgram``, a kernel launch that never returns) cannot be interrupted
from Python. The worker holds its own runner (same kernel source, arguments, device and answer
check) in a spawned process -- spawned, not forked, because an OpenCL/CUDA context does not
survive ``fork`` -- and the parent waits for each answer at most the per-configuration limit,
then kills and later restarts the worker.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import pickle
import sys
from collections.abc import Iterator
from typing import Any

from bayestune.integrations.kernel_tuner.timeouts import ConfigTimeout

logger = logging.getLogger(__name__)

#: Seconds a new worker may take to start (interpreter, imports, device context, argument upload).
STARTUP_TIMEOUT = 300.0


#: Seconds between checks that a starting worker is still alive.
STARTUP_POLL = 0.2


class WorkerError(RuntimeError):
    """The worker raised (its text is the original ``Type: message``) or died."""


class WorkerStartError(WorkerError):
    """The worker process ended before it was ready: most often a script that calls
    ``tune_kernel`` at its top level, which the spawned worker imports and runs again."""


def _serve(conn: Any) -> None:
    """Worker main loop: receive the runner's arguments, then parameter tuples; send back Kernel
    Tuner's result records. The arguments (the kernel's data, often megabytes) come over the pipe,
    not with the process: a start-up that fails then cannot leave the parent blocked writing them."""
    kernel_source, kernel_options, device_options, iterations, tuning_options = conn.recv()
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


@contextlib.contextmanager
def _main_hidden(hide: bool) -> Iterator[None]:
    """While a worker is spawned, ``__main__`` shows no file, so the worker does not import (and
    so run) the user's script: multiprocessing imports it to find what the arguments reference."""
    main = sys.modules.get("__main__")
    if not hide or main is None:
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    for k in saved:
        setattr(main, k, None)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(main, k, v)


class IsolatedRunner:
    """Runs one configuration at a time in a worker process; see the module docstring."""

    def __init__(self, runner: Any, tuning_options: Any, device_options: dict[str, Any]) -> None:
        keep = ("tune_params", "answer", "atol", "verify", "objective", "objective_higher_is_better", "verbose")
        options = {k: tuning_options[k] for k in keep if k in tuning_options}
        options["verify"] = getattr(tuning_options, "verify", options.get("verify"))
        iterations = getattr(runner.dev, "iterations", 7)
        self._args = (runner.kernel_source, runner.kernel_options, dict(device_options), iterations, options)
        #: the worker imports the user's script only when the arguments need it (a verify function
        #: defined there): a script without a main guard would run itself again in the worker
        self._needs_main = b"__main__" in pickle.dumps(self._args)  # fails here on a lambda verify, say
        self._context = multiprocessing.get_context("spawn")
        self._process: Any = None
        self._conn: Any = None

    def ensure_started(self) -> None:
        """Start the worker if none runs (its start-up is not charged to any configuration)."""
        if self._process is None:
            self._start()

    def _start(self) -> None:
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(child,), daemon=True)
        with _main_hidden(not self._needs_main):
            process.start()  # raises inside a worker that is itself importing the user's script: nothing to clean
        self._process = process
        child.close()
        self._conn = parent
        try:
            parent.send(self._args)
        except (OSError, ValueError):
            pass  # the worker is gone: said below
        waited = 0.0
        while not parent.poll(STARTUP_POLL):  # a pipe end shared with the worker may never report EOF
            waited += STARTUP_POLL
            if not process.is_alive():
                break
            if waited >= STARTUP_TIMEOUT:
                self.close()
                raise WorkerError(f"the Kernel Tuner worker did not start within {STARTUP_TIMEOUT:g} s")
        try:
            tag, payload = parent.recv()
        except (EOFError, OSError):
            process.join(timeout=5)
            code = process.exitcode
            self.close()
            raise WorkerStartError(
                f"the Kernel Tuner worker process ended while starting (exit code {code}). If your script "
                'calls tune_kernel at its top level, put the call under `if __name__ == "__main__":` -- '
                "the worker imports your script to find what its arguments (a verify function, say) "
                "reference, and so runs it again"
            ) from None
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
