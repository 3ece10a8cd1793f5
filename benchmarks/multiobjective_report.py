"""The multi-objective section of a report: hypervolume ratios against evaluations (and their
plots), with the known front or the union of the runs' fronts as the reference."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import metrics
from benchmarks.multiobjective_problems import DESCRIPTIONS, known_front

#: Multi-objective tables list these first (bayestune's, then the peers'), then any other.
MO_ORDER = ("pareto_rf", "parego", "random", "optuna_tpe", "optuna_nsga2", "hypermapper")
#: Evaluations of the initial design, left out of the multi-objective "ms per suggestion".
MO_DESIGN_SIZE = 10


def _hv_cell(mean: float, std: float) -> str:
    return f"{mean:.3f} ± {std:.3f}"


def multiobjective_report(
    records: Sequence[dict[str, Any]],
    *,
    command: str,
    out_path: Path,
    plots: str | os.PathLike | None = None,
    heading: str = "#",
) -> str:
    """Hypervolume ratio tables (and plots) of multi-objective runs (see the module docstring of :mod:`benchmarks.results_report`)."""
    by_problem: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if not r.get("error"):
            by_problem.setdefault(r["problem"], []).append(r)
    present = {r["strategy"] for r in records}
    order = [s for s in MO_ORDER if s in present] + sorted(present - set(MO_ORDER))
    h = heading
    lines = [
        f"{h} Multi-objective benchmark",
        "",
        "Hypervolume of the feasible evaluations after k evaluations, divided by the hypervolume of the",
        "known Pareto front, objectives scaled to [0, 1] by the front's ideal and nadir, reference point 10 %",
        "of the front's range beyond its nadir. Halide (no known front): the reference front is the",
        "non-dominated set of all runs' evaluations, on log10 of both objectives, scaled from its ideal (0)",
        "to the 90th percentile of all feasible evaluations (1 = the reference point).",
        "Mean ± standard deviation over seeds; **bold** = best mean.",
        f"Produced by `{command}`.",
        "",
    ]
    for name, recs in by_problem.items():
        curves, _ = metrics.hypervolume_ratio_curves(recs, known_front(name))
        budget = min(r["budget"] for r in recs)
        points = [k for k in (10, 20, 30, 40, 60, 80, 100) if k <= budget]
        if budget not in points:
            points.append(budget)
        n_seeds = {s: len(curves[s]) for s in curves}
        lines += [f"{h}# {name}", "", DESCRIPTIONS.get(name, name), "", f"seeds per strategy: {n_seeds}", ""]
        lines.append("| strategy | " + " | ".join(f"HV ratio @{k}" for k in points) + " | ms per suggestion (mean) |")
        lines.append("|---" * (len(points) + 2) + "|")
        means = {k: {s: curves[s][:, k - 1].mean() for s in order if s in curves} for k in points}
        for s in order:
            if s not in curves:
                continue
            cells = []
            for k in points:
                m, sd = curves[s][:, k - 1].mean(), curves[s][:, k - 1].std()
                cell = _hv_cell(m, sd)
                cells.append(f"**{cell}**" if m >= max(means[k].values()) - 1e-12 else cell)
            ask = [a for r in recs if r["strategy"] == s for a in r["ask_s"][MO_DESIGN_SIZE:]]
            ms = f"{1e3 * float(np.mean(ask)):.0f}" if ask else "-"
            lines.append(f"| {s} | " + " | ".join(cells) + f" | {ms} |")
        lines.append("")
        if plots:
            path = plot_hypervolume(name, curves, order, Path(plots))
            lines += [f"![{name}]({os.path.relpath(path, out_path.parent)})", ""]
    return "\n".join(lines)


def plot_hypervolume(name: str, curves: dict[str, np.ndarray], order: Sequence[str], directory: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    directory.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(6.5, 4.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for s in order:
        if s not in curves:
            continue
        c = curves[s]
        k = np.arange(1, c.shape[1] + 1)
        mean, lo, hi = c.mean(axis=0), np.percentile(c, 10, axis=0), np.percentile(c, 90, axis=0)
        ax.plot(k, mean, label=s, lw=2 if s in ("pareto_rf", "parego") else 1.2)
        ax.fill_between(k, lo, hi, alpha=0.12)
    ax.set_xlabel("evaluations")
    ax.set_ylabel("hypervolume / reference front's")
    ax.set_title(f"{name}: mean, 10-90 % band over seeds")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path = directory / f"multiobjective_{name}.png"
    fig.savefig(path, dpi=110)
    return path
