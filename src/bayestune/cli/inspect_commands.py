"""The commands that read a run's journal: ``show`` (a text summary), ``backup`` (a safe copy),
``plot`` (PNG figures), ``report`` (an HTML report) and ``dag`` (BoGraph's learned graph).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import click

from bayestune.cli._common import CliError, debug_option, run_space, scenario_space_option, table, winner_line
from bayestune.formatting import display
from bayestune.measurement.remeasure import confirmed_first, latest_confirmation
from bayestune.trial import FailureKind, TrialStatus

#: Lines of each error `show --failures` prints (stderr tails included).
FAILURE_LINES = 12


@click.command()
@click.argument("journal_path", metavar="JOURNAL")
@click.option(
    "--top",
    "top",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="How many of the best feasible configurations to list.",
)
@click.option("--all", "show_all", is_flag=True, help="List every trial in order, whatever its status.")
@click.option("--failures", is_flag=True, help="List the failed and infeasible trials with their errors.")
@debug_option
def show(journal_path: str, top: int, show_all: bool, failures: bool) -> None:
    """Summarise a journal: the best configurations, status counts and failure kinds."""
    from bayestune import run as run_meta
    from bayestune.storage import Journal

    with Journal.open(journal_path, read_only=True) as journal:  # never a write, not even a checkpoint
        trials = journal.trials()
        objectives = run_meta.stored_objectives(journal, trials)
        params = run_meta.stored_parameters(journal, trials)
        budget = run_meta.stored_budget(journal)
        output_constraints = run_meta.stored_output_constraints(journal)
        first = objectives[0] if objectives else None
        remeasurements = journal.remeasurements()
        not_run = {int(i) for i in journal.get_meta(run_meta.META_NOT_RUN) or []}
        measurement = run_meta.stored_measurement(journal.meta())
        confirmation = run_meta.stored_confirmation(journal.meta())
    names = [o.name for o in objectives]
    outcome = _confirmation(remeasurements, trials, first, measurement, confirmation)
    best = confirmed_first(trials, outcome, first)[:top] if first else []
    confirmed = {} if outcome is None else {e.trial_id: e.value for e in outcome.estimates}

    lost = [t for t in trials if t.failure_kind == FailureKind.LOST]
    by_status = Counter(t.status for t in trials if t.failure_kind != FailureKind.LOST)
    kinds = Counter(
        t.failure_kind or "unknown"
        for t in trials
        if t.status is TrialStatus.FAILED and t.failure_kind != FailureKind.LOST
    )
    unrun = sum(1 for t in trials if t.trial_id in not_run and t.status.is_finished)
    finished = sum(n for s, n in by_status.items() if s.is_finished) - unrun
    header = f"{journal_path}: {finished} evaluation(s)" + (f" of budget {budget}" if budget else "")
    if unrun:  # e.g. TVM: refused schedules and twins of a measured program, told without a run
        header += f", and {unrun} trial(s) told without running (refused before building, or a measured program's twin)"
    click.echo(header)
    parts = [
        f"ok {by_status[TrialStatus.OK]}",
        f"infeasible {by_status[TrialStatus.INFEASIBLE]}",
        f"failed {by_status[TrialStatus.FAILED]}",
    ]
    if kinds:
        parts[-1] += " (" + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + ")"
    parts.append(f"pending {by_status[TrialStatus.PENDING]}")
    if lost:
        parts.append(f"lost in flight {len(lost)} (re-run on resume)")
    click.echo("  " + ", ".join(parts))

    def cells(t: Any, with_confirmed: bool = False) -> list[str]:
        extra = [display(confirmed[t.trial_id]) if t.trial_id in confirmed else ""] if with_confirmed else []
        return (
            [display(t.values[n]) if n in t.values else "" for n in names]
            + extra
            + [display(t.config.get(p, "")) for p in params]
        )

    if show_all:
        rows = [
            [str(t.trial_id), t.status.value + (f":{t.failure_kind}" if t.failure_kind else ""), *cells(t)]
            for t in trials
        ]
        click.echo("\n" + table(["trial", "status", *names, *params], rows))
    elif first is not None:
        title = f"best {len(best)} feasible by {first.name} ({first.direction})"
        if confirmed:
            title += "; the confirmed winner first, then by the confirmed value where there is one"
        if len(objectives) > 1:
            title += f"; the other objectives are {names[1:]}"
        click.echo(f"\n{title}:")
        if best:
            rows = [[str(rank), str(t.trial_id), *cells(t, bool(confirmed))] for rank, t in enumerate(best, 1)]
            extra = [f"confirmed {first.name}"] if confirmed else []
            click.echo(table(["rank", "trial", *names, *extra, *params], rows))
        else:
            click.echo("  (none)")

    if first is not None and not show_all:
        _show_repeats(best, first.name, measurement)
        _show_remeasurements(remeasurements, trials, first, measurement, confirmation)
    _show_time(trials)

    if failures:
        bad = [t for t in trials if t.status in (TrialStatus.FAILED, TrialStatus.INFEASIBLE)]
        click.echo(f"\nfailed or infeasible trials ({len(bad)}):")
        for t in bad:
            config = " ".join(f"{p}={display(t.config.get(p, ''))}" for p in params)
            click.echo(f"  trial {t.trial_id} [{t.failure_kind or t.status.value}] {config}")
            error = (t.error or "").strip() or _infeasibility_reason(t, output_constraints)
            for line in error.splitlines()[:FAILURE_LINES]:
                click.echo(f"      {line}")
            if len(error.splitlines()) > FAILURE_LINES:
                click.echo(f"      ... ({len(error.splitlines()) - FAILURE_LINES} more line(s))")


def _confirmation(
    remeasurements: Sequence[Any], trials: Sequence[Any], objective: Any, measurement: Any, confirmation: Any
) -> Any:
    """The latest confirmation's outcome (None without re-measurements or an objective)."""
    if objective is None:
        return None
    baseline = (confirmation or {}).get("baseline") or {}
    return latest_confirmation(
        remeasurements,
        trials,
        objective,
        statistic=measurement.policy.statistic,
        confidence=measurement.policy.confidence,
        baseline_id=baseline.get("trial_id"),
        max_failure_share=measurement.policy.max_failure_share,
    )


