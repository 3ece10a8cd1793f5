"""What a journal says about its run, and the one place that writes it and reads it back.

Every run writes its description (objectives, space, strategy and options, seed, initial
design, budget) into the journal's metadata, whether started from Python or the CLI, so a
resumed run continues as it started and a report can read a journal alone. Resuming from
Python (``Optimizer(..., journal=j, resume=True)``) and from the CLI (``--resume``) take the
same defaults from here. Journal files of a run are opened (never clobbered) here too.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from bayestune.exceptions import BayestuneError, JournalError
from bayestune.jsonable import to_jsonable
from bayestune.measurement_spec import MeasurementSpec
from bayestune.objectives import Objective, OutputConstraint, parse_output_constraints
from bayestune.scenario.records import DesignSpec, Scenario
from bayestune.space.inference import infer_space
from bayestune.space.space import Space
from bayestune.space.spec import space_from_spec
from bayestune.storage import Journal, TrialJournal
from bayestune.storage.base import META_OBJECTIVES  # the storage layer reads it too: defined there, once
from bayestune.storage.lock import RunLock, describe_owner
from bayestune.storage.sqlite_file import what_it_is
from bayestune.trial import FailureKind, Trial, TrialStatus

logger = logging.getLogger(__name__)

#: Metadata keys every run writes (any other key is allowed too).
META_SCENARIO = "scenario"  # {"name", "source", "parameters"} of a run started from a scenario
# META_OBJECTIVES (from storage.base): [{"name": "runtime", "minimize": true}, ...]
META_SPACE = "space"  # Space.to_spec(), read by plots and reports
META_STRATEGY = "strategy"
META_STRATEGY_OPTIONS = "strategy_options"
META_SEED = "seed"
META_BUDGET = "budget"
META_DESIGN = "design"  # {"method", "size", "include_default"}
META_OUTPUT_CONSTRAINTS = "output_constraints"  # ["lut_util <= 100", ...]
META_MEASUREMENT = "measurement"  # the scenario's measurement section (MeasurementSpec.to_dict())
META_CONFIRMATION = "confirmation"  # what the confirmation declared: winner, baseline, speedup
#: trial ids told without running the black box, not counted in the run's evaluations (TVM: a
#: schedule refused before building, or the same program as a measured trial)
META_NOT_RUN = "not_run"

#: Files SQLite keeps next to a journal; a journal deleted without them would come back half-written.
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


# ---- writing -------------------------------------------------------------------------------
def objectives_meta(objectives: Sequence[Objective]) -> list[dict[str, Any]]:
    return [{"name": o.name, "minimize": o.minimize} for o in objectives]


def describe_run(
    journal: TrialJournal,
    *,
    objectives: Sequence[Objective],
    space: Space,
    strategy: str,
    strategy_options: Mapping[str, Any] | None,
    seed: int | None,
    design: DesignSpec,
    output_constraints: Sequence[OutputConstraint] = (),
) -> None:
    """Write what a new run is into ``journal`` (a value that cannot be stored is skipped and logged)."""
    entries = {
        META_OUTPUT_CONSTRAINTS: [c.expression for c in output_constraints],
        META_OBJECTIVES: objectives_meta(objectives),
        META_STRATEGY: strategy,
        META_STRATEGY_OPTIONS: dict(strategy_options or {}),
        META_SEED: seed,
        META_DESIGN: {"method": design.method, "size": design.size, "include_default": design.include_default},
    }
    try:
        entries[META_SPACE] = space.to_spec()
    except BayestuneError as exc:  # e.g. a space with a non-serialisable value: reports infer it
        logger.debug("space not stored in the journal: %s", exc)
    for key, value in entries.items():
        try:
            journal.set_meta(key, value)
        except JournalError as exc:
            logger.debug("%s not stored in the journal: %s", key, exc)


def record_budget(journal: TrialJournal, budget: int) -> None:
    """The budget the run is heading for, the default of a resumed run."""
    journal.set_meta(META_BUDGET, int(budget))


def record_scenario(journal: TrialJournal, scenario: Scenario) -> None:
    """Where a run started from a scenario file came from."""
    journal.set_meta(
        META_SCENARIO, {"name": scenario.name, "source": scenario.source, "parameters": list(scenario.space.names)}
    )


def record_measurement(journal: TrialJournal, measurement: MeasurementSpec | None) -> None:
    """Keep the scenario's measurement section with the run, so `show` and reports know its statistic."""
    if measurement is not None:
        journal.set_meta(META_MEASUREMENT, measurement.to_dict())


