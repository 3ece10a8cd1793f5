"""PNG plots of a run: convergence, 2-D Pareto fronts, feature importance, parallel coordinates.

matplotlib is an optional dependency (``pip install -e '.[plot]' in the bayestune checkout``), imported only
when a plot is drawn. Figures are built with the object-oriented API on the Agg canvas, so
plotting never touches pyplot's global state or the user's interactive backend.

Every ``plot_*`` function takes a :class:`~bayestune.insight.Run` (see
:func:`bayestune.run.load_run`) or the data it needs, writes one PNG and returns its path.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.insight import run_importance
from bayestune.pareto import hypervolume_trace, pareto_mask, reference_point, to_minimization
from bayestune.run import Run
from bayestune.space import Categorical, Integer, Ordinal, Real

logger = logging.getLogger(__name__)

PLOT_KINDS = ("convergence", "pareto", "importance", "parallel")
_FEASIBLE, _FRONT, _INFEASIBLE, _GREY = "#4C72B0", "#DD8452", "#C44E52", "#B0B0B0"


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - depends on the environment
        raise BayestuneError("plots need matplotlib: pip install -e '.[plot]' in the bayestune checkout") from None
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: str | os.PathLike) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def _label(obj: Any) -> str:
    return f"{obj.name} ({'min' if obj.minimize else 'max'})"


def _wide_positive(values: np.ndarray) -> bool:
    """Positive values spanning two decades or more are clearer on a log axis."""
    v = values[np.isfinite(values)]
    return bool(len(v) > 1 and np.all(v > 0) and v.max() >= 100 * v.min())


# ---- convergence -------------------------------------------------------------------------
def plot_convergence(run: Run, path: str | os.PathLike) -> Path:
    """Each objective per evaluation with its best-so-far, and (several objectives) the
    hypervolume of the feasible evaluations so far."""
    _, Y, feasible = run.matrix()
    n_obj = len(run.objectives)
    panels = n_obj + (1 if n_obj > 1 else 0)
    fig = _figure(7.0, 2.6 * panels + 0.4)
    k = np.arange(1, len(Y) + 1)
    for j, obj in enumerate(run.objectives):
        ax = fig.add_subplot(panels, 1, j + 1)
        y = Y[:, j]
        ok = feasible & np.isfinite(y)
        ax.scatter(k[ok], y[ok], s=14, color=_FEASIBLE, label="feasible", zorder=3)
        bad = ~feasible & np.isfinite(y)
        if bad.any():
            ax.scatter(k[bad], y[bad], s=22, marker="x", color=_INFEASIBLE, label="infeasible (measured)", zorder=3)
        failed = ~feasible & ~np.isfinite(y)
        if failed.any():
            for x in k[failed]:
                ax.axvline(x, color=_INFEASIBLE, alpha=0.25, lw=1)
            ax.plot([], [], color=_INFEASIBLE, alpha=0.4, label=f"failed ({int(failed.sum())})")
        if ok.any():
            sign = 1.0 if obj.minimize else -1.0
            signed = np.where(ok, sign * y, np.inf)
            best = sign * np.minimum.accumulate(signed)
            first = int(np.argmax(ok))
            ax.step(k[first:], best[first:], where="post", color=_FRONT, lw=2, label="best so far")
            if _wide_positive(y[ok]):
                ax.set_yscale("log")
        ax.set_ylabel(_label(obj))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        if j == 0:
            ax.set_title(f"convergence: {len(Y)} evaluations, {int(feasible.sum())} feasible")
    if n_obj > 1:
        ax = fig.add_subplot(panels, 1, panels)
        ok = feasible & np.all(np.isfinite(Y), axis=1)
        if ok.any():
            ref = reference_point(Y, run.objectives, ok)
            ax.plot(k, hypervolume_trace(Y, ref, run.objectives, feasible=ok), color=_FRONT, lw=2)
            ax.set_ylabel("hypervolume")
            ref_text = ", ".join(f"{v:.4g}" for v in ref)
            ax.text(0.99, 0.04, f"reference point ({ref_text})", transform=ax.transAxes, ha="right", fontsize=7)
        else:
            ax.text(0.5, 0.5, "no feasible evaluation", ha="center", transform=ax.transAxes)
        ax.grid(alpha=0.3)
    fig.axes[-1].set_xlabel("evaluation")
    return _save(fig, path)


# ---- Pareto front ------------------------------------------------------------------------
def plot_pareto(run: Run, path: str | os.PathLike, *, x: str | None = None, y: str | None = None) -> Path:
    """Two objectives against each other: feasible points, the Pareto front of the feasible
    ones (over *all* objectives, so with three or more some front points look dominated in
    this projection), and infeasible measurements marked with a red x."""
    if len(run.objectives) < 2:
        raise BayestuneError(f"a Pareto plot needs two objectives, but the run has {run.names}")
    names = run.names
    x = x or names[0]
    y = y or names[1] if (y or names[1]) != x else names[0]
    for name in (x, y):
        if name not in names:
            raise BayestuneError(f"unknown objective {name!r}; the run's objectives are {names}")
    i, j = names.index(x), names.index(y)
    _, Y, feasible = run.matrix()
    ok = feasible & np.all(np.isfinite(Y), axis=1)
    front = pareto_mask(Y, run.objectives, ok)
    fig = _figure(6.4, 5.0)
    ax = fig.add_subplot(1, 1, 1)
    dominated = ok & ~front
    ax.scatter(Y[dominated, i], Y[dominated, j], s=16, color=_FEASIBLE, alpha=0.6, label=f"feasible ({int(ok.sum())})")
    if front.any():
        F = Y[front][:, [i, j]]
        ax.scatter(
            F[:, 0],
            F[:, 1],
            s=38,
            color=_FRONT,
            edgecolor="black",
            linewidth=0.6,
            zorder=4,
            label=f"Pareto front ({int(front.sum())})",
        )
        if len(run.objectives) == 2:  # the attainment line: the region the front dominates
            S = to_minimization(F, [run.objectives[i], run.objectives[j]])
            order = np.argsort(S[:, 0])
            ax.step(F[order, 0], F[order, 1], where="post", color=_FRONT, lw=1.4, zorder=3)
    measured_bad = ~feasible & np.isfinite(Y[:, i]) & np.isfinite(Y[:, j])
    if measured_bad.any():
        ax.scatter(
            Y[measured_bad, i],
            Y[measured_bad, j],
            s=30,
            marker="x",
            color=_INFEASIBLE,
            zorder=5,
            label=f"infeasible ({int(measured_bad.sum())})",
        )
    n_failed = int((~feasible & ~measured_bad).sum())
    if n_failed:
        ax.plot([], [], " ", label=f"failed, no values ({n_failed})")
    for axis, col in (("x", i), ("y", j)):
        if _wide_positive(Y[np.isfinite(Y[:, col]), col]):
            (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    ax.set_xlabel(_label(run.objectives[i]))
    ax.set_ylabel(_label(run.objectives[j]))
    ax.set_title(f"Pareto front: {x} vs {y}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _save(fig, path)


# ---- feature importance ------------------------------------------------------------------
def plot_importance(
    importance: Mapping[str, Mapping[str, float]], path: str | os.PathLike, *, title: str = "feature importance"
) -> Path:
    """Horizontal bars: one group per parameter, one bar per objective (shares sum to 1)."""
    targets = list(importance)
    params: list[str] = []
    for t in targets:
        params.extend(p for p in importance[t] if p not in params)
    fig = _figure(6.8, 0.45 * max(1, len(params)) * max(1, len(targets)) ** 0.5 + 1.6)
    ax = fig.add_subplot(1, 1, 1)
    if not targets or not params:
        ax.text(
            0.5, 0.5, "not enough feasible evaluations to estimate importances", ha="center", transform=ax.transAxes
        )
        ax.set_axis_off()
        return _save(fig, path)
    height = 0.8 / len(targets)
    pos = np.arange(len(params))
    for k, t in enumerate(targets):
        vals = [importance[t].get(p, 0.0) for p in params]
        ax.barh(pos + (k - (len(targets) - 1) / 2) * height, vals, height=height, label=t)
    ax.set_yticks(pos)
    ax.set_yticklabels(params)
    ax.invert_yaxis()
    ax.set_xlabel("importance (sums to 1 per objective)")
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="x")
    ax.legend(fontsize=8, loc="lower right")
    return _save(fig, path)


# ---- parallel coordinates ----------------------------------------------------------------
def _axis_values(run: Run, X: np.ndarray) -> tuple[list[str], list[np.ndarray], list[list[tuple[float, str]]]]:
    """Per parameter: a [0, 1] column and tick labels."""
    labels, cols, ticks = [], [], []
    space = run.space
    for p in space.parameters:
        raw = X[:, space.slices[p.name]]
        if p.width > 1:  # a permutation or a tiling: one axis over its distinct values, in order
            keys = [tuple(int(v) for v in row) for row in raw]
            distinct = sorted(set(keys))
            idx = np.array([distinct.index(k) for k in keys], dtype=float)
            col = idx / max(1, len(distinct) - 1)
            tk = [(i / max(1, len(distinct) - 1), str(d)) for i, d in enumerate(distinct)] if len(distinct) <= 6 else []
        elif isinstance(p, Categorical):
            idx = p.index_of(raw).astype(float)
            k = max(1, int(p.cardinality) - 1)
            col = idx / k
            tk = [(i / k, str(v)) for i, v in enumerate(p.values)] if p.cardinality <= 8 else []
        else:
            col = p.unit(raw).reshape(-1)
            tk = []
            if isinstance(p, Ordinal) and p.cardinality <= 8:
                tk = [(float(p.unit(np.array([[i]]))[0, 0]), f"{v:g}") for i, v in enumerate(p.values)]
            elif isinstance(p, Ordinal):
                tk = [(0.0, f"{p.values[0]:g}"), (1.0, f"{p.values[-1]:g}")]
            elif isinstance(p, (Integer, Real)):
                tk = [(0.0, f"{p.low:g}"), (1.0, f"{p.high:g}")]
        labels.append(p.name)
        cols.append(col)
        ticks.append(tk)
    return labels, cols, ticks


def plot_parallel(run: Run, path: str | os.PathLike, *, color_by: str | None = None) -> Path:
    """One line per evaluation across the parameters and objectives (each scaled to its range),
    coloured by an objective (best = darkest); infeasible evaluations grey and dashed, the
    feasible Pareto front drawn on top."""
    from matplotlib import colormaps

    X, Y, feasible = run.matrix()
    labels, cols, ticks = _axis_values(run, X)
    ok = feasible & np.all(np.isfinite(Y), axis=1)
    for j, obj in enumerate(run.objectives):
        y = Y[:, j].copy()
        fin = np.isfinite(y)
        if _wide_positive(y[fin]):
            y[fin] = np.log10(y[fin])
        lo, hi = (np.nanmin(y[fin]), np.nanmax(y[fin])) if fin.any() else (0.0, 1.0)
        col = (y - lo) / (hi - lo) if hi > lo else np.where(fin, 0.5, np.nan)
        labels.append(_label(obj))
        cols.append(col)
        ticks.append([(0.0, f"{Y[fin, j].min():.3g}"), (1.0, f"{Y[fin, j].max():.3g}")] if fin.any() else [])
    M = np.column_stack(cols) if cols else np.empty((len(X), 0))
    names = run.names
    target = names.index(color_by) if color_by in names else 0
    obj = run.objectives[target]
    score = M[:, len(run.space.parameters) + target]
    goodness = 1.0 - score if obj.minimize else score
    front = pareto_mask(Y, run.objectives, ok) if len(run.objectives) > 1 else np.zeros(len(X), dtype=bool)
    fig = _figure(max(6.5, 1.1 * len(labels) + 1.5), 4.6)
    ax = fig.add_subplot(1, 1, 1)
    xs = np.arange(len(labels))
    cmap = colormaps["viridis_r"]
    for r in np.flatnonzero(~ok):
        ax.plot(xs, M[r], color=_GREY, lw=0.8, ls="--", alpha=0.6)
    order = np.flatnonzero(ok)
    order = order[np.argsort(goodness[order])]  # best drawn last, on top
    for r in order:
        ax.plot(xs, M[r], color=cmap(float(goodness[r])), lw=1.0, alpha=0.75)
    for r in np.flatnonzero(front):
        ax.plot(xs, M[r], color=_FRONT, lw=2.0, alpha=0.95)
    for x in xs:
        ax.axvline(x, color="black", lw=0.8)
    for x, tk in zip(xs, ticks):
        for pos, text in tk:
            ax.text(x + 0.04, pos, text, fontsize=7, va="center")
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
    ax.set_yticks([])
    ax.set_xlim(-0.2, len(labels) - 0.4)
    ax.set_ylim(-0.05, 1.05)
    extra = ", Pareto front orange" if front.any() else ""
    ax.set_title(
        f"parallel coordinates: colour = {obj.name} (dark = better){extra}; grey dashed = infeasible", fontsize=9
    )
    return _save(fig, path)


# ---- everything at once ------------------------------------------------------------------
def plot_run(
    run: Run,
    directory: str | os.PathLike,
    kinds: Sequence[str] = PLOT_KINDS,
    *,
    importance: Mapping[str, Mapping[str, float]] | None = None,
    prefix: str = "",
) -> dict[str, list[Path]]:
    """Write the requested kinds of plot into ``directory``; returns kind -> files."""
    unknown = sorted(set(kinds) - set(PLOT_KINDS))
    if unknown:
        raise BayestuneError(f"unknown plot kind(s) {unknown}; allowed: {list(PLOT_KINDS)}")
    directory = Path(directory)
    out: dict[str, list[Path]] = {}
    if "convergence" in kinds:
        out["convergence"] = [plot_convergence(run, directory / f"{prefix}convergence.png")]
    if "pareto" in kinds and len(run.objectives) > 1:
        names = run.names
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]][:6]
        out["pareto"] = [plot_pareto(run, directory / f"{prefix}pareto_{a}_{b}.png", x=a, y=b) for a, b in pairs]
    if "importance" in kinds:
        imp = importance if importance is not None else run_importance(run)
        out["importance"] = [plot_importance(imp, directory / f"{prefix}importance.png")]
    if "parallel" in kinds:
        out["parallel"] = [plot_parallel(run, directory / f"{prefix}parallel.png")]
    return out
