"""The commands that run and check a scenario: ``optimize`` (a run, through
:func:`bayestune.tuning.tune`) and ``validate`` (load it, check its space, black box and
strategy, and describe it). They parse options, call the library and print.
"""

from __future__ import annotations

import importlib
import logging
import math
import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from bayestune.cli._common import (
    DEBUG_KEY,
    EXIT_ALL_FAILED,
    EXIT_INTERRUPTED,
    CliError,
    debug_option,
    load,
    winner_line,
)
from bayestune.exceptions import BayestuneError
from bayestune.formatting import display
from bayestune.scenario import format_key_handling
from bayestune.trial import FailureKind, TrialStatus


@click.command()
@click.argument("scenario_path", metavar="SCENARIO")
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    help="Evaluations in total (default: the scenario's; with --resume, the stored budget).",
)
@click.option(
    "--journal",
    "journal_path",
    type=click.Path(dir_okay=False),
    help="SQLite journal of the run (default: the scenario's 'journal', else SCENARIO-STEM.journal.db "
    "in the current directory).",
)
@click.option("--resume", is_flag=True, help="Continue the run recorded in the journal.")
@click.option("--force", is_flag=True, help="Delete an existing journal and start over.")
@click.option("--seed", type=click.IntRange(min=0), help="Random seed (overrides the scenario's).")
@click.option("--strategy", help="Search strategy (overrides the scenario's).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option(
    "--no-confirm",
    is_flag=True,
    help="End without the confirmation (the best few and the default configuration re-measured in "
    "interleaved rounds; the scenario's measurement section sizes it).",
)
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False),
    help="Also write all evaluations as a HyperMapper/BaCO CSV file at the end.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Evaluations run at once: local worker processes (default 1: in this process); with "
    "--dask, tasks in flight (default: the cluster's worker threads).",
)
@click.option(
    "--build-workers",
    type=click.IntRange(min=1),
    help="For a black box with a build step: builds at once (default: this machine's cores; with "
    "--dask: the workers' 'build' resources).",
)
@click.option(
    "--devices",
    metavar="LIST",
    help="For a black box with a build step: comma-separated devices, each measuring one configuration "
    "at a time (e.g. 0,1,2,3 for GPUs; default: cpu, where builds pause while a measurement runs).",
)
@click.option(
    "--dask",
    "dask_address",
    metavar="SCHEDULER_ADDRESS",
    help="Run evaluations on a Dask cluster, e.g. tcp://host:8786 (needs the dask extra).",
)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    help="Lock-step batches: ask N configurations, evaluate them all (an external tool gets one "
    "request of N rows), then ask again. Default: refill each worker as soon as it is free.",
)
@click.option(
    "--stop-after-failures",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Stop early when this many evaluations in a row failed and none succeeded yet (0: never).",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Wall-clock seconds (compile + run + optimizer) after which no new evaluation starts "
    "(overrides the scenario's time_limit); with a budget, whichever comes first ends the run.",
)
@click.option(
    "--prior-run",
    "prior_runs",
    multiple=True,
    metavar="PATH",
    help="An earlier run of the same space (journal .db, CSV, Kernel Tuner cache .json[.gz]), or a "
    "folder or glob pattern of them (files of other spaces are skipped, named), to learn from: "
    "it guides the model while it ranks this run's results well. Repeatable; adds to the "
    "scenario's 'transfer' runs.",
)
@click.option(
    "--transfer-mode",
    type=click.Choice(["auto", "model", "design", "both"]),
    help="How prior runs are used (overrides the scenario's transfer mode; default auto: their best "
    "configurations open the design while they measure better than its other points, then the "
    "model): 'model' the model only, 'design' their best configurations open the design "
    "whatever they measure, 'both' design and model.",
)
@debug_option
def optimize(
    scenario_path: str,
    budget: int | None,
    journal_path: str | None,
    resume: bool,
    force: bool,
    seed: int | None,
    strategy: str | None,
    no_progress: bool,
    no_confirm: bool,
    csv_path: str | None,
    workers: int | None,
    build_workers: int | None,
    devices: str | None,
    dask_address: str | None,
    batch: int | None,
    stop_after_failures: int,
    time_limit: float | None,
    prior_runs: tuple[str, ...],
    transfer_mode: str | None,
) -> None:
    """Tune the black box of SCENARIO, journaling every evaluation."""
    from bayestune.run import ExistingRunError
    from bayestune.storage import Journal
    from bayestune.tuning import Execution, default_journal_path, tune

    if resume and force:
        raise CliError("--resume and --force exclude each other")
    scenario = load(scenario_path)
    own_journal = journal_path or str(default_journal_path(scenario))
    scenario = _with_prior_runs(scenario, prior_runs, transfer_mode, exclude=(own_journal,))
    if dask_address:
        _quiet_dask_client()
    execution = Execution(
        workers=workers,
        dask=dask_address,
        batch=batch,
        stop_after_failures=stop_after_failures,
        time_limit=time_limit,
        build_workers=build_workers,
        devices=devices.split(",") if devices is not None else None,
    )
    try:
        result = tune(
            scenario,
            journal_path,
            budget=budget,
            resume=resume,
            force=force,
            strategy=strategy,
            seed=seed,
            execution=execution,
            progress=not no_progress,
            announce=lambda text: click.echo(text, err=True),
            confirm=not no_confirm,
        )
    except ExistingRunError as exc:  # tune names its Python arguments; here the flags
        raise exc.naming("--resume", "--force") from None
    path = result.journal_path
    if result.stopped_early is not None:
        click.echo(result.stopped_early, err=True)
        _print_summary(result, quote_failure=False)
        raise SystemExit(EXIT_ALL_FAILED)
    if result.interrupted:
        click.echo(
            f"interrupted after {result.optimizer.n_evaluated} of {result.budget} evaluations; the journal {path} "
            f"is intact. Resume with:\n  bayestune optimize {shlex.quote(scenario_path)} "
            f"--journal {shlex.quote(str(path))} --resume",
            err=True,
        )
        raise SystemExit(EXIT_INTERRUPTED)
    _print_summary(result)
    if result.peer_csv is not None:
        click.echo(f"csv: {result.peer_csv}")
        if scenario.peer_samples.pareto_path is not None:
            click.echo(f"Pareto front csv: {scenario.peer_samples.pareto_path}")
    if csv_path:
        with Journal.open(path) as journal:
            journal.export_csv(csv_path, parameter_names=scenario.space.names, objectives=scenario.objective_names)
        click.echo(f"csv: {csv_path}")
    if result.remeasure_interrupted:  # the search is whole; `--resume` finishes the confirmation
        raise SystemExit(EXIT_INTERRUPTED)


