"""The MetaSchedule search strategy driven by a bayestune :class:`Optimizer` (imports TVM:
load it through :mod:`bayestune.integrations.tvm`, which keeps that import lazy)."""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from tvm.ir.utils import derived_object
from tvm.s_tir import Schedule
from tvm.s_tir.meta_schedule.arg_info import ArgInfo
from tvm.s_tir.meta_schedule.search_strategy import MeasureCandidate, PySearchStrategy

from bayestune.exceptions import BayestuneError
from bayestune.history import draw_unseen
from bayestune.integrations.tvm.prior import read_prior_runs
from bayestune.integrations.tvm.space import (
    OBJECTIVE,
    TUNED_SAMPLES,
    Decision,
    DesignSpaces,
    canonical_decisions,
    canonical_defaults,
    read_decisions,
)
from bayestune.optimizer import Optimizer
from bayestune.run import META_NOT_RUN
from bayestune.scenario.records import DesignSpec, TransferSpec
from bayestune.storage.base import TrialJournal
from bayestune.trial import FailureKind, Result, Trial

logger = logging.getLogger(__name__)

#: Compute-location indices tried when finding a SampleComputeLocation's valid choices.
MAX_LOCATION_PROBE = 64
#: Asks per candidate before a batch is returned short (a space of mostly invalid schedules).
ASKS_PER_CANDIDATE = 20


@dataclass
class TuningRecord:
    """What a tuning run did, shared by a strategy and its clones (``tune_tir`` clones it):
    the optimizer, every trial in the order told, and how many candidates TVM measured."""

    optimizer: Optimizer | None = None
    spaces: DesignSpaces | None = None
    trials: list[Trial] = field(default_factory=list)
    measured: int = 0
    skipped_invalid: int = 0
    reused: int = 0
    resumed: int = 0
    transfer_note: str | None = None
    error: BaseException | None = None
    not_run: list[int] = field(default_factory=list)  # trials told without a measurement of their own

    def tell_unmeasured(self, config: dict[str, Any], result: Result) -> None:
        """Tell a configuration TVM did not measure (refused, or a measured program's twin): it
        does not count among the run's evaluations (``max_trials`` trials journal as many)."""
        opt, _ = self.started()
        trial = opt.tell(config, result)
        self.trials.append(trial)
        self.not_run.append(trial.trial_id)
        opt.journal.set_meta(META_NOT_RUN, self.not_run)

    @property
    def best(self) -> Trial | None:
        return self.optimizer.best if self.optimizer is not None else None

    def started(self) -> tuple[Optimizer, DesignSpaces]:
        """The optimizer and design spaces ``pre_tuning`` made (an error before it ran)."""
        if self.optimizer is None or self.spaces is None:
            raise BayestuneError("the TVM search strategy was used before MetaSchedule called pre_tuning")
        return self.optimizer, self.spaces


def _sample_decisions(trace: Any, mod: Any) -> list[Decision]:
    """The sampling decisions of ``trace``, found by replaying it (the loops a tile splits
    exist only while the trace is applied)."""
    sch = Schedule(mod)
    found: list[Decision] = []

    def record(inst: Any, inputs: Any, attrs: Any, decision: Any) -> Any:
        name = inst.kind.name
        if name == "SamplePerfectTile":
            loop = sch.get(inputs[0])
            cap = int(attrs[1])
            found.append(
                Decision(
                    "tile",
                    str(loop.loop_var.name),
                    [int(v) for v in decision],
                    extent=int(loop.extent),
                    levels=int(attrs[0]),
                    max_innermost=cap if cap > 0 else None,
                )
            )
        elif name == "SampleCategorical":
            found.append(Decision("categorical", "categorical", int(decision), choices=tuple(int(v) for v in attrs[0])))
        elif name == "SampleComputeLocation":
            found.append(Decision("compute_location", str(sch.get(inputs[0]).name_hint), int(decision)))
        return decision

    trace.apply_to_schedule(sch, remove_postproc=True, decision_provider=record)
    return found


def _read_back(sch: Any) -> list[Any]:
    """The sampling decisions a schedule's trace holds after TVM applied (and normalised) them."""
    return read_decisions(sch.trace)


def failure_kind(message: str) -> str:
    """The hidden-constraint kind of a runner error: timeouts, build errors, run errors."""
    text = message.lower()
    if "timeout" in text or "timed out" in text:
        return FailureKind.TIMEOUT
    if "builder" in text or "build" in text:
        return FailureKind.COMPILE
    return FailureKind.RUNTIME