def record_confirmation(journal: TrialJournal, outcome: Any) -> None:
    """Keep what the confirmation declared (a ``Remeasured``) with the run: the winner's trial and
    value with its interval, the baseline's, and the speedup with its interval. The rounds
    themselves are the journal's re-measurements; this names which of them is the baseline."""

    def number(x: float) -> float | None:  # JSON has no infinity: an unknown bound is null
        return float(x) if math.isfinite(x) else None

    def estimate(e: Any) -> dict[str, Any] | None:
        return (
            None
            if e is None
            else {
                "trial_id": e.trial_id,
                "value": number(e.value),
                "low": number(e.low),
                "high": number(e.high),
                "rounds": len(e.samples),
            }
        )

    journal.set_meta(
        META_CONFIRMATION,
        to_jsonable(
            {
                "objective": outcome.objective,
                "statistic": outcome.statistic,
                "confidence": outcome.confidence,
                "rounds": outcome.rounds,
                "winner": estimate(outcome.winner),
                "baseline": estimate(outcome.baseline),
                "speedup": None
                if outcome.speedup is None
                else dict(zip(("value", "low", "high"), map(number, outcome.speedup))),
            }
        ),
    )


def stored_confirmation(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the run's confirmation declared (see :func:`record_confirmation`), or None."""
    value = meta.get(META_CONFIRMATION)
    return dict(value) if isinstance(value, Mapping) else None


def confirmed_winner(meta: Mapping[str, Any], objective: str) -> dict[str, Any] | None:
    """The confirmed winner on ``objective`` (``trial_id``, ``value``, ``low``, ``high``,
    ``rounds``), or None when the run was not confirmed on it."""
    confirmation = stored_confirmation(meta)
    if confirmation is None or confirmation.get("objective") != objective:
        return None
    winner = confirmation.get("winner")
    return dict(winner) if isinstance(winner, Mapping) and isinstance(winner.get("trial_id"), int) else None


# ---- resuming ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    """How a run is set up; ``None`` where the caller (or the journal) says nothing."""

    strategy: Any = None
    strategy_options: Mapping[str, Any] | None = None
    seed: int | None = None
    design: DesignSpec | None = None


def resumed_settings(journal: TrialJournal, given: Settings) -> Settings:
    """``given`` completed from the journal: what the caller leaves open continues as the run started.

    Strategy options follow the stored strategy only: naming another strategy drops them.
    """
    stored_strategy = journal.get_meta(META_STRATEGY)
    strategy = given.strategy if given.strategy is not None else stored_strategy
    options = given.strategy_options
    name = strategy if isinstance(strategy, str) or strategy is None else getattr(strategy, "name", None)
    if options is None and name == stored_strategy:
        options = journal.get_meta(META_STRATEGY_OPTIONS)
    design = given.design
    stored_design = journal.get_meta(META_DESIGN)
    if design is None and isinstance(stored_design, Mapping):
        try:
            design = DesignSpec(**stored_design)
        except (TypeError, BayestuneError) as exc:
            raise JournalError(
                f"the journal's stored initial design {dict(stored_design)!r:.120} is damaged: {exc}"
            ) from None
    seed = given.seed if given.seed is not None else journal.get_meta(META_SEED)
    return Settings(strategy, options or None, seed, design)


def check_objectives(journal: TrialJournal, objectives: Sequence[Objective]) -> None:
    """JournalError when a resumed run optimises other objectives than the journal's."""
    stored = journal.get_meta(META_OBJECTIVES)
    if stored is not None and stored != objectives_meta(objectives):
        raise JournalError(
            f"journal {getattr(journal, 'path', '')!r} was written for objectives {stored}, "
            f"but this run has {objectives_meta(objectives)}; use another journal"
        )


def check_space(journal: TrialJournal, space: Space) -> None:
    """JournalError naming what differs when a resumed run's search space is not the journal's."""
    stored = journal.get_meta(META_SPACE)
    if not isinstance(stored, Mapping):
        return
    current = json.loads(json.dumps(to_jsonable(space.to_spec())))
    if stored == current:
        return
    old = {p.get("name"): p for p in stored.get("parameters", []) if isinstance(p, Mapping)}
    new = {p.get("name"): p for p in current.get("parameters", []) if isinstance(p, Mapping)}
    parts = []
    if added := [n for n in new if n not in old]:
        parts.append(f"added {added}")
    if removed := [n for n in old if n not in new]:
        parts.append(f"removed {removed}")
    for name in (n for n in new if n in old and new[n] != old[n]):
        parts.append(f"changed {name!r}: {_short(old[name])} -> {_short(new[name])}")
    if stored.get("constraints") != current.get("constraints"):
        parts.append(f"constraints {stored.get('constraints')} -> {current.get('constraints')}")
    raise JournalError(
        f"journal {getattr(journal, 'path', '')!r} was recorded with a different search space ("
        f"{'; '.join(parts) or 'parameter order'}); resume with the scenario the run started with, "
        "or start a new journal"
    )


def _short(spec: Mapping[str, Any]) -> str:
    text = ", ".join(f"{k}={v}" for k, v in spec.items() if k != "name")
    return text if len(text) <= 120 else text[:117] + "..."


def stored_budget(journal: TrialJournal) -> int | None:
    return journal.get_meta(META_BUDGET)


# ---- reading -------------------------------------------------------------------------------
def stored_objectives(journal: TrialJournal, trials: Sequence[Trial]) -> list[Objective]:
    """Objectives recorded in the journal, else guessed (minimised) from the first measured trial."""
    stored = journal.get_meta(META_OBJECTIVES)
    if stored:
        return [Objective(str(o["name"]), "minimize" if o.get("minimize", True) else "maximize") for o in stored]
    for t in trials:
        if t.feasible and t.values:
            return [Objective(next(iter(t.values)))]
    return []


def stored_parameters(journal: TrialJournal, trials: Sequence[Trial]) -> list[str]:
    """Parameter names recorded in the journal, else those of the trials' configurations."""
    for key, field in ((META_SCENARIO, "parameters"), (META_SPACE, "parameters")):
        meta = journal.get_meta(key)
        if isinstance(meta, Mapping) and meta.get(field):
            return [str(p) if not isinstance(p, Mapping) else str(p["name"]) for p in meta[field]]
    names: dict[str, None] = {}
    for t in trials:
        names.update(dict.fromkeys(t.config))
    return list(names)


def measured(trials: Sequence[Trial]) -> list[Trial]:
    """Finished trials that say something about the black box (lost ones do not)."""
    return [t for t in trials if t.status.is_finished and t.failure_kind != FailureKind.LOST]


@dataclass
class Run:
    """A finished (or interrupted) run as plots and reports use it."""

    space: Space
    objectives: list[Objective]
    trials: list[Trial]  # finished trials, in evaluation order
    meta: dict[str, Any]

    @property
    def names(self) -> list[str]:
        return [o.name for o in self.objectives]

    def matrix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Raw rows X, objective values Y (NaN where missing) and the feasible flags."""
        X = self.space.to_matrix([t.config for t in self.trials]) if self.trials else np.empty((0, self.space.width))
        Y = np.array([[t.values.get(n, np.nan) for n in self.names] for t in self.trials], dtype=float)
        Y = Y.reshape(len(self.trials), len(self.objectives))
        feasible = np.array([t.feasible for t in self.trials], dtype=bool)
        return X, Y, feasible


def load_run(journal_path: str, *, space: Space | None = None, read_only: bool = False) -> Run:
    """Read a journal: its finished trials, objectives and search space (stored, else inferred).

    ``read_only``: open it without any write (a viewer of a live run; see :meth:`Journal.open`).
    """
    with Journal.open(journal_path, read_only=read_only) as journal:
        return read_run(journal, space=space)


def read_run(journal: TrialJournal, *, space: Space | None = None) -> Run:
    """:func:`load_run` of an open journal."""
    meta = journal.meta()
    raw = measured(journal.trials())
    objectives = stored_objectives(journal, raw)
    if not objectives:
        raise BayestuneError("the journal records no objectives and no measured trial to infer them")
    if space is None:
        space = _stored_space(meta.get(META_SPACE), getattr(journal, "path", ""))
    if space is None:
        space = infer_space([t.config for t in raw])
    trials = [t if t.status is TrialStatus.PENDING else _typed(t, space) for t in raw]
    return Run(space, objectives, trials, meta)


def _stored_space(spec: Any, journal_path: str) -> Any:
    if not isinstance(spec, Mapping):
        return None
    try:
        return space_from_spec(spec["parameters"], spec.get("constraints", ()), source=journal_path)
    except (BayestuneError, KeyError) as exc:
        logger.info("%s: stored space unreadable (%s); inferring it", journal_path, exc)
        return None


def _typed(trial: Trial, space: Space) -> Trial:
    """The trial with its configuration validated (permutation lists back to tuples)."""
    try:
        return replace(trial, config=space.validate_config(trial.config))
    except BayestuneError:
        return trial


def stored_measurement(meta: Mapping[str, Any]) -> MeasurementSpec:
    """The run's measurement section from its journal metadata (defaults when it had none or it is unreadable)."""
    try:
        return MeasurementSpec.from_dict(meta.get(META_MEASUREMENT) or {})
    except (BayestuneError, TypeError):
        return MeasurementSpec()


def stored_output_constraints(journal: TrialJournal) -> tuple[OutputConstraint, ...]:
    """The output constraints the run was started with (none for journals written before they were recorded)."""
    return parse_output_constraints(journal.get_meta(META_OUTPUT_CONSTRAINTS) or [])


def broken_output_constraints(constraints: Sequence[OutputConstraint], trial: Trial) -> list[str]:
    """The ``constraints`` that ``trial``'s measured values break, each with the values it read
    (``"lut_util <= 100 (lut_util=130)"``): why an output-constraint infeasibility is one."""
    out = []
    for c in constraints:
        try:
            holds = c.holds(trial.values)
        except KeyError:
            continue
        if not holds:
            read = ", ".join(f"{n}={trial.values[n]:g}" for n in c.outputs)
            out.append(f"{c.expression} ({read})")
    return out


# ---- journal files -------------------------------------------------------------------------
def open_run_journal(path: str | Path, *, resume: bool, force: bool) -> tuple[Journal, bool, str | None]:
    """The journal for a run, whether it resumes one, and a note for the user (or None).

    Refuses to clobber an earlier run: an existing journal with trials needs ``resume`` (continue
    it) or ``force`` (delete it, with SQLite's side files); a file that is not a journal is never
    touched.
    """
    path = Path(path)
    what = what_it_is(path, creating=True)  # a FIFO is never opened; a link never creates directories
    if what is not None:
        raise JournalError(f"journal {str(path)!r} {what}")
    lock = RunLock.acquire(path)  # before anything else: never resume, delete or append beside a live run
    try:
        journal, resumed, note = _open_locked(path, lock, resume=resume, force=force)
    except BaseException:
        lock.release()
        raise
    if lock.stale_owner is not None:
        stale = f"took over the stale lock of {describe_owner(lock.stale_owner)}, which ended without releasing it"
        note = f"{note}; {stale}" if note else stale
    return journal, resumed, note


def _open_locked(path: Path, lock: RunLock, *, resume: bool, force: bool) -> tuple[Any, bool, str | None]:
    note = None
    if path.exists():
        lock.lock_journal_file()  # before SQLite opens it: a hard link to a live run's journal stops here
        journal = Journal(path, create=False, run_lock=lock)  # JournalError if not a journal: never delete it
        if not force:
            _checked(journal)  # before any write (--force deletes it instead)
        n_rows = len(journal.trials())
        if n_rows and resume:
            journal.checkpoint()  # what the crashed run left in the -wal file now lives in the .db
            return journal, True, None
        journal.run_lock = None  # keep the lock across the close
        journal.close()
        if n_rows and not force:
            raise ExistingRunError(path, n_rows)
        if n_rows:
            delete_journal(path)
            note = f"--force: deleted the earlier run's journal {path}"
    if resume:
        note = f"nothing to resume in {path}; starting a new run"
    path.parent.mkdir(parents=True, exist_ok=True)
    journal = Journal(path, run_lock=lock)
    try:
        lock.lock_journal_file()
    except BaseException:
        journal.run_lock = None
        journal.close()
        raise
    return journal, False, note


def _checked(journal: Journal) -> None:
    """``journal`` if SQLite finds it sound, else closed (the lock kept) and JournalError."""
    try:
        journal.check_integrity()
    except JournalError:
        journal.run_lock = None
        journal.close()
        raise


class ExistingRunError(JournalError):
    """A new run asked for on a journal that holds one; the message names the Python arguments
    (``resume=True`` / ``force=True``), :meth:`naming` the command line's flags."""

    def __init__(self, path: str | Path, n_rows: int, resume: str = "resume=True", force: str = "force=True") -> None:
        self.path, self.n_rows = path, n_rows
        super().__init__(
            f"journal {str(path)!r} already holds {n_rows} trial(s) of an earlier run; "
            f"continue it with {resume} or start over with {force} (deletes it)"
        )

    def naming(self, resume: str, force: str) -> ExistingRunError:
        return ExistingRunError(self.path, self.n_rows, resume, force)


def delete_journal(path: str | Path) -> None:
    """Remove a journal file and SQLite's side files."""
    for suffix in ("", *SQLITE_SIDE_FILES):
        Path(str(path) + suffix).unlink(missing_ok=True)
