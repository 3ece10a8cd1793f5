"""The Halide black box: each configuration rebuilt, scheduled, compiled, verified and timed by a
worker process that is killed at the wall-clock limit (the package docstring lists the stages
and the failure kinds they become)."""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bayestune.integrations.halide.knobs import Knob, knob_space, knobs_to_json
from bayestune.space import Space
from bayestune.trial import FailureKind, Result

logger = logging.getLogger(__name__)

#: Failure stage reported by the worker -> bayestune failure kind.
STAGE_KINDS = {
    "schedule": FailureKind.SCHEDULE,
    "compile": FailureKind.COMPILE,
    "realize": FailureKind.RUNTIME,
    "verify": FailureKind.VERIFICATION,
    "timeout": FailureKind.TIMEOUT,
    "crash": FailureKind.CRASH,
}


@dataclass(frozen=True)
class Measurement:
    """One worker answer: ``stage`` is ``"ok"`` or the failure stage (see the package docstring's table)."""

    stage: str
    run_ms: float | None = None
    compile_s: float | None = None
    wall_s: float = 0.0
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_result(self) -> Result:
        if self.stage == "ok":
            run_ms = self.run_ms
            if isinstance(run_ms, bool) or not isinstance(run_ms, (int, float)) or not math.isfinite(run_ms):
                return Result.failure(
                    f"the worker answered ok without a finite run_ms (got {run_ms!r})", FailureKind.CRASH
                )
            return Result(values={"value": float(run_ms), "compile_s": float(self.compile_s or 0.0)})
        prefix = {"schedule": "schedule error: ", "compile": "compile error: "}.get(self.stage, "")
        return Result.failure(prefix + (self.error or self.stage), STAGE_KINDS.get(self.stage, FailureKind.CRASH))


def run_worker(
    request: Mapping[str, Any], timeout: float, *, python: str | None = None, env: Mapping[str, str] | None = None
) -> Measurement:
    """Run one worker request (JSON on stdin, JSON answer as stdout's last line) in its own
    process group; SIGKILL the group after ``timeout`` seconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [python or sys.executable, "-m", "bayestune.integrations.halide.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=dict(env) if env is not None else None,
    )
    try:
        out, err = proc.communicate(json.dumps(request), timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        return Measurement(
            "timeout",
            wall_s=time.perf_counter() - t0,
            error=f"killed after the {timeout:g} s wall-clock limit (compile + run)",
        )
    wall = time.perf_counter() - t0
    lines = [ln for ln in out.splitlines() if ln.strip()]
    try:
        answer = json.loads(lines[-1])
    except (IndexError, ValueError):
        tail = err.strip().splitlines()[-3:]
        return Measurement(
            "crash", wall_s=wall, error=f"worker exited with code {proc.returncode} and no answer: {' | '.join(tail)}"
        )
    if not isinstance(answer, dict) or not isinstance(answer.get("stage"), str):
        return Measurement("crash", wall_s=wall, error=f"the worker's answer has no stage: {lines[-1][:200]}")
    return Measurement(
        answer["stage"],
        run_ms=answer.get("run_ms"),
        compile_s=answer.get("compile_s"),
        wall_s=wall,
        error=answer.get("error"),
        extra=answer.get("extra", {}),
    )


class HalideTuner:
    """A black box for :meth:`bayestune.optimizer.Optimizer.optimize`: ``tuner(config) -> Result``.

    ``builder`` is ``"module:function"``, importable in the worker (``sys.path`` of the worker
    gets ``paths`` prepended). ``timeout`` bounds one compile + verify + timing; ``repeats`` timed
    runs are taken (min). The reference output is the unscheduled pipeline, realized once in a
    worker on the first call and kept as ``.npy`` in ``workdir`` (a temporary directory by default).
    ``parameters`` and ``parameter_order``: see :func:`knob_space`.
    """

    def __init__(
        self,
        builder: str,
        knobs: Sequence[Knob],
        *,
        timeout: float = 60.0,
        repeats: int = 10,
        rtol: float = 1e-4,
        atol: float = 1e-4,
        constraints: Sequence[str] = (),
        paths: Sequence[str | os.PathLike[str]] = (),
        workdir: str | os.PathLike[str] | None = None,
        python: str | None = None,
        parameters: Sequence[Any] = (),
        parameter_order: Sequence[str] | None = None,
    ) -> None:
        if ":" not in builder:
            raise ValueError(f"builder must be 'module:function', but got {builder!r}")
        if timeout <= 0 or repeats < 1:
            raise ValueError(
                f"`timeout > 0` and `repeats >= 1` must hold, but got (timeout={timeout}, repeats={repeats})"
            )
        self.builder = builder
        self.knobs = list(knobs)
        self.timeout = float(timeout)
        self.repeats = int(repeats)
        self.rtol, self.atol = float(rtol), float(atol)
        self.constraints = list(constraints)
        self.paths = [str(Path(p).resolve()) for p in paths]
        self.python = python
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:  # kept on the tuner: the directory goes when the tuner does
            self._tmp = tempfile.TemporaryDirectory(prefix="bayestune-halide-")
            workdir = self._tmp.name
        self.workdir = Path(workdir)
        self.parameters = list(parameters)
        self.parameter_order = list(parameter_order) if parameter_order is not None else None
        self._reference: Path | None = None
        self.space()  # validate the declaration now

    def space(self) -> Space:
        return knob_space(
            self.knobs, self.constraints, parameters=self.parameters, parameter_order=self.parameter_order
        )

    def _request(self, mode: str, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "mode": mode,
            "builder": self.builder,
            "paths": self.paths,
            "knobs": knobs_to_json(self.knobs),
            "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in config.items()},
            "reference": str(self.reference_path()),
            "repeats": self.repeats,
            "rtol": self.rtol,
            "atol": self.atol,
        }

    def reference_path(self) -> Path:
        return self.workdir / "reference.npy"

    def ensure_reference(self) -> Path:
        """Realize the unscheduled pipeline once (same timeout); raise RuntimeError if it fails."""
        path = self.reference_path()
        if not path.exists():
            m = run_worker(self._request("reference", {}), self.timeout, python=self.python)
            if m.stage != "ok":
                raise RuntimeError(
                    f"the unscheduled pipeline {self.builder} could not be realized as the reference "
                    f"({m.stage}): {m.error}"
                )
        return path

    def measure(self, config: Mapping[str, Any]) -> Measurement:
        self.ensure_reference()
        m = run_worker(self._request("measure", config), self.timeout, python=self.python)
        logger.info(
            "halide %s: %s run_ms=%s compile_s=%s wall=%.1fs", self.builder, m.stage, m.run_ms, m.compile_s, m.wall_s
        )
        return m

    def __call__(self, config: Mapping[str, Any]) -> Result:
        return self.measure(config).to_result()
