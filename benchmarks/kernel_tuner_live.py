"""Live Kernel Tuner OpenCL kernels as a black box for the benchmarks (one configuration per call).

The kernels are the ones of ``examples/kernel_tuner/tune_opencl.py`` (Kernel Tuner's tiled matmul,
a 2-D convolution). Every evaluation goes through the integration's worker
(:class:`bayestune.integrations.kernel_tuner.worker.IsolatedRunner`): the configuration is
compiled by the OpenCL driver (PoCL on a CPU-only machine), checked against the NumPy answer
and timed by Kernel Tuner (``time`` = the mean of ``iterations`` runs, milliseconds), in a
spawned process killed at ``timeout`` seconds. Kernel Tuner's runner and search space are taken
from ``tune_kernel`` itself (a strategy that only captures them), so restrictions, device
options and the answer check are Kernel Tuner's own.
"""

from __future__ import annotations

import importlib.util
import json
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator
from bayestune.trial import FailureKind, Result, TrialStatus
from benchmarks.jsonl import append_record
from benchmarks.problem import config_key

REPO = Path(__file__).resolve().parent.parent
#: pipeline name -> (kernel of the example, problem size). 256 keeps one evaluation near 0.5 s on PoCL.
KT_PIPELINES: dict[str, tuple[str, int]] = {"kt_matmul": ("matmul", 256), "kt_convolution": ("convolution", 512)}


def example_module() -> Any:
    """``examples/kernel_tuner/tune_opencl.py`` (not a package), loaded from its file."""
    path = REPO / "examples" / "kernel_tuner" / "tune_opencl.py"
    spec = importlib.util.spec_from_file_location("bayestune_example_tune_opencl", path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


class _Capture:
    """A Kernel Tuner 'strategy' that runs nothing: it keeps the search space and a worker."""

    def tune(self, searchspace: Any, runner: Any, tuning_options: Any) -> list:
        from bayestune.integrations.kernel_tuner import KernelTunerSpace, tune_kernel_device_options
        from bayestune.integrations.kernel_tuner.worker import IsolatedRunner

        self.space = KernelTunerSpace.from_searchspace(searchspace)
        device = {**tune_kernel_device_options(runner), "quiet": True}
        self.worker = IsolatedRunner(runner, tuning_options, device)
        return []


class KernelTunerEvaluator(Evaluator):
    """One live OpenCL kernel; ``evaluate`` compiles, verifies and times one configuration.

    Reports ``Result.timings = {"compile": s, "run": s}`` (``run``: the rest of the call's wall
    time: answer check, benchmark, process round trip). The worker is started and warmed up
    (Kernel Tuner's runner runs its first configuration twice) here, outside any clock."""

    def __init__(self, pipeline: str, *, iterations: int = 7, timeout: float = 60.0) -> None:
        import kernel_tuner

        super().__init__(["time"])
        kernel, size = KT_PIPELINES[pipeline]
        p = example_module().PROBLEMS[kernel](size)
        self.pipeline, self.timeout, self.calls = pipeline, timeout, 0
        self.default = dict(p["default"])
        capture = _Capture()
        kernel_tuner.tune_kernel(
            p["kernel_name"],
            p["source"],
            p["problem_size"],
            p["arguments"],
            p["tune_params"],
            lang="OpenCL",
            restrictions=p["restrictions"],
            grid_div_x=p["grid_div_x"],
            grid_div_y=p["grid_div_y"],
            answer=p["answer"],
            atol=p["atol"],
            iterations=iterations,
            strategy=capture,
            strategy_options={"max_fevals": 1},
            quiet=True,
        )
        self.space, self.worker = capture.space, capture.worker
        self.worker.ensure_started()
        self.worker.run(self.space.element(self.valid_default()), self.timeout)  # warm-up, not counted

    def valid_default(self) -> dict[str, Any]:
        config = {k: self.default[k] for k in self.space.names}
        return config if self.space.config(config) is not None else self.configurations()[0]

    def configurations(self) -> list[dict[str, Any]]:
        """Every valid configuration (Kernel Tuner's restrictions applied), in a fixed order."""
        import itertools

        rows = []
        for element in itertools.product(*(self.space.tune_params[k] for k in self.space.keys)):
            config = self.space.config(dict(zip(self.space.keys, element)))
            if config is not None:
                rows.append(config)
        return rows

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        from bayestune.integrations.kernel_tuner import ConfigTimeout, classify_exception, result_of
        from bayestune.integrations.kernel_tuner.worker import WorkerError

        self.calls += 1
        started = time.perf_counter()
        try:
            record = self.worker.run(self.space.element(config), self.timeout)
        except (ConfigTimeout, WorkerError) as exc:
            return Result.failure(f"{type(exc).__name__}: {exc}", classify_exception(exc))
        wall = time.perf_counter() - started
        result = result_of(record, "time")
        if result.status is not TrialStatus.OK:
            return result
        compile_s = float(record.get("compile_time", 0.0)) / 1000.0
        return Result(
            values={"time": result.values["time"]}, timings={"compile": compile_s, "run": max(wall - compile_s, 0.0)}
        )

    def close(self) -> None:
        self.worker.close()


def cache_file(pipeline: str) -> Path:
    return REPO / "benchmarks" / "results" / f"{pipeline}.cache.jsonl"


def screen(pipeline: str, path: Path | None = None) -> Path:
    """Measure every valid configuration of ``pipeline`` once into a cache file of the Halide
    cache's format (``{"key", "values", "error", "kind"}`` per line), from which the benchmark
    draws its pools of fast configurations. Configurations already in the file are skipped."""
    path = path or cache_file(pipeline)
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                done.add(json.loads(line)["key"])
            except (ValueError, KeyError):
                continue
    evaluator = KernelTunerEvaluator(pipeline)
    try:
        for config in evaluator.configurations():
            key = config_key(config)
            if key in done:
                continue
            result = evaluator.evaluate(config)
            ok = result.status is TrialStatus.OK
            append_record(
                path,
                {
                    "key": key,
                    "values": dict(result.values) if ok else {},
                    "error": None if ok else (result.error or "failed"),
                    "kind": None if ok else (result.kind or FailureKind.RUNTIME),
                },
            )
    finally:
        evaluator.close()
    return path


def fastest(path: Path) -> dict[str, float]:
    """The lowest measured ``time`` per configuration key in a cache file."""
    best: dict[str, float] = {}
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a torn last line of a killed run
        if row.get("error") is None and "time" in (row.get("values") or {}):
            best[row["key"]] = min(best.get(row["key"], math.inf), float(row["values"]["time"]))
    return best
