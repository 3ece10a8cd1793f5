"""The ask/tell loop every interface (Python, CLI, compiler plug-ins) goes through.

The optimizer owns what strategies should not have to think about: the initial design
(default configuration first, failed design points replaced), the journal (every
suggestion is recorded as pending before it is returned, every result committed before
the next suggestion), duplicate avoidance and the budget.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from bayestune import run as run_meta
from bayestune.design.initial import initial_design
from bayestune.exceptions import BayestuneError, SpaceError
from bayestune.execution.loop import DEFAULT_STOP_AFTER_FAILURES
from bayestune.execution.loop import run as run_loop
from bayestune.history import History, RunMemory
from bayestune.objectives import Objective, parse_output_constraints
from bayestune.scenario.records import (
    DEFAULT_MULTI_OBJECTIVE_STRATEGY,
    DEFAULT_STRATEGY,
    DesignSpec,
    Scenario,
    TransferSpec,
)
from bayestune.space.space import Space
from bayestune.storage.base import TrialJournal
from bayestune.storage.memory import MemoryJournal
from bayestune.strategies.base import Strategy, make_strategy
from bayestune.trial import FailureKind, Origin, Result, Trial, TrialStatus, coerce_result

if TYPE_CHECKING:  # loaded only when a run transfers in mode auto
    from bayestune.transfer.gate import DesignGate

logger = logging.getLogger(__name__)

#: Feasible observations the initial design must reach before a model takes over.
MIN_FEASIBLE_DESIGN = 2
#: One configuration of an ``ask``: the configuration, its raw row, its origin (``trial.Origin``).
_Proposal = tuple[dict[str, Any], np.ndarray, str]


def _as_objectives(objectives: Sequence[Objective | str]) -> list[Objective]:
    return [o if isinstance(o, Objective) else Objective(str(o)) for o in objectives]


class Optimizer:
    """Suggests configurations with ``ask()`` and learns from ``tell()``.

    Every trial is recorded in ``journal`` (a :class:`bayestune.storage.TrialJournal`; by
    default a :class:`~bayestune.storage.MemoryJournal`). The SQLite
    :class:`bayestune.storage.Journal` makes the run crash-safe: with ``resume=True`` the
    trials already in it are loaded, and evaluations that were in flight when the previous
    process died are re-run first (they do not count towards the budget).

    ``output_constraints`` are expressions over measured outputs (``"utilisation <= 100"``);
    a result that breaks one is recorded as infeasible, its measured values kept.

    ``strategy=None`` picks ``bo`` for one objective and ``parego`` for several.

    ``transfer`` (a :class:`~bayestune.scenario.TransferSpec`, or just a list of prior-run files)
    starts from earlier runs of the same space: with ``bo`` they are the GP's prior mean while
    they rank this run's results well, and their best configurations open the initial design:
    in mode ``auto`` (the default) while they measure better than its other points, in
    ``design``/``both`` whatever they measure (:mod:`bayestune.transfer`). It is not stored in the
    journal: pass it again to resume.
    """

    def __init__(
        self,
        space: Space,
        *,
        objectives: Sequence[Objective | str] = ("value",),
        strategy: str | Strategy | None = None,
        strategy_options: Mapping[str, Any] | None = None,
        design: DesignSpec | None = None,
        seed: int | None = None,
        journal: TrialJournal | None = None,
        resume: bool = False,
        feasible_output: str | None = None,
        output_constraints: Sequence[str] = (),
        transfer: TransferSpec | Sequence[Any] | None = None,
    ) -> None:
        self.space = space
        self.objectives = _as_objectives(objectives)
        self.journal: TrialJournal = MemoryJournal() if journal is None else journal
        if resume:
            run_meta.check_objectives(self.journal, self.objectives)
            given = run_meta.Settings(strategy, strategy_options, seed, design)
            settings = run_meta.resumed_settings(self.journal, given)
            strategy, strategy_options, seed, design = (
                settings.strategy,
                settings.strategy_options,
                settings.seed,
                settings.design,
            )
        self.design = design or DesignSpec()
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.feasible_output = feasible_output
        self.output_constraints = parse_output_constraints(output_constraints)
        if strategy is None:
            strategy = DEFAULT_STRATEGY if len(self.objectives) == 1 else DEFAULT_MULTI_OBJECTIVE_STRATEGY
        if isinstance(strategy, Strategy):
            self.strategy = strategy
        else:
            self.strategy = make_strategy(strategy, space, self.objectives, self.rng, strategy_options)
        self._gate: DesignGate | None = None  # transfer mode auto
        self.transfer, self._prior_runs = self._load_transfer(transfer)
        self._memory = RunMemory(space, self.objectives)
        self._requeue: list[dict[str, Any]] = []
        self._design_rows: list[np.ndarray] = []
        self._design_started = False
        existing = self.journal.trials()
        if existing and not resume:
            raise BayestuneError(
                f"the journal already holds {len(existing)} trials; pass resume=True to continue that run"
            )
        if resume:
            self._load_journal()
        else:
            run_meta.describe_run(
                self.journal,
                objectives=self.objectives,
                space=space,
                strategy=getattr(self.strategy, "name", type(self.strategy).__name__),
                strategy_options=strategy_options,
                seed=seed,
                design=self.design,
                output_constraints=self.output_constraints,
            )

    def transfer_note(self) -> str | None:
        """What the run read from its prior runs and how it uses them, for the user (None: no transfer)."""
        if self.transfer is None:
            return None
        runs = self._prior_runs
        uses = {
            "auto": "to open the initial design with their best configurations while this run's measurements "
            "rank those above its other design points (else the cold design), and as the GP's prior "
            "mean, weighted by how well they rank this run's results",
            "model": "as the GP's prior mean, weighted by how well they rank this run's results",
            "design": "to open the initial design with their best configurations",
            "both": "to open the initial design with their best configurations and as the GP's prior mean",
        }
        listed = ", ".join(f"{r.name} ({len(r.y)} trials, {r.n_feasible} feasible)" for r in runs)
        note = f"transfer: read {len(runs)} prior run(s): {listed}; used {uses.get(self.transfer.mode, self.transfer.mode)}"
        decision = self.transfer_decision()
        return note + ("; " + decision if decision else "")

    def transfer_decision(self) -> str | None:
        """What the ``auto`` transfer decided from this run's measurements, and why (None in other
        modes or before any evaluation)."""
        if self._gate is None or not self.n_evaluated:
            return None
        return self._gate.state(self.history()).describe()

    def _load_transfer(self, transfer: TransferSpec | Sequence[Any] | None) -> tuple[TransferSpec | None, list]:
        """The transfer spec and its prior runs, handed to the strategy when it models them."""
        if transfer is None:
            return None, []
        from bayestune.transfer.runs import load_prior_runs

        spec = transfer if isinstance(transfer, TransferSpec) else TransferSpec(transfer)  # type: ignore[arg-type]  # a list: checked and made a tuple by TransferSpec
        if len(self.objectives) > 1:
            raise BayestuneError(f"transfer from prior runs needs one objective, but got {len(self.objectives)}")
        runs = load_prior_runs(spec.runs, self.space, self.objectives[0])
        if spec.mode == "auto":
            from bayestune.transfer.gate import DesignGate

            self._gate = DesignGate(self.space, runs, spec.gate_top(self.design.size), self.design.size)
        if spec.mode != "design":
            use = getattr(self.strategy, "use_transfer", None)
            if use is None:
                raise BayestuneError(
                    f"strategy {getattr(self.strategy, 'name', self.strategy)!r} cannot use a "
                    "transfer model; use transfer mode 'design' (a warm-start design only)"
                )
            use(runs)
        return spec, runs

    # ---- construction from a scenario --------------------------------------------------
    @classmethod
    def from_scenario(
        cls,
        scenario: Scenario,
        *,
        journal: TrialJournal | None = None,
        resume: bool = False,
        strategy: str | None = None,
        seed: int | None = None,
    ) -> Optimizer:
        """The optimizer ``scenario`` describes; ``strategy`` and ``seed`` override it.

        Resuming, what is not overridden continues as the journal's run started, then falls
        back to the scenario.
        """
        settings = run_meta.Settings(strategy, None, seed, None)
        if resume and journal is not None:
            settings = run_meta.resumed_settings(journal, settings)
        strategy = settings.strategy or scenario.strategy
        options = settings.strategy_options
        if options is None and strategy == scenario.strategy:
            options = scenario.strategy_options
        return cls(
            scenario.space,
            objectives=scenario.objectives,
            strategy=strategy,
            strategy_options=options,
            design=settings.design or scenario.design,
            seed=scenario.seed if settings.seed is None else settings.seed,
            journal=journal,
            resume=resume,
            feasible_output=scenario.feasible_output,
            output_constraints=scenario.output_constraints,
            transfer=scenario.transfer.resolved(scenario.base_dir) if scenario.transfer else None,
        )

    def _load_journal(self) -> None:
        lost = self.journal.abandon_pending()
        for trial in self.journal.trials():
            if trial.status is TrialStatus.PENDING or trial.failure_kind == FailureKind.LOST:
                continue
            config, x, key = self._validated(trial)
            self._absorb(replace(trial, config=config), x, key)
        for trial in lost:
            config, _, key = self._validated(trial)
            if key not in self._memory.seen:
                self._requeue.append(config)
        if lost:
            logger.info("resuming: %d evaluation(s) lost in flight will be re-run", len(lost))

    def _validated(self, trial: Trial) -> tuple[dict[str, Any], np.ndarray, bytes]:
        """A journaled trial's canonical configuration, row and key; BayestuneError if it does not fit."""
        try:
            config = self.space.validate_config(trial.config)
        except SpaceError as exc:
            raise BayestuneError(f"journal trial {trial.trial_id} does not fit this space: {exc}") from None
        x = self.space.to_matrix([config])[0]
        return config, x, self.space.row_keys(x.reshape(1, -1))[0]

    # ---- state -------------------------------------------------------------------------
    @property
    def trials(self) -> list[Trial]:
        return list(self._memory.trials)

    @property
    def n_evaluated(self) -> int:
        """Finished evaluations (failures included): what the budget counts."""
        return len(self._memory.trials)

    @property
    def n_failed(self) -> int:
        return sum(1 for t in self._memory.trials if not t.feasible)

    @property
    def n_pending(self) -> int:
        return self._memory.n_pending

    @property
    def best(self) -> Trial | None:
        """Best feasible trial on the first objective."""
        feasible = [t for t in self._memory.trials if t.feasible]
        if not feasible:
            return None
        obj = self.objectives[0]
        sign = 1.0 if obj.minimize else -1.0
        return min(feasible, key=lambda t: sign * t.values[obj.name])

    def history(self) -> History:
        return self._memory.history()

    # ---- ask -------------------------------------------------------------------------
    def ask(self, n: int = 1) -> list[dict[str, Any]]:
        """``n`` distinct configurations to evaluate next (fewer only if the space is exhausted).

        Each is journaled as pending before it is returned.
        """
        if n < 1:
            raise BayestuneError(f"ask(n) needs n >= 1, but got n={n}")
        out: list[_Proposal] = []
        while self._requeue and len(out) < n:
            config = self._requeue.pop(0)
            out.append((config, self.space.to_matrix([config])[0], Origin.RERUN))
        if len(out) < n:
            out.extend(self._ask_new(n - len(out)))
        return [self._mark_pending(config, row, origin) for config, row, origin in out]

    def _ask_new(self, n: int) -> list[_Proposal]:
        """New proposals: each row is converted to its configuration once and travels with it."""
        out: list[_Proposal] = []
        if not self._design_started:
            self._design_started = True
            if self.design.include_default and self.n_evaluated == 0:
                default = self.space.default_config()
                X = self.space.to_matrix([default])
                if not self.space.is_feasible(X)[0]:
                    broken = [c.expression for c in self.space.constraints if not c.evaluate(self.space.columns(X))[0]]
                    logger.warning(
                        "the default configuration %s breaks the known constraint(s) %s: not evaluated", default, broken
                    )
                elif self.space.row_keys(X)[0] not in self._memory.seen:
                    out.append((default, X[0], Origin.DEFAULT))
            planned = self.design.size - len(out) - self.n_evaluated - self.n_pending
            if planned > 0:  # the whole design at once, so LHS/maximin can spread it
                rows = self._warm_start(planned, out)
                rows.extend(
                    initial_design(
                        self.space, planned - len(rows), self.rng, self._history_with(out, rows), self.design.method
                    )
                )
                self._design_rows = list(rows)
        while len(out) < n and self._in_design_phase(len(out)):
            history = self._history_with(out)
            row = self._gate.next_row(history) if self._gate is not None else None
            while self._design_rows and row is None:
                candidate = self._design_rows.pop(0)
                if self.space.row_keys(candidate.reshape(1, -1))[0] not in history.seen:
                    row = candidate
            if row is None:  # replacing a failed design point
                fresh = initial_design(self.space, 1, self.rng, history, self.design.method)
                if not len(fresh):
                    break
                row = fresh[0]
            out.append((self.space.to_config(row), row, Origin.INITIAL))
        if len(out) < n:
            history = self._history_with(out)
            proposed = np.asarray(self.strategy.suggest(history, n - len(out))).reshape(-1, self.space.width)
            for row, key in zip(proposed, self.space.row_keys(proposed)):
                if key in history.seen:
                    raise BayestuneError(f"strategy {self.strategy.name!r} proposed an already evaluated configuration")
                history.seen.add(key)
                out.append((self.space.to_config(row), row, Origin.SUGGESTED))
        return out

    def _in_design_phase(self, extra: int) -> bool:
        """The design lasts ``size`` evaluations; failed design points are replaced until it
        holds ``MIN_FEASIBLE_DESIGN`` feasible observations, the least a surrogate can be fitted
        to. Replacing more would spend evaluations at the random failure rate, which is what
        the feasibility model exists to beat (BaCO keeps sampling until one is feasible)."""
        n_done = self.n_evaluated + self.n_pending + extra
        return n_done < self.design.size or self._memory.n_feasible < MIN_FEASIBLE_DESIGN

    def _warm_start(self, planned: int, out: list[_Proposal]) -> list[np.ndarray]:
        """The prior runs' best configurations that open the design (none without a transfer)."""
        if self.transfer is None:
            return []
        from bayestune.transfer.design import warm_start_rows

        n = min(planned, self.transfer.design_top(self.design.size))
        return list(warm_start_rows(self.space, self._prior_runs, n, self._history_with(out))) if n else []

    def _history_with(self, extra: list[_Proposal], rows: Sequence[np.ndarray] = ()) -> History:
        history = self.history()
        if rows:
            history.pending = np.concatenate([history.pending, np.array(rows)])
            history.seen.update(self.space.row_keys(np.array(rows)))
        if extra:
            X = np.array([row for _, row, _ in extra])
            history.pending = np.concatenate([history.pending, X])
            history.seen.update(self.space.row_keys(X))
        return history

    def _mark_pending(self, config: dict[str, Any], row: np.ndarray, origin: str) -> dict[str, Any]:
        key = self.space.row_keys(row.reshape(1, -1))[0]
        self._memory.add_pending(key, self.journal.start(config, origin=origin), row)
        return dict(config)

    # ---- tell ------------------------------------------------------------------------
    def tell(self, config: Mapping[str, Any], result: Any) -> Trial:
        """Record the outcome of evaluating ``config`` (values, a Result, or a failure)."""
        canonical = self.space.validate_config(config)
        x = self.space.to_matrix([canonical])[0]
        key = self.space.row_keys(x.reshape(1, -1))[0]
        res = self._check_outputs(coerce_result(result, [o.name for o in self.objectives], self.feasible_output))
        trial_id = self._memory.take_pending(key)
        if trial_id is not None:
            trial = self.journal.finish(trial_id, res)
        else:
            trial = self.journal.record(canonical, res, origin=Origin.MANUAL)
        trial = replace(trial, config=canonical)
        self._absorb(trial, x, key)
        return trial

    def _check_outputs(self, res: Result) -> Result:
        """A measured result that breaks an output constraint becomes infeasible (values kept)."""
        if res.status is not TrialStatus.OK or not self.output_constraints:
            return res
        for c in self.output_constraints:
            try:
                ok = c.holds(res.values)
            except KeyError as exc:
                return Result.failure(
                    f"output constraint {c.expression!r} needs output(s) {exc.args[0]}, "
                    f"but the black box reported {sorted(res.values)}",
                    FailureKind.PARSE,
                )
            if not ok:
                return replace(res, feasible=False, kind=FailureKind.OUTPUT_CONSTRAINT)  # repeats, timings kept
        return res

    def _absorb(self, trial: Trial, x: np.ndarray, key: bytes) -> None:
        """Add a finished trial (canonical config, its row ``x`` and key) to what strategies see."""
        self._memory.add_finished(trial, x, key)

    # ---- the whole loop --------------------------------------------------------------
    def optimize(
        self,
        blackbox: Callable[[dict[str, Any]], Any],
        budget: int,
        *,
        callback: Callable[[Trial], None] | None = None,
        time_limit: float | None = None,
        stop_after_failures: int | None = DEFAULT_STOP_AFTER_FAILURES,
    ) -> Trial | None:
        """Evaluate ``blackbox`` in this process until ``budget`` evaluations are journaled (or,
        with ``time_limit``, until that many wall-clock seconds have passed); return the best trial.

        The serial :func:`bayestune.execution.run`: exceptions raised by the black box (and
        ``sys.exit()``) are recorded as failed evaluations, Ctrl-C stops the run. When the first
        ``stop_after_failures`` evaluations all fail (a broken black box), the run stops with
        :class:`~bayestune.execution.AllFailedError` quoting the most common error; None or 0
        spends the whole budget whatever happens.
        """
        return run_loop(
            self, blackbox, budget, callback=callback, time_limit=time_limit, stop_after_failures=stop_after_failures
        )
