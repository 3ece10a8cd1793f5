"""One call runs a scenario: :func:`tune` is what ``bayestune optimize`` does, so a Python user
gets the same run as a CLI user (the journal's records, the measurement section, the early-abort
incumbent on resume, the top-k re-measurement).

The run goes through separate stages, in this order:

1. build the scenario's evaluator (before the journal: a setup error leaves no file behind);
2. open and lock the journal (:func:`bayestune.run.open_run_journal`: resume, or refuse to
   clobber an earlier run); on resume, check the space and take the budget back from it;
3. build the optimizer, seed the early-abort incumbent, record the scenario and its measurement:
   :func:`_start`;
4. run the evaluation loop (this process, local workers or Dask): :func:`_search`;
5. re-measure the best ``k`` when the scenario's measurement section asks for it: :func:`_remeasure`.

Nothing here prints (but the progress bar of ``progress=True``, from :mod:`bayestune.console`):
notes meant for the user go to ``announce`` (the CLI echoes them on stderr; by default they are
logged), and :class:`TuneResult` says how the run ended, for the caller to print.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from bayestune import run as run_meta
from bayestune.console import run_with_progress, sigterm_as_interrupt
from bayestune.evaluators.base import Evaluator
from bayestune.evaluators.leftovers import marking
from bayestune.evaluators.staged import StagedEvaluator
from bayestune.exceptions import BayestuneError
from bayestune.execution import AllFailedError
from bayestune.execution.loop import DEFAULT_STOP_AFTER_FAILURES
from bayestune.execution.pipeline_schedule import check_build_workers, check_devices
from bayestune.measurement.build import for_remeasurement, make_evaluator, measuring_part, seed_incumbent, unwrapped
from bayestune.measurement.early_stop import savings_note
from bayestune.measurement.echo_check import Watched, echo_check_for
from bayestune.measurement.policy import MeasuredEvaluator
from bayestune.measurement.racing import RacingEvaluator
from bayestune.measurement.remeasure import (
    Remeasured,
    confirmation_done,
    evaluated_trial,
    makeup_rounds,
    remeasure_top,
)
from bayestune.measurement_spec import MeasurementSpec
from bayestune.optimizer import Optimizer
from bayestune.scenario import Scenario, load_scenario
from bayestune.storage import TrialJournal
from bayestune.trial import Trial, TrialStatus

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Execution:
    """Where the evaluations run. ``None`` takes the scenario's value (``batch``, ``time_limit``).

    ``workers``: evaluations at once: local worker processes (1: this process); with ``dask``,
    tasks in flight (default: the cluster's worker threads). ``dask``: a scheduler address or a
    ``distributed.Client``. ``batch``: lock-step batches of this many configurations instead of
    refilling each worker as soon as it is free. ``stop_after_failures``: stop when this many
    evaluations in a row failed and none succeeded yet (0 or None: never). ``time_limit``:
    wall-clock seconds after which no new evaluation starts. ``build_workers`` / ``devices``: for a
    black box with a build step, builds at once (default: the machine's cores) and the devices
    that each measure one configuration at a time (default ``["cpu"]``; see docs/faster.md).
    """

    workers: int | None = None
    dask: Any = None
    batch: int | None = None
    stop_after_failures: int | None = DEFAULT_STOP_AFTER_FAILURES
    time_limit: float | None = None
    build_workers: int | None = None
    devices: tuple[str, ...] | list[str] | None = None

    def __post_init__(self) -> None:
        if self.build_workers is not None:
            check_build_workers(self.build_workers)
        if self.devices is not None:
            check_devices(self.devices)
        if self.workers is not None and (
            isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1
        ):
            raise BayestuneError(f"execution workers must be a positive integer, but got {self.workers!r}")

    @classmethod
    def of(cls, value: Execution | Mapping[str, Any] | None) -> Execution:
        """``value`` as a record: a mapping's keys are the fields (an unknown key is an error naming it)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise BayestuneError(f"execution must be an Execution or a mapping of its fields, but got {value!r}")
        allowed = [f.name for f in fields(cls)]
        unknown = sorted(str(k) for k in value if k not in allowed)
        if unknown:
            raise BayestuneError(f"execution: unknown key(s) {unknown}; allowed: {allowed}")
        return cls(**value)

    @property
    def backend(self) -> str:
        return "dask" if self.dask else "pool" if (self.workers or 1) > 1 else "serial"

    def loop_options(self, scenario: Scenario) -> dict[str, Any]:
        """The keyword arguments of :func:`bayestune.execution.run` for ``scenario``."""
        staged = scenario.blackbox is not None and scenario.blackbox.build is not None
        if not staged and (self.build_workers is not None or self.devices is not None):
            raise BayestuneError(
                "build_workers and devices need a black box with a build step (blackbox.build); "
                "without one, use workers"
            )
        if staged and self.workers is not None and self.dask is None:
            raise BayestuneError(
                "a black box with a build step runs builds in parallel and measures one at a time per device: "
                "use build_workers and devices instead of workers"
            )
        backend = "pipeline" if staged else self.backend
        if staged:
            return {
                "backend": backend,
                "dask_client": self.dask,
                "build_workers": self.build_workers,
                "devices": self.devices,
                "stop_after_failures": self.stop_after_failures,
                "time_limit": self.time_limit if self.time_limit is not None else scenario.time_limit,
            }
        return {
            "backend": backend,
            "workers": self.workers if backend != "serial" else None,
            "dask_client": self.dask,
            "batch": self.batch if self.batch is not None else scenario.batch,
            "stop_after_failures": self.stop_after_failures,
            "time_limit": self.time_limit if self.time_limit is not None else scenario.time_limit,
        }


@dataclass(frozen=True)
class TuneResult:
    """How a run ended; the journal at ``journal_path`` holds every evaluation.

    ``interrupted``: stopped by Ctrl-C or SIGTERM (the journal is intact: ``resume=True``
    continues it). ``stopped_early``: why the run stopped before its budget because every
    evaluation failed (a broken black box), else None. ``remeasured``: the confirmation's
    outcome: the winner, the baseline and the speedup (None when it was off or skipped, or
    nothing was feasible);
    ``remeasure_interrupted``: it was cut short (the rounds done are in the journal, resuming
    finishes the others).
    """

    optimizer: Optimizer
    scenario: Scenario
    journal_path: Path
    budget: int | None
    resumed: bool
    interrupted: bool = False
    stopped_early: str | None = None
    remeasured: Remeasured | None = None
    remeasure_interrupted: bool = False
    peer_csv: Path | None = None  # the sample CSV a HyperMapper/BaCO scenario writes, where its peer writes it

    @property
    def best(self) -> Trial | None:
        """The run's winner: the confirmed one when the confirmation declared one, else the best
        feasible trial of the search on the first objective (:attr:`search_best`)."""
        winner = self.remeasured.winner if self.remeasured is not None else None
        if winner is not None:
            return next((t for t in self.optimizer.trials if t.trial_id == winner.trial_id), self.search_best)
        return self.search_best

    @property
    def search_best(self) -> Trial | None:
        """The best single measurement of the search (biased towards luck on a noisy black box)."""
        return self.optimizer.best


def tune(
    scenario: Scenario | str | os.PathLike[str],
    journal_path: str | os.PathLike[str] | None = None,
    *,
    budget: int | None = None,
    resume: bool = False,
    force: bool = False,
    strategy: str | None = None,
    seed: int | None = None,
    execution: Execution | Mapping[str, Any] | None = None,
    progress: bool = False,
    announce: Callable[[str], None] | None = None,
    confirm: bool = True,
) -> TuneResult:
    """Run ``scenario`` (a :class:`~bayestune.scenario.Scenario` or a scenario file) to its end,
    journaled in ``journal_path`` (default: :func:`default_journal_path`).

    ``budget``: evaluations in total (default: the scenario's; resuming, the journal's).
    ``resume``: continue the run the journal holds; ``force``: delete it and start over (without
    either, a journal with trials is refused). ``strategy``/``seed`` override the scenario's.
    ``execution``: where evaluations run (:class:`Execution`). ``progress``: a progress bar on
    stderr. ``announce``: called with each note for the user (resuming, re-measuring ...).
    ``confirm``: end a single-objective run with its confirmation (:func:`_confirm`; the
    scenario's ``measurement`` section sizes it).
    """
    if resume and force:
        raise BayestuneError(
            "resume and force exclude each other: resume continues the journal's run, force deletes it"
        )
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise BayestuneError(f"budget must be a positive integer (or None: the scenario's), but got {budget!r}")
    scenario = _as_scenario(scenario)
    announce = announce or logger.info
    path = Path(journal_path) if journal_path is not None else default_journal_path(scenario)
    loop_options = Execution.of(execution).loop_options(scenario)

    evaluator = make_evaluator(scenario)  # before the journal: a setup error leaves no file behind
    with evaluator:
        journal, resumed, note = run_meta.open_run_journal(path, resume=resume, force=force)
        if note:
            announce(note)
        with journal, marking(journal, path, announce):  # a killed run's leftover processes stopped first
            if resumed:
                run_meta.check_space(journal, scenario.space)
            budget = budget or (run_meta.stored_budget(journal) if resumed else None) or scenario.budget
            if budget is None and loop_options["time_limit"] is None:
                raise BayestuneError(
                    "the scenario's budget is null (no evaluation limit) and no time limit is "
                    "set: give a budget or a time limit"
                )
            optimizer = _start(scenario, journal, evaluator, resumed=resumed, strategy=strategy, seed=seed)
            note = optimizer.transfer_note()
            if note:
                announce(note)
            if resumed:
                announce(f"resuming {path}: {optimizer.n_evaluated} of {budget or 'unlimited'} evaluations done")
            measuring = measuring_part(evaluator)
            if isinstance(measuring, RacingEvaluator):
                announce(measuring.note())
            result = _search(
                TuneResult(optimizer, scenario, path, budget, resumed), evaluator, loop_options, progress=progress
            )
            if isinstance(measuring, RacingEvaluator) and measuring.configurations:
                announce(measuring.summary())
            if isinstance(measuring, MeasuredEvaluator) and measuring.policy.early_abort:
                saved = savings_note(optimizer.trials, measuring.policy.most_runs)
                if saved:
                    announce(saved)
            decision = optimizer.transfer_decision()
            if decision:
                announce(decision)
            if result.interrupted or result.stopped_early is not None:
                return _peer_csv(result)
            return _peer_csv(_confirm(result, journal, evaluator, announce) if confirm else result)


def default_journal_path(scenario: Scenario) -> Path:
    """The scenario's ``journal`` (relative to its file), else ``<file stem>.journal.db`` in the
    current directory (``<name>.journal.db`` for a scenario built in Python)."""
    if scenario.journal:
        return scenario.base_dir / Path(scenario.journal).expanduser()
    from_file = scenario.source and not scenario.source.startswith("<")
    return Path.cwd() / f"{Path(scenario.source).stem if from_file else scenario.name}.journal.db"


def _as_scenario(scenario: Any) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, (str, os.PathLike)):
        return load_scenario(scenario)
    raise BayestuneError(f"scenario must be a Scenario or the path of a scenario file, but got {scenario!r}")


def _start(
    scenario: Scenario,
    journal: TrialJournal,
    evaluator: Evaluator,
    *,
    resumed: bool,
    strategy: str | None,
    seed: int | None,
) -> Optimizer:
    """The optimizer of the run; a new run's scenario and measurement section recorded in its journal."""
    optimizer = Optimizer.from_scenario(scenario, journal=journal, resume=resumed, strategy=strategy, seed=seed)
    best = optimizer.best
    name = optimizer.objectives[0].name
    seed_incumbent(
        evaluator,
        best.values.get(name) if best is not None else None,
        [
            t.repeats.get(name) or (t.values[name],)
            for t in optimizer.trials
            if t.status is TrialStatus.OK and name in t.values
        ],
    )
    if not resumed:
        run_meta.record_scenario(journal, scenario)
        run_meta.record_measurement(journal, scenario.measurement)
        if scenario.peer_samples is not None:  # HyperMapper/BaCO's resume_optimization: its CSV told first
            for config, outcome in scenario.peer_samples.resumed(scenario.space.parameters):
                optimizer.tell(config, outcome)
    return optimizer


def _search(result: TuneResult, evaluator: Evaluator, loop_options: dict[str, Any], *, progress: bool) -> TuneResult:
    """The evaluation loop up to the budget (or time limit); Ctrl-C/SIGTERM and an all-failed
    start end it early, and the result says so."""
    check = echo_check_for(result.scenario)  # an echo of the arguments is no measurement: stop
    optimizer = result.optimizer if check is None else Watched(result.optimizer, check)
    try:
        interrupted = run_with_progress(
            optimizer, evaluator, result.budget, result.scenario, loop_options, show_progress=progress
        )
    except AllFailedError as exc:
        return replace(result, stopped_early=str(exc))
    return replace(result, interrupted=True) if interrupted else result


def _peer_csv(result: TuneResult) -> TuneResult:
    """A HyperMapper/BaCO scenario's run leaves its sample CSV where the peer would (its
    ``output_data_file``, else ``<application_name>_output_samples.csv``)."""
    samples = result.scenario.peer_samples
    if samples is None:
        return result
    return replace(result, peer_csv=samples.write(result.optimizer.trials))


def _confirm(
    result: TuneResult, journal: TrialJournal, evaluator: Evaluator, announce: Callable[[str], None]
) -> TuneResult:
    """The confirmation of a finished single-objective search: the best few and the baseline
    re-measured in interleaved rounds (:mod:`bayestune.measurement.remeasure`), so the winner a
    run reports, its interval and its speedup over the baseline are what the machine delivers,
    not the luckiest single sample. Nothing to do when the scenario turns it off, for several
    objectives, without a feasible trial, or for a deterministic black box (a replay)."""
    scenario = result.scenario
    spec = scenario.measurement or MeasurementSpec()
    top, rounds = spec.confirmation
    if result.best is None or not top or len(scenario.objectives) > 1:
        return result
    if getattr(unwrapped(evaluator), "deterministic", False):
        announce("no confirmation: the black box is deterministic (a replay), so re-measuring adds nothing")
        return result
    baseline, why = _baseline(spec, journal, scenario)
    objective = scenario.objectives[0]
    ranked = journal.best(objective.name, minimize=objective.minimize, k=top)
    count = len({t.trial_id for t in ranked} | ({baseline.trial_id} if baseline is not None else set()))
    makeup = makeup_rounds(rounds, spec.policy.max_failure_share)
    ids = list(dict.fromkeys([t.trial_id for t in ranked] + ([baseline.trial_id] if baseline is not None else [])))
    if confirmation_done(journal, ids, rounds):  # a finished run resumed: its confirmation stands
        announce(f"confirmed already: the best {top}{why} were re-measured in {rounds} interleaved rounds")
    else:
        announce(
            f"confirming: re-measuring the best {top}{why} in {rounds} interleaved rounds "
            f"({count * rounds} evaluations{f', {makeup} more round(s) at most if runs fail' if makeup else ''}; "
            "`measurement: {remeasure_top: 0}` or --no-confirm turns it off)"
        )
    confirming = for_remeasurement(evaluator)
    try:
        with sigterm_as_interrupt():
            outcome = remeasure_top(
                journal,
                confirming,
                scenario.objectives[0],
                k=top,
                rounds=rounds,
                statistic=spec.policy.statistic,
                confidence=spec.policy.confidence,
                space=scenario.space,
                baseline=baseline,
                max_failure_share=spec.policy.max_failure_share,
            )
    except KeyboardInterrupt:
        return replace(result, remeasure_interrupted=True)
    finally:
        if isinstance(confirming, StagedEvaluator):
            confirming.drop_artefacts()
    run_meta.record_confirmation(journal, outcome)
    return replace(result, remeasured=outcome)


def _baseline(spec: MeasurementSpec, journal: TrialJournal, scenario: Scenario) -> tuple[Trial | None, str]:
    """The baseline's evaluated trial and how the announcement names it ("" without one)."""
    if spec.baseline is None:
        return None, ""
    named = "the default configuration" if spec.baseline == "default" else "the baseline"
    config = dict(spec.baseline) if isinstance(spec.baseline, Mapping) else scenario.space.default_config()
    try:
        trial = evaluated_trial(journal, config, scenario.space)
    except BayestuneError as exc:
        return None, f" (no baseline: {named} is not a configuration of the space: {exc})"
    if trial is None:
        return None, f" (no baseline: {named} was not evaluated feasibly in this run)"
    return trial, f" and {named} (trial {trial.trial_id})"