def _quiet_dask_client() -> None:
    """Without --debug, mute Dask's own loggers for the rest of this process: when the scheduler
    goes away its client logs reconnection tracebacks from a background thread (also after the
    run has ended), while the backend already reports the loss in one line."""
    if click.get_current_context().meta.get(DEBUG_KEY):
        return
    try:
        importlib.import_module("distributed")  # configures its loggers, which are then muted
    except ImportError:
        return  # the backend says what to install

    names = [n for n in logging.root.manager.loggerDict if n == "distributed" or n.startswith("distributed.")]
    for name in {"distributed", "distributed.client", "distributed.utils", *names}:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _print_summary(result: Any, *, quote_failure: bool = True) -> None:
    """The run's result; SystemExit(EXIT_ALL_FAILED), quoting the most common error, if every evaluation failed."""
    from bayestune.execution import most_common_failure

    optimizer, scenario, budget, path = result.optimizer, result.scenario, result.budget, result.journal_path
    n, failed = optimizer.n_evaluated, optimizer.n_failed
    best = optimizer.best
    counts = f"{n} evaluation(s), {failed} failed or infeasible"
    if budget is not None and n < budget and quote_failure:
        counts += f"; every feasible configuration was evaluated before the budget of {budget}"
    if best is None:
        click.echo(f"no feasible configuration found ({counts})")
        trials = [t for t in optimizer.trials if t.status.is_finished and t.failure_kind != FailureKind.LOST]
        if quote_failure and trials and all(t.status is TrialStatus.FAILED for t in trials):
            click.echo(f"every evaluation failed; {most_common_failure(trials)}", err=True)
            click.echo(f"journal: {path}")
            raise SystemExit(EXIT_ALL_FAILED)
    else:
        winner = result.remeasured.winner if result.remeasured is not None else None
        shown = next((t for t in optimizer.trials if winner is not None and t.trial_id == winner.trial_id), best)
        values = ", ".join(f"{o.name} = {display(shown.values.get(o.name, math.nan))}" for o in scenario.objectives)
        note = "" if shown is best else f"; the search's best, trial {best.trial_id}, re-measured worse"
        click.echo(f"best: {values}  (trial {shown.trial_id}, as the search measured it; {counts}{note})")
        width = max(len(name) for name in shown.config)
        for name, value in shown.config.items():
            click.echo(f"  {name.ljust(width)} = {display(value)}")
        if result.remeasure_interrupted:
            click.echo(
                "re-measurement interrupted; the rounds done are in the journal, and `optimize --resume` "
                "finishes the others"
            )
        elif result.remeasured is not None:
            click.echo(winner_line(result.remeasured))
        if len(scenario.objectives) > 1:
            from bayestune.pareto import pareto_trials

            front = pareto_trials(optimizer.trials, scenario.objectives)
            click.echo(
                f"Pareto front: {len(front)} configuration(s); see them with "
                f"`bayestune report {shlex.quote(str(path))}`"
            )
    click.echo(f"journal: {path}")


