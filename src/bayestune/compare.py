"""Several runs side by side: best-so-far against evaluations, on one objective.

``bayestune compare JOURNAL...`` overlays their convergence in one figure (PNG or SVG) and
prints, per run, its best value and how many evaluations it needed to come within
:data:`WITHIN` (5 %) of the best any of them found: the question "which strategy (or
setting) gets there first" that a single run's plot cannot answer.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.objectives import Objective
from bayestune.run import META_STRATEGY, Run, confirmed_winner, load_run

#: "Close to the best": within this fraction of the overall best value (of its magnitude).
WITHIN = 0.05


@dataclass(frozen=True)
class Trace:
    """One run's best-so-far of the compared objective after each evaluation (NaN before a feasible one)."""

    label: str
    source: str
    best_so_far: np.ndarray
    n_failed: int
    confirmed: float = math.nan  # the confirmed winner's value (NaN: the run was not confirmed)

    @property
    def best(self) -> float:
        finite = self.best_so_far[np.isfinite(self.best_so_far)]
        return float(finite[-1]) if len(finite) else math.nan


def best_so_far(run: Run, objective: Objective) -> np.ndarray:
    """The best feasible value of ``objective`` after each evaluation of ``run``."""
    sign = 1.0 if objective.minimize else -1.0
    values = [
        sign * t.values[objective.name]
        if t.feasible and math.isfinite(t.values.get(objective.name, math.nan))
        else math.inf
        for t in run.trials
    ]
    running = np.minimum.accumulate(np.asarray(values, dtype=float)) if values else np.empty(0)
    return np.where(np.isfinite(running), sign * running, np.nan)


def load_traces(journals: Sequence[str], objective: str | None = None) -> tuple[Objective, list[Trace]]:
    """The traces of ``journals`` on ``objective`` (default: the first run's first objective)."""
    if not journals:
        raise BayestuneError("nothing to compare: no journal given")
    runs = [load_run(path, read_only=True) for path in journals]
    chosen = _objective(runs[0], objective, journals[0])
    labels = _labels(journals, runs)
    traces = []
    for path, run, label in zip(journals, runs, labels):
        own = _objective(run, chosen.name, path)
        if own.minimize != chosen.minimize:
            raise BayestuneError(
                f"journal {path!r} {own.direction}s {own.name!r}, but {journals[0]!r} "
                f"{chosen.direction}s it; compare runs of one goal"
            )
        n_failed = sum(1 for t in run.trials if not t.feasible)
        winner = confirmed_winner(run.meta, own.name)
        confirmed = math.nan if winner is None or winner.get("value") is None else float(winner["value"])
        traces.append(Trace(label, path, best_so_far(run, own), n_failed, confirmed))
    return chosen, traces


def _objective(run: Run, name: str | None, source: str) -> Objective:
    if name is None:
        return run.objectives[0]
    for o in run.objectives:
        if o.name == name:
            return o
    raise BayestuneError(f"journal {source!r} has no objective {name!r}; its objectives are {run.names}")


def _labels(journals: Sequence[str], runs: Sequence[Run]) -> list[str]:
    """The file's stem and the run's strategy; the parent directory too when stems repeat."""
    stems = [Path(p).stem for p in journals]
    labels = []
    for path, stem, run in zip(journals, stems, runs):
        name = f"{Path(path).parent.name}/{stem}" if stems.count(stem) > 1 else stem
        strategy = run.meta.get(META_STRATEGY)
        labels.append(f"{name} ({strategy})" if isinstance(strategy, str) else name)
    return labels


def overall_best(objective: Objective, traces: Sequence[Trace]) -> float:
    bests = [t.best for t in traces if math.isfinite(t.best)]
    if not bests:
        return math.nan
    return min(bests) if objective.minimize else max(bests)


def evaluations_to_reach(trace: Trace, objective: Objective, target: float, within: float = WITHIN) -> int | None:
    """The first evaluation (1-based) whose best-so-far is within ``within`` of ``target``, or None."""
    if not math.isfinite(target):
        return None
    slack = within * abs(target)
    ok = (trace.best_so_far <= target + slack) if objective.minimize else (trace.best_so_far >= target - slack)
    hits = np.flatnonzero(ok & np.isfinite(trace.best_so_far))
    return int(hits[0]) + 1 if len(hits) else None


def summary_rows(objective: Objective, traces: Sequence[Trace]) -> list[dict]:
    """Per run: label, evaluations, failed, best, confirmed value, evaluations to within 5 % of the
    overall best; ranked by the confirmed value where runs have one (the search's best sample is
    biased towards luck), then by the best."""
    target = overall_best(objective, traces)
    sign = 1.0 if objective.minimize else -1.0

    def rank(t: Trace) -> tuple[bool, float, float]:
        confirmed = sign * t.confirmed if math.isfinite(t.confirmed) else math.inf
        return (not math.isfinite(t.confirmed), confirmed, sign * t.best if math.isfinite(t.best) else math.inf)

    return [
        {
            "run": t.label,
            "evaluations": len(t.best_so_far),
            "failed": t.n_failed,
            "best": t.best,
            "confirmed": t.confirmed,
            "to_within": evaluations_to_reach(t, objective, target),
        }
        for t in sorted(traces, key=rank)
    ]


def plot_comparison(objective: Objective, traces: Sequence[Trace], path: str | os.PathLike) -> Path:
    """Every run's best-so-far in one figure; the file's suffix (``.png``, ``.svg``) picks the format."""
    from bayestune.plot import _figure, _label, _save, _wide_positive

    suffix = Path(path).suffix.lower()
    if suffix not in (".png", ".svg"):
        raise BayestuneError(f"the figure {str(path)!r} must end in .png or .svg")
    fig = _figure(7.0, 4.2)
    ax = fig.add_subplot(1, 1, 1)
    finite = np.concatenate([t.best_so_far[np.isfinite(t.best_so_far)] for t in traces] or [np.empty(0)])
    for t in traces:
        k = np.arange(1, len(t.best_so_far) + 1)
        ok = np.isfinite(t.best_so_far)
        if ok.any():
            first = int(np.argmax(ok))
            ax.step(k[first:], t.best_so_far[first:], where="post", lw=1.8, label=t.label)
        else:
            ax.plot([], [], label=f"{t.label} (no feasible evaluation)")
    target = overall_best(objective, traces)
    if math.isfinite(target):
        ax.axhline(target, color="black", lw=0.8, ls=":", label=f"overall best {target:.6g}")
    if _wide_positive(finite):
        ax.set_yscale("log")
    ax.set_xlabel("evaluation")
    ax.set_ylabel(f"best so far: {_label(objective)}")
    ax.set_title(f"convergence of {len(traces)} run(s)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _save(fig, path)
