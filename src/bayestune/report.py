"""``bayestune report JOURNAL -o report.html``: one self-contained HTML page about a run.

The page holds the run's summary (evaluations by status, failure kinds), the best
configurations (one objective) or the Pareto set (several), the best configuration per
objective, feature importances per objective, and the plots of :mod:`bayestune.plot`
embedded as base64 PNGs, so the file can be mailed or archived alone.
"""

from __future__ import annotations

import base64
import html
import importlib.util
import logging
import math
import os
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bayestune.exceptions import BayestuneError
from bayestune.formatting import display
from bayestune.insight import run_importance
from bayestune.measurement.remeasure import Remeasured, confirmed_first, latest_confirmation
from bayestune.measurement.timing import format_breakdown, time_breakdown
from bayestune.pareto import pareto_trials
from bayestune.run import (
    META_BUDGET,
    META_SCENARIO,
    META_SEED,
    META_STRATEGY,
    Run,
    load_run,
    stored_confirmation,
    stored_measurement,
)
from bayestune.space import Space
from bayestune.trial import Trial, TrialStatus

logger = logging.getLogger(__name__)

#: What a report written without matplotlib says in place of its plots.
NO_PLOTS = "no plots: matplotlib is not installed (pip install -e '.[plot]' in the bayestune checkout)"
#: Most rows of the Pareto-set / best-configurations table.
MAX_ROWS = 50

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.4em 0; }
.muted { color: #777; font-size: 0.85em; }
"""


def have_matplotlib() -> bool:
    """Whether the plots can be drawn (matplotlib is the ``plot`` extra, not the base install)."""
    return importlib.util.find_spec("matplotlib") is not None


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] | None = None) -> str:
    numeric = numeric or [False] * len(headers)
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    thead = f"<thead><tr>{head}</tr></thead>" if any(headers) else ""
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{_esc(display(c))}</td>' if num else f"<td>{_esc(display(c))}</td>"
            for c, num in zip(row, numeric)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table>{thead}<tbody>{''.join(body)}</tbody></table>"


def _image(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{_esc(alt)}" src="data:image/png;base64,{data}">'


def _trial_rows(trials: Sequence[Trial], run: Run) -> tuple[list[str], list[list[Any]], list[bool]]:
    params = run.space.names
    headers = ["trial", *run.names, *params]
    rows = [
        [t.trial_id, *[t.values.get(n, math.nan) for n in run.names], *[t.config.get(p, "") for p in params]]
        for t in trials
    ]
    numeric = [True] * (1 + len(run.names)) + [False] * len(params)
    return headers, rows, numeric


def _best_by(run: Run, k: int) -> list[Trial]:
    obj = run.objectives[0]
    ok = [t for t in run.trials if t.feasible and obj.name in t.values]
    sign = 1.0 if obj.minimize else -1.0
    return sorted(ok, key=lambda t: sign * t.values[obj.name])[:k]


def _summary(run: Run, journal_path: str) -> str:
    meta = run.meta
    statuses = Counter(t.status for t in run.trials)
    kinds = Counter(t.failure_kind or t.status.value for t in run.trials if not t.feasible)
    stored = meta.get(META_SCENARIO)
    scenario: Mapping[str, Any] = stored if isinstance(stored, Mapping) else {}
    items = [
        ("journal", journal_path),
        ("scenario", scenario.get("name", "-")),
        ("objectives", ", ".join(f"{o.name} ({o.direction})" for o in run.objectives)),
        ("evaluations", f"{len(run.trials)}" + (f" of budget {meta[META_BUDGET]}" if meta.get(META_BUDGET) else "")),
        ("feasible", statuses[TrialStatus.OK]),
        ("infeasible (measured)", statuses[TrialStatus.INFEASIBLE]),
        ("failed", statuses[TrialStatus.FAILED]),
        ("failure kinds", ", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "-"),
        ("strategy", meta.get(META_STRATEGY, "-")),
        ("seed", meta.get(META_SEED, "-")),
        ("parameters", ", ".join(f"{p.name} ({p.kind})" for p in run.space.parameters)),
        ("time", format_breakdown(time_breakdown(run.trials)) or "-"),
    ]
    return _table(["", ""], [[k, v] for k, v in items])


def _confirmation(journal_path: str, run: Run) -> Remeasured | None:
    """The latest confirmation's outcome (None when the run has no re-measurements)."""
    from bayestune.storage import Journal

    with Journal.open(journal_path, read_only=True) as journal:
        remeasurements = journal.remeasurements()
    policy = stored_measurement(run.meta).policy
    baseline = (stored_confirmation(run.meta) or {}).get("baseline") or {}
    return latest_confirmation(
        remeasurements,
        run.trials,
        run.objectives[0],
        statistic=policy.statistic,
        confidence=policy.confidence,
        baseline_id=baseline.get("trial_id"),
        max_failure_share=policy.max_failure_share,
    )


def _best_section(run: Run, outcome: Remeasured | None) -> list[str]:
    """The best configurations: the confirmed winner first, then by the confirmed value where
    there is one (a column beside the search's), else the search's."""
    obj = run.objectives[0]
    best = confirmed_first(run.trials, outcome, obj)[:10]
    title = f"<h2>Best configurations by {_esc(obj.name)} ({obj.direction})</h2>"
    if not best:
        return [title, "<p>no feasible evaluation</p>"]
    headers, rows, numeric = _trial_rows(best, run)
    confirmed = {} if outcome is None else {e.trial_id: e.value for e in outcome.estimates}
    if confirmed:
        at = 1 + len(run.names)
        headers.insert(at, f"confirmed {obj.name}")
        numeric.insert(at, True)
        for t, row in zip(best, rows):
            row.insert(at, confirmed.get(t.trial_id, ""))
    return [title, _table(headers, rows, numeric)]


def _remeasurement_section(run: Run, outcome: Remeasured | None) -> list[str]:
    """The interleaved re-measurement rounds of the best trials and the winner they declare."""
    if outcome is None:
        return []
    policy = stored_measurement(run.meta).policy
    rows = [
        [e.trial_id, e.searched_value, e.value, e.low, e.high, len(e.samples), e.failures] for e in outcome.estimates
    ]
    headers = ["trial", "searched", policy.statistic, "low", "high", "rounds", "failed"]
    winner = outcome.winner
    verdict = (
        f"confirmed winner: trial {winner.trial_id}"
        if winner is not None
        else "no winner: every candidate failed a re-measurement"
    )
    if winner is not None and outcome.baseline is not None and outcome.speedup is not None:
        value, low, high = outcome.speedup
        verdict += f"; speedup over the baseline (trial {outcome.baseline.trial_id}): {display(value)}x" + (
            f" [{display(low)}, {display(high)}]" if math.isfinite(low) and math.isfinite(high) else ""
        )
    return [
        f"<h2>Re-measured in {outcome.rounds} interleaved rounds ({_esc(outcome.objective)}, "
        f"{policy.confidence:.0%} interval)</h2>",
        _table(headers, rows, [True] * len(headers)),
        f"<p>{_esc(verdict)}</p>",
    ]


def _dag_section(run: Run, tmp: Path) -> list[str]:
    """The logged metrics of a run that has metrics beyond its objectives, and their BoGraph DAG
    (nothing otherwise)."""
    feasible = [t for t in run.trials if t.feasible]
    logged = sorted({m for t in feasible for m in t.values} - set(run.names))
    if not logged:
        return []
    from bayestune.bograph.drawing import draw_dag
    from bayestune.run_graph import graph_of_run

    best = _best_by(run, 1)
    rows = []
    for m in logged[:MAX_ROWS]:
        v = [t.values[m] for t in feasible if m in t.values]
        rows.append([m, len(v), best[0].values.get(m, math.nan) if best else math.nan, min(v), max(v)])
    parts = [
        f"<h2>Logged metrics ({len(logged)})</h2>",
        _table(
            ["metric", "evaluations", f"at the best {run.names[0]}", "min", "max"],
            rows,
            [False, True, True, True, True],
        ),
    ]
    try:
        graph = graph_of_run(run)
        path = draw_dag(graph.dag, tmp / "dag.png", quality=graph.fit_quality())
    except (BayestuneError, ImportError) as exc:
        return parts + ["<h2>DAG of logged metrics</h2>", f'<p class="muted">not drawn: {_esc(exc)}</p>']
    stand_ins = graph.summary.stand_ins if graph.summary is not None else {}
    aside = (
        [
            f"<h3>Set aside: never parents of {_esc(graph.target)}</h3>",
            _table(["metric", "why"], [[n, why] for n, why in stand_ins.items()], [False, False]),
        ]
        if stand_ins
        else []
    )
    return parts + [
        "<h2>DAG of logged metrics (BoGraph)</h2>",
        _image(path, "DAG"),
        f'<p class="muted">effective dimension {graph.effective_dimension}: the most inputs any node '
        "model has; R² is each node's leave-one-out fit on its parents</p>",
        *aside,
    ]


def build_report(
    journal_path: str | os.PathLike,
    out_path: str | os.PathLike,
    *,
    space: Space | None = None,
    title: str | None = None,
    importance_method: str = "rf",
) -> Path:
    """Write the HTML report of the run in ``journal_path`` to ``out_path``; returns the path."""
    from bayestune import plot

    run = load_run(str(journal_path), space=space, read_only=True)
    stored = run.meta.get("scenario")
    scenario: Mapping[str, Any] = stored if isinstance(stored, Mapping) else {}
    title = title or f"bayestune report: {scenario.get('name') or Path(journal_path).stem}"
    parts = [
        f"<h1>{_esc(title)}</h1>",
        f'<p class="muted">written {time.strftime("%Y-%m-%d %H:%M:%S")} from {_esc(journal_path)}</p>',
        "<h2>Run</h2>",
        _summary(run, str(journal_path)),
    ]

    if len(run.objectives) > 1:
        front = pareto_trials(run.trials, run.objectives)
        parts.append(
            f"<h2>Pareto set ({len(front)} feasible, non-dominated configuration{'s' if len(front) != 1 else ''})</h2>"
        )
        if len(front) > MAX_ROWS:
            parts.append(f'<p class="muted">the first {MAX_ROWS} by {_esc(run.names[0])}</p>')
        parts.append(_table(*_trial_rows(front[:MAX_ROWS], run)) if front else "<p>no feasible evaluation</p>")
        best_each = []
        for o in run.objectives:
            ok = [t for t in run.trials if t.feasible and o.name in t.values]
            if ok:
                sign = 1.0 if o.minimize else -1.0
                best_each.append(min(ok, key=lambda t: sign * t.values[o.name]))
        parts.append("<h2>Best configuration per objective</h2>")
        headers, rows, numeric = _trial_rows(best_each, run)
        rows = [[f"{o.name}", *r] for o, r in zip([o for o in run.objectives], rows)]
        parts.append(_table(["best in", *headers], rows, [False, *numeric]) if rows else "<p>none</p>")
    else:
        outcome = _confirmation(str(journal_path), run)
        parts.extend(_best_section(run, outcome))
        parts.extend(_remeasurement_section(run, outcome))

    importance = run_importance(run, method=importance_method) if run.trials else {}
    with tempfile.TemporaryDirectory(prefix="bayestune-report-") as tmp:
        plots = have_matplotlib()
        files = plot.plot_run(run, tmp, importance=importance) if run.trials and plots else {}
        if not plots:  # the base install: the text and the tables, and a word on the plots
            logger.warning("report: no plots (matplotlib is not installed: pip install -e '.[plot]')")
            parts.append(f'<p class="muted">{_esc(NO_PLOTS)}</p>')
        parts.append("<h2>Convergence</h2>")
        parts.extend(_image(p, "convergence") for p in files.get("convergence", []))
        if files.get("pareto"):
            parts.append("<h2>Pareto fronts</h2>")
            parts.extend(_image(p, p.stem) for p in files["pareto"])
        source = "random forest" if importance_method == "rf" else "GP length-scales"
        parts.append(f"<h2>Feature importance ({source})</h2>")
        if importance:
            targets = list(importance)
            params = list(dict.fromkeys(p for t in targets for p in importance[t]))
            rows = [[p, *[f"{importance[t].get(p, 0.0):.3f}" for t in targets]] for p in params]
            parts.append(_table(["parameter", *targets], rows, [False, *[True] * len(targets)]))
            parts.append(
                '<p class="muted">shares sum to 1 per objective; "feasible" explains which parameters '
                "separate successful from failed or infeasible evaluations</p>"
            )
        else:
            parts.append("<p>not enough feasible evaluations</p>")
        parts.extend(_image(p, "importance") for p in files.get("importance", []))
        parts.append("<h2>Parallel coordinates</h2>")
        parts.extend(_image(p, "parallel coordinates") for p in files.get("parallel", []))
        parts.extend(_dag_section(run, Path(tmp)))

    failures = [t for t in run.trials if t.status is TrialStatus.FAILED][:20]
    if failures:
        parts.append("<h2>Failures (first 20)</h2>")
        rows = [
            [t.trial_id, t.failure_kind or "", (t.error or "").strip().splitlines()[0][:160] if t.error else ""]
            for t in failures
        ]
        parts.append(_table(["trial", "kind", "error"], rows, [True, False, False]))

    page = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>'
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