@click.command()
@click.argument("scenario_path", metavar="SCENARIO")
@debug_option
def validate(scenario_path: str) -> None:
    """Load SCENARIO, check its space and black box, and describe it."""
    from bayestune.evaluators import CommandEvaluator
    from bayestune.measurement.build import make_evaluator, measuring_part, unwrapped
    from bayestune.measurement.racing import RacingEvaluator

    scenario = load(scenario_path)
    racing = None
    space = scenario.space
    click.echo(f"scenario {scenario.name!r} ({scenario_path})")
    click.echo(f"  parameters ({len(space)}):")
    width = max(len(n) for n in space.names)
    for p in space.parameters:
        spec = {k: v for k, v in p.to_spec().items() if k not in ("name", "type")}
        details = " ".join(f"{k}={v}" for k, v in spec.items())
        click.echo(f"    {p.name.ljust(width)}  {p.kind:<11}  {details}".rstrip())
    click.echo(f"  constraints ({len(space.constraints)}):")
    for c in space.constraints:
        click.echo(f"    {c.expression}")
    space.ensure_feasible()
    count = space.count_feasible()
    cartesian = space.cartesian_size
    if count is None:
        click.echo("  feasible configurations: not countable (continuous parameters)")
    else:
        click.echo(f"  feasible configurations: {count:,} of {int(cartesian):,} in the cartesian product")
    objectives = ", ".join(f"{o.name} ({o.direction})" for o in scenario.objectives)
    click.echo(f"  objectives: {objectives}")
    click.echo(
        f"  budget {scenario.budget if scenario.budget is not None else 'unlimited (time limit)'}, strategy {scenario.strategy}, initial design {scenario.design.method} "
        f"x {scenario.design.size}, seed {scenario.seed}"
    )
    _check_strategy(scenario)
    if scenario.blackbox is None:
        click.echo("  black box: none (drive the optimizer from Python with ask/tell)")
    else:
        with make_evaluator(scenario) as evaluator:
            measuring = measuring_part(evaluator)
            racing = measuring.note() if isinstance(measuring, RacingEvaluator) else None
            black_box = unwrapped(evaluator)
            if isinstance(black_box, CommandEvaluator):
                black_box.check_program()
        bb = scenario.blackbox
        timeout = f", timeout {bb.timeout:g} s" if bb.timeout else ""
        click.echo(f"  black box: {bb.kind} {bb.target!r}{timeout} (set up OK)")
        if bb.build is not None:
            build_timeout = f", timeout {bb.build_timeout:g} s" if bb.build_timeout else ""
            click.echo(
                f"  build step: {bb.build_kind} {bb.build!r}{build_timeout}; builds run in parallel "
                "(--build-workers, default: the cores), each device measures one at a time (--devices, default cpu)"
            )
    if scenario.time_limit is not None or scenario.batch is not None:
        click.echo(f"  time limit {scenario.time_limit} s, batch {scenario.batch}")
    if scenario.measurement is not None:
        baseline = scenario.measurement.baseline
        if isinstance(baseline, Mapping):
            try:
                scenario.space.validate_config(dict(baseline))
            except BayestuneError as exc:
                raise CliError(f"measurement.baseline is not a configuration of the space: {exc}") from None
        click.echo(f"  measurement: {_describe_measurement(scenario.measurement, racing)}")
    elif len(scenario.objectives) == 1 and scenario.blackbox is None:  # a client-server file: `serve`
        click.echo(
            "  confirmation: none (no black box to re-measure: `bayestune serve` hands each evaluation to its client)"
        )
    elif len(scenario.objectives) == 1:
        from bayestune.measurement_spec import MeasurementSpec

        if racing:
            click.echo(f"  {racing}")
        top, rounds = MeasurementSpec().confirmation
        click.echo(
            f"  confirmation: the best {top} and the default configuration re-measured in {rounds} "
            "interleaved rounds at the end (measurement: {remeasure_top: 0} turns it off)"
        )
    if scenario.key_handling:
        click.echo(f"  HyperMapper/BaCO keys ({len(scenario.key_handling)}):")
        for line in format_key_handling(scenario.key_handling):
            click.echo(f"    {line}")
    click.echo("OK")


