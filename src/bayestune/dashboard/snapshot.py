"""What the dashboard shows, as one JSON-ready dict read from a journal that may still be written.

Read only: the journal is opened with ``Journal.open(path, read_only=True)`` for each snapshot
(SQLite refuses any write on that connection) and the run's lock file is only read, never
taken, so a dashboard can neither disturb nor block the run it watches.

The run's state comes from its lock file (:mod:`bayestune.storage.lock`): a live owner means
*running*, an owner that died means *stopped*; without an owner the run is *finished* once its
budget is spent (or when it recorded none), else *stopped*, and pending rows with no lock
at all mean a run driven from Python (which takes no lock) is *running*.
"""

from __future__ import annotations

import logging
import math
import socket
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bayestune.exceptions import BayestuneError
from bayestune.execution.pool import _alive
from bayestune.formatting import display
from bayestune.run import META_STRATEGY, Run, confirmed_winner, read_run, stored_budget, stored_confirmation
from bayestune.storage import Journal
from bayestune.storage.lock import describe_owner, read_owner
from bayestune.trial import FailureKind, Trial, TrialStatus

logger = logging.getLogger(__name__)

#: Error text kept per trial (the table shows one line; the failures panel a few).
ERROR_CHARS = 300
#: Failed trials listed with their errors, the most recent first.
RECENT_FAILURES = 20


class RunView:
    """Snapshots of one journal. The feature importance (a random forest per objective) is fitted
    in a background thread, again only when new evaluations arrived and ``importance_interval``
    seconds passed: a snapshot never waits for it, and the machine the run measures on is not
    loaded by a fit per poll."""

    def __init__(self, journal_path: str, *, importance_interval: float = 15.0) -> None:
        self.journal_path = str(journal_path)
        self.importance_interval = importance_interval
        self._importance: Any = None
        self._fitted: tuple[int, float] | None = None  # (evaluations, time) of the last fit started
        self._fitting: threading.Thread | None = None

    def snapshot(self) -> dict[str, Any]:
        with Journal.open(self.journal_path, read_only=True) as journal:
            raw = journal.trials()
            budget = stored_budget(journal)
            try:
                run: Run | None = read_run(journal)
            except BayestuneError as exc:  # a run that has not measured anything yet
                logger.debug("%s: no run to read yet (%s)", self.journal_path, exc)
                run = None
            meta = journal.meta() if run is None else run.meta
        if run is not None:
            self._refit_importance(run)
        return build_snapshot(self.journal_path, raw, run, budget, meta, self._importance)

    def wait_for_importance(self, timeout: float | None = None) -> Any:
        """The importance once the fit under way (if any) is done (for tests and scripts)."""
        fitting = self._fitting
        if fitting is not None:
            fitting.join(timeout)
        return self._importance[0] if self._importance is not None else None

    def _refit_importance(self, run: Run) -> None:
        n, now = len(run.trials), time.monotonic()
        if self._fitting is not None and self._fitting.is_alive():
            return
        if self._fitted is not None and (self._fitted[0] == n or now - self._fitted[1] < self.importance_interval):
            return
        self._fitted = (n, now)
        self._fitting = threading.Thread(target=self._fit, args=(run,), name="dashboard-importance", daemon=True)
        self._fitting.start()

    def _fit(self, run: Run) -> None:
        from bayestune.insight import run_importance

        try:
            shares: Any = run_importance(run)
        except Exception as exc:  # noqa: BLE001 - an estimate that cannot be made is shown, not fatal
            shares = {"error": f"{type(exc).__name__}: {exc}"}
        self._importance = (shares, len(run.trials))  # what it says, from how many evaluations


def build_snapshot(
    journal_path: str,
    raw: Sequence[Trial],
    run: Run | None,
    budget: int | None,
    meta: Mapping[str, Any],
    importance: Any,
) -> dict[str, Any]:
    """The JSON document of ``/api/state``."""
    objectives = run.objectives if run is not None else []
    parameters = run.space.names if run is not None else _config_names(raw)
    lost = [t for t in raw if t.failure_kind == FailureKind.LOST]
    counted = [t for t in raw if t.failure_kind != FailureKind.LOST]
    by_status = Counter(t.status for t in counted)
    n_finished = sum(n for s, n in by_status.items() if s.is_finished)
    n_pending = by_status[TrialStatus.PENDING]
    state, owner = run_state(journal_path, n_finished, n_pending, budget)
    failed = [t for t in counted if t.status in (TrialStatus.FAILED, TrialStatus.INFEASIBLE)]
    return {
        "journal": journal_path,
        "strategy": meta.get(META_STRATEGY),
        "state": state,
        "owner": owner,
        "budget": budget,
        "counts": {
            "finished": n_finished,
            "pending": n_pending,
            "ok": by_status[TrialStatus.OK],
            "infeasible": by_status[TrialStatus.INFEASIBLE],
            "failed": by_status[TrialStatus.FAILED],
            "lost": len(lost),
        },
        "objectives": [{"name": o.name, "minimize": o.minimize} for o in objectives],
        "parameters": list(parameters),
        "trials": [_trial_row(t, objectives, parameters) for t in raw],
        "convergence": convergence(run) if run is not None else {},
        "pareto": _pareto_ids(run),
        "importance": _jsonable_importance(importance[0] if importance is not None else None),
        "importance_evaluations": importance[1] if importance is not None else None,
        "best": _best(run, meta),
        "failures": {
            "kinds": dict(Counter(t.failure_kind or t.status.value for t in failed).most_common()),
            "recent": [
                {"trial": t.trial_id, "kind": t.failure_kind or t.status.value, "error": _short_error(t.error)}
                for t in reversed(failed[-RECENT_FAILURES:])
            ],
        },
        "updated_at": time.time(),
    }