def _show_repeats(best: Sequence[Any], objective: str, measurement: Any) -> None:
    """The repeated measurements behind the best values: how many, their spread and interval."""
    from bayestune.measurement.statistics import confidence_interval

    rows = []
    for t in best:
        samples = t.repeats.get(objective, ())
        if len(samples) > 1:
            low, high = confidence_interval(samples, measurement.policy.statistic, measurement.policy.confidence)
            interval = f"[{display(low)}, {display(high)}]" if math.isfinite(low) and math.isfinite(high) else "-"
            rows.append([str(t.trial_id), str(len(samples)), display(min(samples)), display(max(samples)), interval])
    if rows:
        click.echo(
            f"\nrepeats of {objective} ({measurement.policy.statistic} shown above; "
            f"{measurement.policy.confidence:.0%} interval):"
        )
        click.echo(table(["trial", "runs", "min", "max", "interval"], rows))


def _show_remeasurements(
    remeasurements: Sequence[Any], trials: Sequence[Any], objective: Any, measurement: Any, confirmation: Any = None
) -> None:
    """The interleaved re-measurement rounds, one column per round, and the winner they declare
    (with the baseline and the speedup the run's confirmation measured them against)."""
    from bayestune.measurement.remeasure import confirmation_rounds, summarise_rounds

    if not remeasurements:
        return
    first, _ = confirmation_rounds(remeasurements)  # the latest confirmation's rounds
    remeasurements = [r for r in remeasurements if r.round >= first]
    policy = measurement.policy
    baseline = (confirmation or {}).get("baseline") or {}
    outcome = summarise_rounds(
        remeasurements,
        trials,
        objective,
        statistic=policy.statistic,
        confidence=policy.confidence,
        baseline_id=baseline.get("trial_id"),
        max_failure_share=policy.max_failure_share,
    )
    rounds = sorted({r.round for r in remeasurements})
    rows = []
    for estimate in outcome.estimates:
        by_round = {r.round: r for r in remeasurements if r.trial_id == estimate.trial_id}
        cells = [
            ("failed" if by_round[n].error else display(by_round[n].values.get(objective.name, math.nan)))
            if n in by_round
            else ""
            for n in rounds
        ]
        rows.append([str(estimate.trial_id), display(estimate.searched_value), *cells, display(estimate.value)])
    click.echo(f"\nre-measured in {len(rounds)} interleaved round(s) ({objective.name}):")
    click.echo(table(["trial", "searched", *[f"r{n}" for n in rounds], policy.statistic], rows))
    click.echo(winner_line(outcome))


def _show_time(trials: Sequence[Any]) -> None:
    """Where the time went. Trials run in overlapping batches (TVM measures a batch at once)
    would add up to more than the run took: then the wall time, and the phases as the trials'
    own times with what they add up to said, not an ``other`` share of time nobody spent."""
    from bayestune.measurement.timing import OTHER_PHASE, format_breakdown, time_breakdown

    breakdown = time_breakdown(trials)
    wall = wall_seconds(trials)
    own = sum(t.duration or 0.0 for t in trials if t.status.is_finished)
    if wall > 0 and own > 1.05 * wall:
        phases = {k: v for k, v in breakdown.items() if k != OTHER_PHASE}
        text = f"{display(round(wall, 1))} s wall, trials overlapping (their own times add up to {display(round(own, 1))} s)"
        click.echo(f"\ntime: {text}" + (f"; {format_breakdown(phases, shares=False)}" if phases else ""))
        return
    text = format_breakdown(breakdown)
    if text:
        click.echo(f"\ntime: {text}")


def wall_seconds(trials: Sequence[Any]) -> float:
    """Seconds during which some trial ran: the union of their start-to-finish intervals."""
    spans = sorted(
        (t.started_at, t.finished_at) for t in trials if t.started_at is not None and t.finished_at is not None
    )
    total, end = 0.0, -math.inf
    for start, finish in spans:
        if finish > end:
            total += finish - max(start, end)
            end = finish
    return total