def _describe_measurement(spec: Any, racing: str | None = None) -> str:
    """``warm-up 1, median of 3 to 10 runs until ±2 %, early abort; re-measure top 3 x 5 rounds; check``."""
    p = spec.policy
    runs = f"{p.repeats}" if p.max_repeats is None else f"{p.repeats} to {p.max_repeats}"
    parts = [f"{p.statistic} of {runs} run(s)" + (f" until ±{p.precision:.1%}" if p.precision else "")]
    if racing:
        parts = [f"{p.statistic} of the runs; {racing}"]
    if p.warmup:
        parts.insert(0, f"warm-up {p.warmup}")
    if p.early_abort:
        parts.append("early abort")
    text = ", ".join(parts)
    top, rounds = spec.confirmation
    if top:
        baseline = {"default": " and the default configuration", None: ""}.get(
            spec.baseline if isinstance(spec.baseline, str) or spec.baseline is None else "", " and the baseline"
        )
        text += f"; confirm: re-measure the best {top}{baseline} in {rounds} interleaved rounds"
        from bayestune.measurement.statistics import runs_for_interval

        needed = runs_for_interval(p.statistic, p.confidence)
        if rounds < needed:
            text += (
                f" (too few for a {p.confidence:.0%} interval of the {p.statistic}: the winner comes "
                f"without one; {needed} rounds give it)"
            )
    if spec.check is not None:
        what = [f"expected {dict(spec.check.expected)}"] if spec.check.expected else []
        what += [f"function {spec.check.function}"] if spec.check.function is not None else []
        text += "; correctness check: " + ", ".join(what)
    return text


def _check_strategy(scenario: Any) -> None:
    """Build the scenario's strategy once: unknown strategies and options fail here, not mid-run."""
    import numpy as np

    from bayestune.strategies.base import make_strategy

    make_strategy(
        scenario.strategy,
        scenario.space,
        list(scenario.objectives),
        np.random.default_rng(0),
        dict(scenario.strategy_options),
    )


def _with_prior_runs(
    scenario: Any, paths: tuple[str, ...], mode: str | None = None, exclude: tuple[str, ...] = ()
) -> Any:
    """The scenario with ``--prior-run`` files added to its transfer, every run loaded now: a prior
    run that does not fit the space fails before a journal is created; the run's own journal
    (``exclude``) is never one of them."""
    from bayestune.scenario import TransferSpec
    from bayestune.transfer import load_prior_runs

    spec = scenario.transfer.resolved(scenario.base_dir) if scenario.transfer else None
    if not paths and spec is None:
        if mode:
            raise CliError("--transfer-mode needs prior runs: give --prior-run PATH or a 'transfer' in the scenario")
        return scenario
    runs = (spec.runs if spec else ()) + tuple(str(Path(p).resolve()) for p in paths)
    loaded = load_prior_runs(runs, scenario.space, scenario.objectives[0], exclude=exclude)
    if spec is not None:
        spec = TransferSpec(tuple(loaded), mode=mode or spec.mode, top=spec.top)
    else:
        spec = TransferSpec(tuple(loaded), mode=mode) if mode else TransferSpec(tuple(loaded))
    return replace(scenario, transfer=spec)