def _keeps_error(method: Callable[..., Any]) -> Callable[..., Any]:
    """Keep an exception raised inside a MetaSchedule callback in the shared record before it
    crosses TVM's FFI (which turns it into a RuntimeError), so :func:`tune` can raise the
    original, with its own type and text."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except BaseException as exc:
            if self.record.error is None:
                self.record.error = exc
            raise

    return wrapper


@derived_object
class BayestuneSearchStrategy(PySearchStrategy):
    """bayestune's ask/tell loop as MetaSchedule's search strategy (see
    :mod:`bayestune.integrations.tvm` for the options and the space it tunes)."""

    def __init__(
        self,
        strategy: str = "bo",
        strategy_options: dict[str, Any] | None = None,
        *,
        seed: int = 0,
        initial_design: int = 16,
        epsilon: float = 0.0,
        record: TuningRecord | None = None,
        journal: TrialJournal | None = None,
        prior_runs: Sequence[Any] = (),
        transfer_mode: str | None = None,
    ) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], but got {epsilon!r}")
        self.strategy_name = strategy
        self.strategy_options = dict(strategy_options or {})
        self.seed = seed
        self.initial_design = initial_design
        self.epsilon = epsilon
        self.record = record if record is not None else TuningRecord()
        self.journal = journal
        self.prior_runs = list(prior_runs)
        self.transfer_mode = transfer_mode
        self.rng = np.random.default_rng(seed)

    # ---- MetaSchedule's interface --------------------------------------------------------
    def _initialize_with_tune_context(self, context: Any) -> None:
        self.mod = context.mod
        self.postprocs = list(context.space_generator.postprocs)

    @_keeps_error
    def pre_tuning(
        self,
        max_trials: int,
        num_trials_per_iter: int,
        design_spaces: list[Any],
        database: Any = None,
        cost_model: Any = None,
    ) -> None:
        self.max_trials, self.per_iter = int(max_trials), int(num_trials_per_iter)
        self.traces = [s.trace for s in design_spaces]
        per_space = [_sample_decisions(t, self.mod) for t in self.traces]
        per_space = [
            [self._with_locations(d, i, dec, decs) for i, dec in enumerate(decs)] for d, decs in enumerate(per_space)
        ]
        # One choice set per block across the design spaces (each was probed at its own tiles).
        union: dict[str, set[int]] = {}
        for dec in (dec for decs in per_space for dec in decs if dec.kind == "compute_location"):
            union.setdefault(dec.label, set()).update(dec.choices)
        per_space = [
            [
                replace(dec, choices=tuple(sorted(union[dec.label]))) if dec.kind == "compute_location" else dec
                for dec in decs
            ]
            for decs in per_space
        ]
        per_space = [canonical_defaults(decs) for decs in per_space]  # not the trace's sampled ones
        spaces = DesignSpaces(per_space)
        self.args_info = ArgInfo.from_prim_func(self.mod["main"])
        record = self.record
        record.spaces = spaces
        transfer = None
        if self.prior_runs:
            runs, notes = read_prior_runs(self.prior_runs, spaces, self.mod, self._config_of_trace)
            transfer = (
                TransferSpec(tuple(runs), mode=self.transfer_mode) if self.transfer_mode else TransferSpec(tuple(runs))
            )
        journal = self.journal
        resume = journal is not None and bool(journal.trials())
        record.optimizer = Optimizer(
            spaces.space,
            objectives=[OBJECTIVE],
            strategy=self.strategy_name,
            strategy_options=self.strategy_options,
            seed=self.seed,
            design=DesignSpec(method="cot", size=self.initial_design),
            journal=journal,
            resume=resume,
            transfer=transfer,
        )
        if resume:  # journaled measurements count towards max_trials
            record.not_run = [int(i) for i in record.optimizer.journal.get_meta(META_NOT_RUN) or []]
            unmeasured = set(record.not_run)
            record.resumed = sum(
                t.failure_kind != FailureKind.SCHEDULE and t.trial_id not in unmeasured for t in record.optimizer.trials
            )
            record.measured = record.resumed
            logger.info("resuming: %d measured trial(s) in the journal", record.resumed)
        if transfer is not None:
            record.transfer_note = "; ".join([*notes, record.optimizer.transfer_note() or ""]).strip("; ")
            logger.info("%s", record.transfer_note)
        self._cache: dict[tuple, Result] = {}
        self._pending: list[tuple[dict[str, Any], tuple]] = []
        self._twins: list[tuple[dict[str, Any], tuple]] = []
        logger.info("tuning %d design space(s) over %s", len(self.traces), spaces.space.names)

    def _config_of_trace(self, trace: Any) -> dict[str, Any] | None:
        """The configuration of a trace MetaSchedule recorded (a prior run's): its decisions
        in the design space that makes the same program with them (None: no design does)."""
        import tvm_ffi

        spaces = self.record.spaces
        if spaces is None:
            raise BayestuneError("a trace was read before pre_tuning made the design spaces")
        decisions = read_decisions(trace)
        target = Schedule(self.mod)
        try:
            trace.apply_to_schedule(target, remove_postproc=True)
        except Exception:  # noqa: BLE001 - a trace of another program
            return None
        for design in range(len(self.traces)):
            config = spaces.config_of(design, decisions)
            if config is None:
                continue
            sch = self._apply(design, lambda k, default: decisions[k])
            if sch is not None and tvm_ffi.structural_equal(sch.mod, target.mod):
                return config
        return None

    def _with_locations(self, design: int, position: int, dec: Decision, decisions: Sequence[Decision]) -> Decision:
        """A compute location with its choices: every index from -2 (root) up to the last one
        TVM keeps as it is (it silently moves an unavailable one) at :func:`canonical_decisions`
        -- every loop split, so every loop exists. Probing at the design space's own sampled
        tiles found a different set each run (TVM drops unit loops); at the canonical tiles the
        set depends on the operator only. A location unavailable at a configuration's tiles is
        moved by TVM and measured as the program it becomes (:meth:`_schedule`)."""
        if dec.kind != "compute_location":
            return dec
        canonical = canonical_decisions(decisions)
        last = -1
        for candidate in range(0, MAX_LOCATION_PROBE):
            sch = self._apply(
                design, lambda k, default, candidate=candidate: candidate if k == position else canonical[k]
            )
            if sch is not None and _read_back(sch)[position] == candidate:
                last = candidate
        return Decision(dec.kind, dec.label, dec.default, choices=tuple(range(-2, last + 1)))

    def _apply(self, design: int, choose: Any) -> Any:
        """A schedule of ``design`` with decision k replaced by ``choose(k, default)``; None
        when TVM refuses it."""
        sch = Schedule(self.mod, seed=int(self.rng.integers(1, 2**30)))
        counter = [0]

        def provide(inst: Any, inputs: Any, attrs: Any, decision: Any) -> Any:
            if inst.kind.name not in TUNED_SAMPLES:
                return decision
            k = counter[0]
            counter[0] += 1
            return choose(k, decision)

        try:
            self.traces[design].apply_to_schedule(sch, remove_postproc=True, decision_provider=provide)
        except Exception:  # noqa: BLE001 - TVM reports an invalid decision as any error
            return None
        return sch

    @_keeps_error
    def generate_measure_candidates(self) -> list[Any] | None:
        record = self.record
        opt, _ = record.started()
        if record.measured >= self.max_trials:
            return None
        want = min(self.per_iter, self.max_trials - record.measured)
        candidates: list[Any] = []
        self._pending, self._twins = [], []
        asks = 0
        while len(candidates) < want and asks < ASKS_PER_CANDIDATE * want:
            configs = self._next_configs(want - len(candidates))
            if not configs:
                break
            asks += len(configs)
            for config in configs:
                built = self._schedule(config)
                if isinstance(built, Result):
                    record.tell_unmeasured(config, built)
                    continue
                sch, key = built
                if key in self._cache:
                    record.reused += 1
                    record.tell_unmeasured(config, self._cache[key])
                    continue
                if any(key == k for _, k in self._pending):  # told with its twin's measurement
                    record.reused += 1
                    self._twins.append((config, key))
                    continue
                candidates.append(MeasureCandidate(sch, self.args_info))
                self._pending.append((config, key))
        record.measured += len(candidates)
        return candidates or None  # [] would make the task scheduler call again forever

    def _next_configs(self, n: int) -> list[dict[str, Any]]:
        """``n`` configurations: the optimizer's picks, each replaced by a uniform draw with
        probability ``epsilon`` once the initial design is done (the thesis's epsilon-greedy)."""
        opt, _ = self.record.started()
        n_random = int(self.rng.binomial(n, self.epsilon)) if opt.n_evaluated >= self.initial_design else 0
        configs = opt.ask(n - n_random) if n > n_random else []
        if n_random:
            rows = draw_unseen(opt.space, opt.history(), n_random, self.rng)
            configs += opt.space.to_configs(rows)
        return configs

    def _schedule(self, config: dict[str, Any]) -> tuple[Any, tuple] | Result:
        """The traced schedule of ``config`` and the key of the program it is, or the
        known-infeasible Result of a decision TVM refuses or a schedule a postprocessor rejects
        (never built). Which compute locations exist depends on the tiles (TVM drops unit
        loops), and TVM moves an unavailable one to its neighbour: that program is measured
        and keyed by the decisions TVM actually made, so aliases are measured once."""
        _, spaces = self.record.started()
        design = spaces.design_of(config)
        wanted = spaces.decisions(config)
        sch = self._apply(design, lambda k, default: wanted[k])
        if sch is None:
            self.record.skipped_invalid += 1
            return Result.failure("TVM refused a decision of this configuration", FailureKind.SCHEDULE)
        actual = _read_back(sch)
        moved = [
            k
            for k, (a, w) in enumerate(zip(actual, wanted))
            if a != w and spaces.spaces[design][k].kind != "compute_location"
        ]
        if moved or len(actual) != len(wanted):
            self.record.skipped_invalid += 1
            return Result.failure(f"TVM changed the decisions {wanted} to {actual}", FailureKind.SCHEDULE)
        try:
            ok = all(p.apply(sch) for p in self.postprocs)
        except Exception as exc:  # noqa: BLE001 - a postproc may raise instead of returning False
            ok, why = False, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        else:
            why = "a MetaSchedule postprocessor rejected the schedule"
        if not ok:
            self.record.skipped_invalid += 1
            return Result.failure(why, FailureKind.SCHEDULE)
        return sch, (design, tuple(tuple(v) if isinstance(v, list) else v for v in actual))

    @_keeps_error
    def notify_runner_results(self, measure_candidates: list[Any], results: list[Any]) -> None:
        record = self.record
        opt, _ = record.started()
        for (config, key), result in zip(self._pending, results):
            if result.error_msg:
                message = str(result.error_msg)
                outcome = Result.failure(message[:2000], failure_kind(message))
            else:
                secs = [float(x) for x in result.run_secs]
                value = float(np.mean(secs)) if secs and all(math.isfinite(s) for s in secs) else math.nan
                outcome = (
                    Result(values={OBJECTIVE: value})
                    if math.isfinite(value)
                    else Result.failure(f"run_secs {secs}", FailureKind.NAN)
                )
            self._cache[key] = outcome
            record.trials.append(opt.tell(config, outcome))
        for config, key in self._twins:
            record.tell_unmeasured(config, self._cache[key])
        self._pending, self._twins = [], []

    def post_tuning(self) -> None:
        pass

    def clone(self) -> Any:
        return BayestuneSearchStrategy(
            self.strategy_name,
            self.strategy_options,
            seed=self.seed,
            initial_design=self.initial_design,
            epsilon=self.epsilon,
            record=self.record,
            journal=self.journal,
            prior_runs=self.prior_runs,
            transfer_mode=self.transfer_mode,
        )


def journal_measurements(
    mod: Any, target: Any, measurements: list[Any], journal: TrialJournal | None, strategy: str, seed: int
) -> tuple[TuningRecord, int]:
    """Tell a run of one of TVM's own strategies to an optimizer (journaled in ``journal``, None:
    in memory), each measurement as the configuration of its decisions, so ``show``/``report``/
    ``export`` and ``outcome.record`` read it like a bayestune run. Also returns how many
    measurements fit no configuration of the space (skipped)."""
    from tvm.s_tir import meta_schedule as ms

    from bayestune.run import META_STRATEGY

    context = ms.TuneContext(
        mod=mod, target=target, space_generator="post-order-apply", search_strategy="replay-trace", task_name="main"
    )
    reader = BayestuneSearchStrategy("random", seed=seed, journal=journal)
    reader._initialize_with_tune_context(context)
    reader.pre_tuning(max(len(measurements), 1), 1, context.generate_design_space())
    opt, _ = reader.record.started()
    opt.journal.set_meta(META_STRATEGY, strategy)  # whose run it is: TVM's search, told afterwards
    reader.record.measured = len(measurements)
    skipped = 0
    for m in measurements:
        config = reader._config_of_trace(m.schedule.trace)
        if config is None:
            skipped += 1
            continue
        if m.seconds is not None:
            outcome = Result(values={OBJECTIVE: m.seconds})
        else:
            outcome = Result.failure((m.error or "failed")[:2000], failure_kind(m.error or ""))
        reader.record.trials.append(opt.tell(config, outcome))
    return reader.record, skipped
