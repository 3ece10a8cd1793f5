"""Metrics over trajectories (pure functions; objectives are minimised).

A trajectory is the sequence of a run's counted evaluations: a value, or ``None``/NaN for a
failure. Failures count towards the budget but never as values.

* :func:`best_so_far` — running minimum (NaN until the first feasible value).
* :func:`best_at` — the best value within the first ``b`` evaluations (a run that stopped
  early, e.g. because it exhausted the space, keeps its final best).
* :func:`relative_best` — ``best_at / optimum``; ``mean_std`` aggregates over seeds (sample
  standard deviation, ``ddof=1``; 0 for one seed); seeds with no feasible value yet are left
  out and counted as missing.
* :func:`evaluations_needed` — BaCO section 5's "how many evaluations A needs to reach peer P's
  result": the target is P's *mean* best at budget ``B`` (mean over seeds), and ``k`` the
  smallest evaluation count at which A's *mean* best-so-far curve (mean over seeds, as in
  BaCO's Fig. 6 "evolution of average best runtime") is at or below the target; the factor
  is ``B / k``. The mean curve is defined from the first ``k`` at which every seed has a
  feasible value. ``k`` is ``None`` if A never reaches the target within its trajectories.
* :func:`mean_absolute_error` / :func:`mean_deviation_factors` — Kernel Tuner's MDF (Willemsen
  et al., section IV-A): per run, ``MAE = mean_i |f(x+_{b_i}) - f(x*)|`` over the budget
  points ``b_i`` (the paper: 20 i for i = 2..11, i.e. 40..220; here by default 20 i up to the
  largest budget, i.e. 40, 60, 80, 100 for a 100-evaluation run); the mean MAE over runs per
  (problem, strategy); per problem the factor of each strategy is its mean MAE divided by the
  mean of the strategies' mean MAEs on that problem; the MDF of a strategy is the mean of its
  factors over problems (the paper's error bars: their standard deviation). Lower is better;
  the factors depend on which strategies are compared. A problem where every mean MAE is 0
  gives every strategy the factor 1. Budget points without a feasible value are skipped.
* :func:`win_fractions` — in how many (problem, budget) cells strategy A's mean best is
  strictly lower than each peer's (ties counted separately).
* :func:`geometric_mean` / :func:`bootstrap_geomean_ci` — the issue-17 summary: the geometric mean
  over spaces of each space's mean best/optimum, with a percentile bootstrap interval that
  resamples the seeds within each space (the spaces are fixed: they are what is being averaged).
* :func:`paired_wilcoxon` — a two-sided Wilcoxon signed-rank test over spaces, paired per space
  on the log of the mean best/optimum of two strategies (scipy's exact test for small n).
* :func:`baco_budget_points` — BaCO's one-third / two-thirds / full-budget view.
* :func:`leave_one_out` — default selection by leave-one-space-out: for each space, the candidate
  with the best mean log score on the *other* spaces is chosen and scored on the left-out one.
* :func:`hypervolume_ratio_curves` — several objectives: the hypervolume of a run's feasible
  evaluations after k counted evaluations, divided by the hypervolume of the reference front.
  With a known front (a dense sample of it), the objectives are scaled to [0, 1] by the front's
  ideal and nadir and the reference point sits ``REF_OFFSET`` of the range beyond the nadir.
  Without one (measured problems) the reference front is the non-dominated set of every feasible
  evaluation of every run given (HyperMapper 2.0's procedure), on log10 of the objectives, scaled
  so that its ideal is 0 and the ``MEASURED_PERCENTILE`` th percentile of all feasible evaluations
  is 1, the reference point (the union front alone spans too narrow a box for single runs to count).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from bayestune.pareto import hypervolume, hypervolume_trace, pareto_mask

Values = Sequence[float | None]
#: Known fronts: where the reference point sits beyond the front's nadir, as a fraction of its range.
REF_OFFSET = 0.1
#: Measured problems: the reference point is this percentile of all feasible evaluations.
MEASURED_PERCENTILE = 90


def _as_array(values: Values) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def best_so_far(values: Values) -> np.ndarray:
    """Running minimum of the feasible values; NaN before the first one."""
    v = _as_array(values)
    if not len(v):
        return v
    filled = np.where(np.isnan(v), np.inf, v)
    run = np.minimum.accumulate(filled)
    return np.where(np.isinf(run), np.nan, run)


def best_at(values: Values, budget: int) -> float:
    """Best feasible value within the first ``budget`` evaluations (NaN if none)."""
    if budget < 1:
        raise ValueError(f"budget must be >= 1, but got {budget}")
    curve = best_so_far(list(values)[:budget])
    return float(curve[-1]) if len(curve) else math.nan


def relative_best(values: Values, budget: int, optimum: float) -> float:
    """``best_at(values, budget) / optimum`` (>= 1 when ``optimum`` is the true minimum > 0)."""
    if not optimum or not math.isfinite(optimum) or optimum <= 0:
        raise ValueError(f"best/optimum needs a positive finite optimum, but got {optimum!r}")
    return best_at(values, budget) / optimum


def mean_std(xs: Iterable[float]) -> tuple[float, float, int]:
    """(mean, sample std, number of NaN entries left out)."""
    a = np.array(list(xs), dtype=float)
    ok = a[~np.isnan(a)]
    missing = int(len(a) - len(ok))
    if not len(ok):
        return math.nan, math.nan, missing
    std = float(np.std(ok, ddof=1)) if len(ok) > 1 else 0.0
    return float(np.mean(ok)), std, missing


def curves(runs: Sequence[Values], length: int | None = None) -> np.ndarray:
    """Best-so-far curves of several runs as a (runs, length) matrix; a shorter run is
    extended with its final best."""
    if not runs:
        return np.empty((0, length or 0))
    n = length if length is not None else max(len(r) for r in runs)
    out = np.full((len(runs), n), np.nan)
    for i, r in enumerate(runs):
        c = best_so_far(list(r)[:n])
        if len(c):
            out[i, : len(c)] = c
            out[i, len(c) :] = c[-1]
    return out


def mean_curve(runs: Sequence[Values], length: int | None = None) -> np.ndarray:
    """Mean best-so-far over runs at each evaluation count (NaN where some run has no value)."""
    m = curves(runs, length)
    if not len(m):
        return np.empty(0)
    out = np.full(m.shape[1], np.nan)
    ok = ~np.isnan(m).any(axis=0)
    out[ok] = m[:, ok].mean(axis=0)
    return out


def evaluations_to_reach(curve: Sequence[float], target: float, *, rtol: float = 1e-12) -> int | None:
    """Smallest ``k`` (1-based) with ``curve[k-1] <= target``; None if never."""
    c = np.asarray(curve, dtype=float)
    hit = np.flatnonzero(~np.isnan(c) & (c <= target + rtol * abs(target)))
    return int(hit[0]) + 1 if len(hit) else None


def evaluations_needed(
    runs_a: Sequence[Values], runs_peer: Sequence[Values], budget: int
) -> dict[str, float | int | None]:
    """BaCO-style: evaluations A needs (mean curve) to reach the peer's mean best at ``budget``.

    Returns ``target`` (peer's mean best at ``budget``), ``k`` (None if not reached within A's
    trajectories), ``factor = budget / k`` (None if not reached) and ``horizon`` (the length of
    A's trajectories searched).
    """
    peer_best = [best_at(r, budget) for r in runs_peer]
    target, _, missing = mean_std(peer_best)
    horizon = max((len(r) for r in runs_a), default=0)
    if math.isnan(target):
        return {"target": None, "k": None, "factor": None, "horizon": horizon, "peer_missing": missing}
    k = evaluations_to_reach(mean_curve(runs_a, horizon), target)
    return {
        "target": target,
        "k": k,
        "factor": (budget / k if k else None),
        "horizon": horizon,
        "peer_missing": missing,
    }


def kernel_tuner_points(max_budget: int, step: int = 20, first: int = 2) -> list[int]:
    """Budget points 20 i for i = 2, 3, ... up to ``max_budget`` (the paper: up to 220)."""
    return [step * i for i in range(first, max_budget // step + 1)]


def mean_absolute_error(values: Values, optimum: float, points: Sequence[int]) -> float:
    """``mean_i |best_at(b_i) - optimum|`` over the budget points (NaN points skipped)."""
    errs = [abs(best_at(values, b) - optimum) for b in points]
    errs = [e for e in errs if not math.isnan(e)]
    return float(np.mean(errs)) if errs else math.nan


def mean_deviation_factors(mean_mae: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float | int]]:
    """MDF per strategy from ``{problem: {strategy: mean MAE over runs}}``.

    Returns ``{strategy: {"mdf": mean factor, "std": std of the factors (ddof=0, as error
    bars), "problems": number of problems}}``. Only strategies present on a problem take part
    in its normalisation.
    """
    factors: dict[str, list[float]] = {}
    for per_strategy in mean_mae.values():
        vals = {s: v for s, v in per_strategy.items() if v is not None and not math.isnan(v)}
        if not vals:
            continue
        norm = float(np.mean(list(vals.values())))
        for s, v in vals.items():
            factors.setdefault(s, []).append(1.0 if norm == 0 else v / norm)
    return {s: {"mdf": float(np.mean(f)), "std": float(np.std(f)), "problems": len(f)} for s, f in factors.items()}


def win_fractions(
    cell_means: Mapping[tuple[str, int], Mapping[str, float]], a: str, peers: Iterable[str] | None = None
) -> dict[str, dict[str, float | int]]:
    """For each peer: cells where A's mean is strictly lower (wins), equal (ties), higher
    (losses), and ``fraction`` = wins / cells compared. A cell counts only when both have a
    (non-NaN) mean there."""
    if peers is None:
        peers = sorted({s for m in cell_means.values() for s in m} - {a})
    out: dict[str, dict[str, float | int]] = {}
    for peer in peers:
        wins = ties = losses = 0
        for means in cell_means.values():
            ma, mp = means.get(a), means.get(peer)
            if ma is None or mp is None or math.isnan(ma) or math.isnan(mp):
                continue
            if math.isclose(ma, mp, rel_tol=1e-12, abs_tol=0.0):
                ties += 1
            elif ma < mp:
                wins += 1
            else:
                losses += 1
        n = wins + ties + losses
        out[peer] = {
            "wins": wins,
            "ties": ties,
            "losses": losses,
            "cells": n,
            "fraction": (wins / n if n else math.nan),
        }
    return out


def geometric_mean(xs: Iterable[float]) -> float:
    """exp(mean(log x)) of the finite positive entries (NaN if there are none)."""
    a = np.array([x for x in xs if x is not None and math.isfinite(x) and x > 0], dtype=float)
    return float(np.exp(np.mean(np.log(a)))) if len(a) else math.nan


def bootstrap_geomean_ci(
    per_space: Mapping[str, Sequence[float]], *, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """(estimate, low, high): the geometric mean over spaces of each space's mean value, and its
    percentile-bootstrap interval from resampling the seeds of every space with replacement."""
    groups = [np.array([v for v in vals if math.isfinite(v)], dtype=float) for vals in per_space.values()]
    groups = [g for g in groups if len(g)]
    if not groups:
        return math.nan, math.nan, math.nan
    estimate = geometric_mean(float(g.mean()) for g in groups)
    rng = np.random.default_rng(seed)
    logs = np.zeros(n_boot)
    for g in groups:
        idx = rng.integers(len(g), size=(n_boot, len(g)))
        logs += np.log(g[idx].mean(axis=1))
    boot = np.exp(logs / len(groups))
    alpha = (1.0 - level) / 2.0
    return estimate, float(np.quantile(boot, alpha)), float(np.quantile(boot, 1.0 - alpha))


def paired_wilcoxon(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, float | int]:
    """Wilcoxon signed-rank test over the spaces both strategies have, on log(a / b) of their
    per-space means; ``median_ratio`` < 1 means A is better. ``p`` is NaN below 2 non-tied spaces."""
    from scipy.stats import wilcoxon

    common = [k for k in a if k in b and math.isfinite(a[k]) and math.isfinite(b[k]) and a[k] > 0 and b[k] > 0]
    d = np.array([math.log(a[k] / b[k]) for k in common])
    out: dict[str, float | int] = {
        "n": len(d),
        "median_ratio": float(np.exp(np.median(d))) if len(d) else math.nan,
        "better": int(np.sum(d < 0)),
        "worse": int(np.sum(d > 0)),
        "p": math.nan,
    }
    if np.count_nonzero(d) >= 2:
        out["p"] = float(wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue)
    return out


def baco_budget_points(budget: int) -> list[int]:
    """BaCO's view of a run: its best after a third, two thirds and all of ``budget``."""
    if budget < 3:
        raise ValueError(f"the thirds view needs a budget >= 3, but got {budget}")
    return [math.ceil(budget / 3), math.ceil(2 * budget / 3), budget]


def leave_one_out(scores: Mapping[str, Mapping[str, float]], spaces: Sequence[str]) -> dict[str, tuple[str, float]]:
    """``scores[candidate][space]`` (lower is better, e.g. the mean log best/optimum over budgets)
    -> ``{left-out space: (candidate chosen on the others, its score there)}``. Only candidates
    scored on every space take part; ties go to the earlier candidate (put the default first)."""
    complete = [c for c, per in scores.items() if all(s in per and math.isfinite(per[s]) for s in spaces)]
    if not complete or len(spaces) < 2:
        raise ValueError("leave-one-out needs at least two spaces and one candidate scored on all of them")
    out: dict[str, tuple[str, float]] = {}
    for held in spaces:
        rest = [s for s in spaces if s != held]
        chosen = min(complete, key=lambda c: (float(np.mean([scores[c][s] for s in rest])), complete.index(c)))
        out[held] = (chosen, float(scores[chosen][held]))
    return out


class _Scale:
    """Maps raw objective values to the space hypervolume is measured in."""

    def __init__(self, log: bool, ideal: np.ndarray, nadir: np.ndarray) -> None:
        self.log, self.ideal, self.nadir = log, ideal, nadir

    def __call__(self, Y: np.ndarray) -> np.ndarray:
        Y = np.log10(Y) if self.log else Y
        return (Y - self.ideal) / np.where(self.nadir > self.ideal, self.nadir - self.ideal, 1.0)


def _feasible_rows(records: Sequence[Mapping]) -> np.ndarray:
    return np.array(
        [v for r in records for v, ok in zip(r["values"], r["feasible"]) if ok and v is not None], dtype=float
    )


def hypervolume_ratio_curves(
    records: Sequence[Mapping], front: np.ndarray | None = None
) -> tuple[dict[str, np.ndarray], float]:
    """Per strategy, an (n_runs, budget) array of HV(first k evaluations) / HV(reference front),
    and that reference hypervolume. ``records`` are the runs of one problem (``strategy``,
    ``budget``, ``values`` as lists of objective values or None, ``feasible``); ``front`` the
    known front, or None to build the reference from the records (see the module docstring)."""
    log = front is None
    if log:
        rows = _feasible_rows(records)
        front = rows[pareto_mask(rows)]
        F = np.log10(front)
        scale = _Scale(log, F.min(axis=0), np.percentile(np.log10(rows), MEASURED_PERCENTILE, axis=0))
        ref = np.ones(front.shape[1])
    else:
        scale = _Scale(log, front.min(axis=0), front.max(axis=0))
        ref = np.full(front.shape[1], 1.0 + REF_OFFSET)
    hv_front = hypervolume(scale(front), ref)
    out: dict[str, list[np.ndarray]] = {}
    for r in records:
        vals = np.array([v if v is not None else [np.nan] * front.shape[1] for v in r["values"]], dtype=float)
        trace = np.zeros(r["budget"])
        if len(vals):
            feasible = np.array(r["feasible"], dtype=bool) & np.all(np.isfinite(vals), axis=1)
            safe = np.where(np.isfinite(vals) & (vals > 0 if log else True), vals, 1.0)
            t = hypervolume_trace(scale(safe), ref, feasible=feasible) / hv_front
            trace[: len(t)] = t
            trace[len(t) :] = t[-1] if len(t) else 0.0
        out.setdefault(r["strategy"], []).append(trace)
    return {k: np.array(v) for k, v in out.items()}, hv_front
