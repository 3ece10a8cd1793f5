"""Loading TVM and running MetaSchedule: :func:`load_tvm` (the lazy, fast import), :func:`tune`
(one TIR module tuned by bayestune's or TVM's own strategy), :func:`measure` (a tuned schedule
timed afresh) and the records they return. TVM is imported inside the functions only."""

from __future__ import annotations

import importlib
import sys
import time
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: TVM's own strategies that :func:`tune` accepts by name besides bayestune's.
TVM_STRATEGIES = ("evolutionary", "replay-trace", "replay-func")


def load_tvm(*, stub_tensor_intrin: bool = True) -> types.ModuleType:
    """Import TVM. With ``stub_tensor_intrin`` (the default) ``tvm.s_tir.tensor_intrin`` is
    replaced by an empty module before TVM loads it: importing it parses hundreds of
    tensor intrinsics and takes minutes, and plain CPU (llvm) tuning uses none. Pass False
    for targets whose schedule rules tensorize (GPUs with tensor cores, VNNI, ...)."""
    if "tvm" not in sys.modules and stub_tensor_intrin:
        sys.modules.setdefault("tvm.s_tir.tensor_intrin", types.ModuleType("tvm.s_tir.tensor_intrin"))
    try:
        return importlib.import_module("tvm")
    except ImportError as exc:
        raise ImportError(
            f"the TVM integration needs Apache TVM ({exc}); install it with "
            "pip install 'bayestune[tvm]' (apache-tvm==0.27.0.post1 with apache-tvm-ffi==0.1.14.post1)") from None


def fast_build(mod: Any, target: Any, _params: Any) -> Any:
    """MetaSchedule's default build without its ``tensor_intrin`` import (see :func:`load_tvm`),
    so a builder worker starts in seconds."""
    from tvm.driver import build as tvm_build
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock
    return tvm_build(RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod), target=target)


@dataclass
class Measurement:
    """One candidate as MetaSchedule measured it: seconds (None if it failed) and the schedule."""

    seconds: float | None
    error: str | None
    schedule: Any = field(repr=False, default=None)


@dataclass
class TuneOutcome:
    """A finished :func:`tune`: MetaSchedule's database, every measurement in order, the
    wall time, and for bayestune's strategy its :class:`TuningRecord` (optimizer and trials)."""

    database: Any
    measurements: list[Measurement]
    seconds: float
    record: Any = None

    def best_so_far(self, trials: int) -> Measurement | None:
        """The fastest successful measurement among the first ``trials``."""
        ok = [m for m in self.measurements[:trials] if m.seconds is not None]
        return min(ok, key=lambda m: m.seconds) if ok else None


def _recorder(measurements: list[Measurement]) -> Any:
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

    @derived_object
    class RecordMeasurements(PyMeasureCallback):
        def apply(self, task_scheduler: Any, task_id: int, measure_candidates: Any, builder_results: Any,
                  runner_results: Any) -> None:
            for cand, built, ran in zip(measure_candidates, builder_results, runner_results):
                error = built.error_msg or ran.error_msg
                secs = None if error else sum(float(s) for s in ran.run_secs) / max(len(ran.run_secs), 1)
                measurements.append(Measurement(secs, str(error) if error else None, cand.sch))

    return RecordMeasurements()


def tune(mod: Any, target: Any, work_dir: str | Path, max_trials: int, *, strategy: str = "bo",
         strategy_options: dict[str, Any] | None = None, num_trials_per_iter: int = 16, seed: int = 0,
         initial_design: int = 16, epsilon: float = 0.0, builder_timeout: float = 120.0,
         runner_timeout: float = 60.0, evaluator_config: Any = None, cost_model: str | None = None,
         builder_workers: int = 1) -> TuneOutcome:
    """Tune one TIR module with MetaSchedule, searching with bayestune's ``strategy`` (any
    registered name, e.g. ``bo`` or ``random``) or with one of TVM's (:data:`TVM_STRATEGIES`;
    ``evolutionary`` uses the ``xgb`` cost model unless ``cost_model`` says otherwise).

    Builds run in ``builder_workers`` worker processes with :func:`fast_build` (a batch is
    built completely before any of it runs, so more workers only shorten the wall time);
    results land in a JSON database in ``work_dir``. ``target`` is a ``tvm.target.Target`` or its dict form.
    """
    tvm = load_tvm()
    from tvm.s_tir import meta_schedule as ms

    if isinstance(target, dict):
        target = tvm.target.Target(target)
    record = None
    if strategy in TVM_STRATEGIES:
        search: Any = strategy
        model = cost_model or ("xgb" if strategy == "evolutionary" else "random")
    else:
        from bayestune.integrations.tvm.strategy import BayestuneSearchStrategy
        search = BayestuneSearchStrategy(strategy, strategy_options, seed=seed, initial_design=initial_design,
                                         epsilon=epsilon)
        record = search.record
        model = cost_model or "random"  # bayestune models the cost itself; a random model costs nothing
    measurements: list[Measurement] = []
    callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + [_recorder(measurements)]
    Path(work_dir).mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    database = ms.tune_tir(
        mod=mod, target=target, work_dir=str(work_dir), max_trials_global=max_trials,
        num_trials_per_iter=num_trials_per_iter, strategy=search, cost_model=model, measure_callbacks=callbacks,
        builder=ms.builder.LocalBuilder(max_workers=builder_workers, timeout_sec=builder_timeout, f_build=fast_build),
        runner=ms.runner.LocalRunner(timeout_sec=runner_timeout, evaluator_config=evaluator_config),
        num_tuning_cores=1, seed=seed)
    return TuneOutcome(database, measurements, time.perf_counter() - start, record)


def measure(schedule: Any, target: Any, *, repeat: int = 5, number: int = 3,
            inputs: Sequence[Any] | None = None) -> tuple[float, list[Any]]:
    """Median seconds of ``repeat`` timings of a tuned schedule compiled afresh (each the mean
    of ``number`` runs), and the output arrays of one run (random inputs unless given) to
    check the result."""
    tvm = load_tvm()
    import numpy as np

    if isinstance(target, dict):
        target = tvm.target.Target(target)
    lib = fast_build(schedule.mod, target, None)
    lib = lib.jit() if hasattr(lib, "jit") else lib
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo

    dev = tvm.cpu(0)
    if inputs is None:
        rng = np.random.default_rng(0)
        inputs = [rng.random([int(s) for s in info.shape]).astype(str(info.dtype))
                  for info in ArgInfo.from_prim_func(schedule.mod["main"])]
    args = [tvm.runtime.tensor(np.asarray(a), dev) for a in inputs]
    timer = lib.time_evaluator(lib.entry_name, dev, number=number, repeat=repeat)
    seconds = float(np.median(timer(*args).results))
    return seconds, [a.numpy() for a in args]