def run_state(journal_path: str, n_finished: int, n_pending: int, budget: int | None) -> tuple[str, str | None]:
    """``(state, owner)``: running / stopped / finished, read from the lock file without taking it."""
    owner = read_owner(journal_path)
    if owner is not None:
        described = describe_owner(owner)
        pid = owner.get("pid")
        if owner.get("host") != socket.gethostname() or (isinstance(pid, int) and pid > 0 and _alive(pid)):
            return "running", described
        return "stopped", f"{described}, which ended without releasing its lock"
    if n_pending:
        return "running", None
    if budget is None or n_finished >= budget:
        return "finished", None
    return "stopped", None


def convergence(run: Run) -> dict[str, list[list[Any]]]:
    """Per objective, per measured evaluation: ``[evaluation, trial, value or None, feasible, best so far or None]``."""
    out: dict[str, list[list[Any]]] = {}
    for obj in run.objectives:
        sign = 1.0 if obj.minimize else -1.0
        best = math.inf
        points = []
        for k, t in enumerate(run.trials, 1):
            value = _number(t.values.get(obj.name))
            if t.feasible and value is not None:
                best = min(best, sign * value)
            points.append([k, t.trial_id, value, t.feasible, sign * best if math.isfinite(best) else None])
        out[obj.name] = points
    return out


def _pareto_ids(run: Run | None) -> list[int]:
    if run is None or len(run.objectives) < 2:
        return []
    from bayestune.pareto import pareto_trials

    return [t.trial_id for t in pareto_trials(run.trials, run.objectives)]


def _trial_row(t: Trial, objectives: Sequence[Any], parameters: Sequence[str]) -> dict[str, Any]:
    return {
        "trial": t.trial_id,
        "status": t.status.value,
        "kind": t.failure_kind,
        "origin": t.origin,
        "values": {o.name: _number(t.values.get(o.name)) for o in objectives},
        "config": {p: display(t.config[p]) if p in t.config else "" for p in parameters},
        "duration": t.duration,
        "error": _short_error(t.error),
    }


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _short_error(error: str | None) -> str | None:
    if not error:
        return None
    text = error.strip()
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS] + " ..."


def _config_names(trials: Sequence[Trial]) -> list[str]:
    names: dict[str, None] = {}
    for t in trials:
        names.update(dict.fromkeys(t.config))
    return list(names)


def _best(run: Run | None, meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The best so far of a single-objective run: value, trial and configuration as the search
    measured them, and the confirmed winner once the run's confirmation declared one."""
    if run is None or len(run.objectives) != 1:
        return None
    objective = run.objectives[0]
    ok = [t for t in run.trials if t.feasible and math.isfinite(t.values.get(objective.name, math.nan))]
    if not ok:
        return None
    sign = 1.0 if objective.minimize else -1.0
    best = min(ok, key=lambda t: (sign * t.values[objective.name], t.trial_id))
    confirmed = confirmed_winner(meta, objective.name)
    by_id = {t.trial_id: t for t in run.trials}
    winner = by_id.get(confirmed["trial_id"]) if confirmed is not None else None
    shown = winner or best
    confirmation = (
        None
        if winner is None or confirmed is None
        else {k: confirmed.get(k) for k in ("value", "low", "high", "rounds")}
    )
    stored = stored_confirmation(meta) or {}
    speedup, baseline = stored.get("speedup"), stored.get("baseline")
    return {
        "objective": objective.name,
        "trial": shown.trial_id,
        "value": shown.values.get(objective.name),
        "config": {k: display(v) for k, v in shown.config.items()},
        "confirmed": confirmation,
        # the winner's speedup over the baseline, from their paired rounds (None until confirmed)
        "speedup": None
        if winner is None or not isinstance(speedup, Mapping) or not isinstance(baseline, Mapping)
        else {**{k: speedup.get(k) for k in ("value", "low", "high")}, "baseline": baseline.get("trial_id")},
    }


def _jsonable_importance(importance: Any) -> Any:
    if not isinstance(importance, Mapping):
        return None
    if "error" in importance:
        return {"error": str(importance["error"])}
    return {str(target): {str(p): float(v) for p, v in shares.items()} for target, shares in importance.items()}
