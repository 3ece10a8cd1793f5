"""Loading TVM and running MetaSchedule: :func:`load_tvm` (the lazy, fast import), :func:`tune`
(one TIR module tuned by bayestune's or TVM's own strategy), :func:`measure` (a tuned schedule
timed afresh) and the records they return. TVM is imported inside the functions only."""

from __future__ import annotations

import contextlib
import importlib
import logging
import sys
import time
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

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
            "pip install -e '.[tvm]' in the bayestune checkout "
            "(apache-tvm==0.27.0.post1 with apache-tvm-ffi==0.1.14.post1)"
        ) from None


def fast_build(mod: Any, target: Any, _params: Any) -> Any:
    """MetaSchedule's default build without its ``tensor_intrin`` import (see :func:`load_tvm`),
    so a builder worker starts in seconds."""
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock
    from tvm.tirx import (
        build as tirx_build,  # tvm.driver.build is deprecated in TVM 0.27
    )

    return tirx_build(RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod), target=target)


@dataclass
class Measurement:
    """One candidate as MetaSchedule measured it: seconds (None if it failed), the schedule,
    its sampling decisions in trace order, and when it was measured (seconds since :func:`tune`
    started: the wall-time axis of a comparison)."""

    seconds: float | None
    error: str | None
    schedule: Any = field(repr=False, default=None)
    decisions: list[Any] | None = None
    elapsed: float = 0.0


@dataclass
class TuneOutcome:
    """A finished :func:`tune`: MetaSchedule's database, every measurement in order, the
    wall time, its :class:`TuningRecord` (optimizer and trials; for TVM's own strategies the
    measurements told afterwards) and the journal's path."""

    database: Any
    measurements: list[Measurement]
    seconds: float
    record: Any = None
    journal: Path | None = None

    @property
    def best(self) -> Measurement | None:
        """The fastest successful measurement, whatever the strategy (None: every one failed)."""
        return self.best_so_far(len(self.measurements))

    def best_so_far(self, trials: int) -> Measurement | None:
        """The fastest successful measurement among the first ``trials``."""
        timed = [(m.seconds, m) for m in self.measurements[:trials] if m.seconds is not None]
        return min(timed, key=lambda pair: pair[0])[1] if timed else None


def _recorder(measurements: list[Measurement], start: float) -> Any:
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

    from bayestune.integrations.tvm.space import read_decisions

    @derived_object
    class RecordMeasurements(PyMeasureCallback):
        def apply(
            self, task_scheduler: Any, task_id: int, measure_candidates: Any, builder_results: Any, runner_results: Any
        ) -> None:
            for cand, built, ran in zip(measure_candidates, builder_results, runner_results):
                error = built.error_msg or ran.error_msg
                secs = None if error else sum(float(s) for s in ran.run_secs) / max(len(ran.run_secs), 1)
                measurements.append(
                    Measurement(
                        secs,
                        str(error) if error else None,
                        cand.sch,
                        read_decisions(cand.sch.trace),
                        time.perf_counter() - start,
                    )
                )

    return RecordMeasurements()


@contextlib.contextmanager
def _unnamed_handlers_set_aside() -> Iterator[None]:
    """MetaSchedule re-configures its logger by handler *name* on every run and fails on a
    handler without one (pytest's log capture attaches such handlers); they are set aside
    for the run and put back after it."""
    log = logging.getLogger("tvm.s_tir.meta_schedule")
    unnamed = [h for h in log.handlers if h.get_name() is None]
    for h in unnamed:
        log.removeHandler(h)
    try:
        yield
    finally:
        for h in unnamed:
            log.addHandler(h)