def _infeasibility_reason(trial: Any, output_constraints: Any) -> str:
    """Why a trial without error text is infeasible: the output constraints it breaks, or the
    black box's own feasibility flag."""
    from bayestune import run as run_meta

    if trial.failure_kind == FailureKind.OUTPUT_CONSTRAINT:
        broken = run_meta.broken_output_constraints(output_constraints, trial)
        if broken:
            return "breaks the output constraint(s) " + "; ".join(broken)
        return "breaks an output constraint"
    if trial.status is TrialStatus.INFEASIBLE:
        return "the black box reported it infeasible"
    return "(no error text recorded)"


@click.command()
@click.argument("journal_path", metavar="JOURNAL")
@click.argument("out_path", metavar="COPY.db", type=click.Path(dir_okay=False))
@debug_option
def backup(journal_path: str, out_path: str) -> None:
    """Copy a journal safely, also while its run is writing or after a crash.

    Copying only the .db file can lose the run: recent evaluations live in the -wal file until
    a checkpoint. This copy includes them and is a single self-contained file.
    """
    from bayestune.storage import Journal

    with Journal.open(journal_path, read_only=True) as journal:
        journal.backup(out_path)
        n = journal.n_finished()
    click.echo(f"{out_path}: a copy of {journal_path} ({n} finished evaluation(s))")


_PLOT_KINDS = ("convergence", "pareto", "importance", "parallel")


@click.command()
@click.argument("journal_path", metavar="JOURNAL")
@click.option(
    "-o",
    "--out",
    "out_dir",
    default=".",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Directory for the PNG files.",
)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice([*_PLOT_KINDS, "all"]),
    default=("all",),
    show_default=True,
    help="Which plots (repeatable).",
)
@scenario_space_option
@click.option("--prefix", default="", help="Prefix of the file names.")
@debug_option
def plot(journal_path: str, out_dir: str, kinds: tuple[str, ...], scenario_path: str | None, prefix: str) -> None:
    """Write PNG plots of a journal: convergence, Pareto fronts, feature importance, parallel coordinates."""
    from bayestune.plot import plot_run
    from bayestune.run import load_run

    run = load_run(journal_path, space=run_space(scenario_path), read_only=True)
    if not run.trials:
        raise CliError(f"journal {journal_path!r} holds no finished evaluation to plot")
    chosen = _PLOT_KINDS if "all" in kinds else tuple(dict.fromkeys(kinds))
    files = plot_run(run, out_dir, chosen, prefix=prefix)
    if "pareto" in chosen and "pareto" not in files:
        click.echo("pareto: skipped (the run has one objective)", err=True)
    for paths in files.values():
        for path in paths:
            click.echo(str(path))


@click.command()
@click.argument("journal_path", metavar="JOURNAL")
@click.option(
    "-o",
    "--out",
    "out_path",
    default="report.html",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="HTML file to write.",
)
@scenario_space_option
@click.option(
    "--importance",
    "importance_method",
    type=click.Choice(["rf", "gp"]),
    default="rf",
    show_default=True,
    help="Feature importance from random-forest importances or GP length-scales.",
)
@debug_option
def report(journal_path: str, out_path: str, scenario_path: str | None, importance_method: str) -> None:
    """Write a self-contained HTML report of a journal (tables, Pareto set, embedded plots)."""
    from bayestune.report import build_report

    path = build_report(journal_path, out_path, space=run_space(scenario_path), importance_method=importance_method)
    click.echo(f"report: {path}")


@click.command()
@click.argument("journal_path", metavar="JOURNAL")
@click.option(
    "-o",
    "--out",
    "out_path",
    default="dag.png",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Picture to write (.png or .svg).",
)
@scenario_space_option
@debug_option
def dag(journal_path: str, out_path: str, scenario_path: str | None) -> None:
    """Draw the BoGraph DAG learned from a journal's logged metrics, with each node's fit quality."""
    from bayestune.bograph.drawing import draw_dag
    from bayestune.run import load_run
    from bayestune.run_graph import graph_of_run

    graph = graph_of_run(load_run(journal_path, space=run_space(scenario_path), read_only=True))
    quality = graph.fit_quality()
    n_parameters = sum(1 for _, r in graph.dag.nodes(data="role") if r == "parameter")
    title = f"{graph.target}: effective dimension {graph.effective_dimension} of {n_parameters} parameters"
    click.echo(f"{draw_dag(graph.dag, out_path, quality=quality, title=title)}  ({title})")
    click.echo(
        table(
            ["node", "parents", "fit R² (leave-one-out)"],
            [[n, ", ".join(graph.dag.predecessors(n)), f"{q:.3f}"] for n, q in quality.items()],
        )
    )
    stand_ins = graph.summary.stand_ins if graph.summary is not None else {}
    if stand_ins:
        click.echo(f"set aside, never parents of {graph.target} (functions of the objective or of each other):")
        click.echo(table(["metric", "why"], [[n, why] for n, why in stand_ins.items()]))