def tune(
    mod: Any,
    target: Any,
    work_dir: str | Path,
    max_trials: int,
    *,
    strategy: str = "bo",
    strategy_options: dict[str, Any] | None = None,
    num_trials_per_iter: int = 16,
    seed: int = 0,
    initial_design: int = 16,
    epsilon: float = 0.0,
    builder_timeout: float = 120.0,
    runner_timeout: float = 60.0,
    evaluator_config: Any = None,
    cost_model: str | None = None,
    builder_workers: int = 1,
    journal: str | Path | None = "auto",
    prior_runs: Sequence[Any] = (),
    transfer_mode: str | None = None,
) -> TuneOutcome:
    """Tune one TIR module with MetaSchedule, searching with bayestune's ``strategy`` (any
    registered name, e.g. ``bo`` or ``random``) or with one of TVM's (:data:`TVM_STRATEGIES`;
    ``evolutionary`` uses the ``xgb`` cost model unless ``cost_model`` says otherwise).

    Builds run in ``builder_workers`` worker processes with :func:`fast_build` (a batch is
    built completely before any of it runs, so more workers only shorten the wall time);
    results land in a JSON database in ``work_dir``. ``target`` is a ``tvm.target.Target`` or its dict form.

    Each run keeps a bayestune journal (``"auto"``: ``work_dir/bayestune.journal.db``; a path;
    None: none) that ``bayestune show/report/export`` read: bayestune's strategies write it as
    they go and resume a journal that has trials (its measurements count towards
    ``max_trials``); TVM's own strategies have their measurements written into a new one
    afterwards. ``prior_runs`` (MetaSchedule
    work directories or tuning logs, bayestune journals, folders and globs of them, of the
    same operator) are transferred with ``transfer_mode`` (see :class:`~bayestune.scenario.records.TransferSpec`);
    what was read is in ``outcome.record.transfer_note``. An error of bayestune's own (a bad
    option, an unreadable prior run) comes out as raised, not as TVM's ``RuntimeError``.
    """
    tvm = load_tvm()
    from tvm.s_tir import meta_schedule as ms

    if isinstance(target, dict):
        target = tvm.target.Target(target)
    Path(work_dir).mkdir(parents=True, exist_ok=True)
    from bayestune.integrations.tvm.prior import JOURNAL_FILE
    from bayestune.storage.journal import Journal

    record, opened = None, None
    if journal is not None:
        path = Path(work_dir) / JOURNAL_FILE if journal == "auto" else Path(journal)
        if strategy in TVM_STRATEGIES and path.is_file():
            raise ValueError(
                f"{path} already holds a run; TVM's own strategies start a new journal "
                "(pass another journal path, or journal=None)"
            )
        opened = Journal(path)
    if strategy in TVM_STRATEGIES:
        if prior_runs:
            raise ValueError(f"prior_runs need one of bayestune's strategies, not TVM's {strategy!r}")
        search: Any = strategy
        model = cost_model or ("xgb" if strategy == "evolutionary" else "random")
    else:
        from bayestune.integrations.tvm.strategy import BayestuneSearchStrategy

        search = BayestuneSearchStrategy(
            strategy,
            strategy_options,
            seed=seed,
            initial_design=initial_design,
            epsilon=epsilon,
            journal=opened,
            prior_runs=prior_runs,
            transfer_mode=transfer_mode,
        )
        record = search.record
        model = cost_model or "random"  # bayestune models the cost itself; a random model costs nothing
    measurements: list[Measurement] = []
    start = time.perf_counter()
    callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + [_recorder(measurements, start)]
    runner = ms.runner.LocalRunner(timeout_sec=runner_timeout, evaluator_config=evaluator_config)
    try:
        with _unnamed_handlers_set_aside():
            database = ms.tune_tir(
                mod=mod,
                target=target,
                work_dir=str(work_dir),
                max_trials_global=max_trials,
                num_trials_per_iter=num_trials_per_iter,
                strategy=search,
                cost_model=model,
                measure_callbacks=callbacks,
                builder=ms.builder.LocalBuilder(
                    max_workers=builder_workers, timeout_sec=builder_timeout, f_build=fast_build
                ),
                runner=runner,
                num_tuning_cores=1,
                seed=seed,
            )
        seconds = time.perf_counter() - start  # the search's wall time, without the journaling below
        if record is None:  # TVM's own search: its measurements told (and journaled) afterwards
            from bayestune.integrations.tvm.strategy import journal_measurements

            record, skipped = journal_measurements(mod, target, measurements, opened, strategy, seed)
            if skipped:
                logger.warning(
                    "%d of %d measurement(s) fit no configuration of the decision space; not journaled",
                    skipped,
                    len(measurements),
                )
    except Exception:
        if record is not None and record.error is not None:
            raise record.error from None  # bayestune's own error, not TVM's wrapping of it
        raise
    finally:
        runner.pool.shutdown(wait=False)  # its worker process would otherwise outlive a failed run
        if opened is not None:
            opened.close()
    return TuneOutcome(database, measurements, seconds, record, Path(opened.path) if opened is not None else None)


def measure(
    schedule: Any, target: Any, *, repeat: int = 5, number: int = 3, inputs: Sequence[Any] | None = None
) -> tuple[float, list[Any]]:
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
        inputs = [
            rng.random([int(s) for s in info.shape]).astype(str(info.dtype))
            for info in ArgInfo.from_prim_func(schedule.mod["main"])
        ]
    args = [tvm.runtime.tensor(np.asarray(a), dev) for a in inputs]
    timer = lib.time_evaluator(lib.entry_name, dev, number=number, repeat=repeat)
    seconds = float(np.median(timer(*args).results))
    return seconds, [a.numpy() for a in args]
