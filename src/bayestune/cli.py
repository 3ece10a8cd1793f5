"""The ``bayestune`` command: optimize a scenario, inspect and export journals, check scenarios.

The CLI only builds objects from a scenario and calls the same ask/tell loop Python users
call (:func:`bayestune.execution.run`, serial by default, or with ``--workers``/``--dask``). Errors raised on purpose
(:class:`~bayestune.exceptions.BayestuneError`) and file errors become one ``error: ...``
line on stderr and exit code 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import importlib
import logging
import math
import shlex
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from bayestune._version import __version__
from bayestune.exceptions import BayestuneError
from bayestune.console import TqdmLogHandler
from bayestune.cli_results import compare, dashboard, export
from bayestune.formatting import display
from bayestune.trial import FailureKind, TrialStatus
from bayestune.scenario import format_key_handling

logger = logging.getLogger(__name__)

#: Exit code of a run stopped by Ctrl-C / SIGTERM (the shell convention for SIGINT).
EXIT_INTERRUPTED = 130
#: Exit code of an error on purpose (bad scenario, journal conflict, ...), like click's usage errors.
EXIT_ERROR = 2
#: Lines of each error `show --failures` prints (stderr tails included).
FAILURE_LINES = 12
#: Exit code of a run in which every evaluation failed (a broken black box, not a bad scenario).
EXIT_ALL_FAILED = 3
_DEBUG_KEY = "bayestune.debug"


# ---- error handling --------------------------------------------------------------------------
class CliError(click.ClickException):
    """Printed as one ``error: ...`` line; exit code 2."""

    exit_code = EXIT_ERROR

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # `bayestune show run.db | head`: click ends quietly (exit 1), no "error: Broken pipe"
        except (BayestuneError, OSError) as exc:
            if ctx.meta.get(_DEBUG_KEY):
                raise
            raise CliError(_one_line(exc)) from exc


_LEVEL_KEY = "bayestune.log_level"


def _set_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[_DEBUG_KEY] = True
        log = logging.getLogger("bayestune")
        ctx.meta.setdefault(_LEVEL_KEY, log.level)
        log.setLevel(logging.DEBUG)


def _debug_option(fn: Any) -> Any:
    return click.option("--debug", is_flag=True, expose_value=False, is_eager=True, callback=_set_debug,
                        help="Show tracebacks and debug messages.")(fn)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bayestune")
@_debug_option
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Bayesian optimization for autotuning compilers and computer systems.

    Start with `bayestune validate SCENARIO`, then `bayestune optimize SCENARIO`.
    """
    log = logging.getLogger("bayestune")
    previous_level = ctx.meta.setdefault(_LEVEL_KEY, log.level)
    if not ctx.meta.get(_DEBUG_KEY):
        log.setLevel(logging.WARNING)
    handler = TqdmLogHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    log.addHandler(handler)

    def restore() -> None:
        log.removeHandler(handler)
        log.setLevel(previous_level)

    ctx.call_on_close(restore)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``bayestune``, ``python -m bayestune``)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="bayestune")


# ---- shared helpers --------------------------------------------------------------------------
def _load(path: str) -> Any:
    from bayestune.scenario import load_scenario

    return load_scenario(path)


def _with_prior_runs(scenario: Any, paths: tuple[str, ...], mode: str | None = None) -> Any:
    """The scenario with ``--prior-run`` files added to its transfer, every run loaded now: a prior
    run that does not fit the space fails before a journal is created."""
    from dataclasses import replace

    from bayestune.scenario import TransferSpec
    from bayestune.transfer import load_prior_runs

    spec = scenario.transfer.resolved(scenario.base_dir) if scenario.transfer else None
    if not paths and spec is None:
        if mode:
            raise CliError("--transfer-mode needs prior runs: give --prior-run PATH or a 'transfer' in the scenario")
        return scenario
    runs = (spec.runs if spec else ()) + tuple(str(Path(p).resolve()) for p in paths)
    loaded = load_prior_runs(runs, scenario.space, scenario.objectives[0])
    if spec is not None:
        spec = TransferSpec(tuple(loaded), mode=mode or spec.mode, top=spec.top)
    else:
        spec = TransferSpec(tuple(loaded), mode=mode) if mode else TransferSpec(tuple(loaded))
    return replace(scenario, transfer=spec)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Aligned text table; columns whose cells all look numeric are right-aligned."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    numeric = [bool(rows) and all(_looks_numeric(r[i]) for r in rows) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text == ""
    return True


# ---- optimize --------------------------------------------------------------------------------
@cli.command()
@click.argument("scenario_path", metavar="SCENARIO")
@click.option("--budget", type=click.IntRange(min=1),
              help="Evaluations in total (default: the scenario's; with --resume, the stored budget).")
@click.option("--journal", "journal_path", type=click.Path(dir_okay=False),
              help="SQLite journal of the run (default: the scenario's 'journal', else SCENARIO-STEM.journal.db "
                   "in the current directory).")
@click.option("--resume", is_flag=True, help="Continue the run recorded in the journal.")
@click.option("--force", is_flag=True, help="Delete an existing journal and start over.")
@click.option("--seed", type=click.IntRange(min=0), help="Random seed (overrides the scenario's).")
@click.option("--strategy", help="Search strategy (overrides the scenario's).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False),
              help="Also write all evaluations as a HyperMapper/BaCO CSV file at the end.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Evaluations run at once: local worker processes (default 1: in this process); with "
                   "--dask, tasks in flight (default: the cluster's worker threads).")
@click.option("--dask", "dask_address", metavar="SCHEDULER_ADDRESS",
              help="Run evaluations on a Dask cluster, e.g. tcp://host:8786 (needs bayestune[dask]).")
@click.option("--batch", type=click.IntRange(min=1),
              help="Lock-step batches: ask N configurations, evaluate them all (an external tool gets one "
                   "request of N rows), then ask again. Default: refill each worker as soon as it is free.")
@click.option("--stop-after-failures", type=click.IntRange(min=0), default=10, show_default=True,
              help="Stop early when this many evaluations in a row failed and none succeeded yet (0: never).")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Wall-clock seconds (compile + run + optimizer) after which no new evaluation starts "
                   "(overrides the scenario's time_limit); with a budget, whichever comes first ends the run.")
@click.option("--prior-run", "prior_runs", multiple=True, type=click.Path(dir_okay=False), metavar="PATH",
              help="An earlier run of the same space (journal .db, CSV, Kernel Tuner cache .json[.gz]) to "
                   "learn from: it guides the model while it ranks this run's results well. Repeatable; adds "
                   "to the scenario's 'transfer' runs.")
@click.option("--transfer-mode", type=click.Choice(["model", "design", "both"]),
              help="How prior runs are used (overrides the scenario's transfer mode; default model): 'design' "
                   "opens the initial design with their best configurations, 'both' does both.")
@_debug_option
def optimize(scenario_path: str, budget: int | None, journal_path: str | None, resume: bool, force: bool,
             seed: int | None, strategy: str | None, no_progress: bool, csv_path: str | None,
             workers: int | None, dask_address: str | None, batch: int | None, stop_after_failures: int,
             time_limit: float | None, prior_runs: tuple[str, ...], transfer_mode: str | None) -> None:
    """Tune the black box of SCENARIO, journaling every evaluation."""
    from bayestune.storage import Journal
    from bayestune.tuning import Execution, tune

    if resume and force:
        raise CliError("--resume and --force exclude each other")
    scenario = _with_prior_runs(_load(scenario_path), prior_runs, transfer_mode)
    if dask_address:
        _quiet_dask_client()
    execution = Execution(workers=workers, dask=dask_address, batch=batch, stop_after_failures=stop_after_failures,
                          time_limit=time_limit)
    result = tune(scenario, journal_path, budget=budget, resume=resume, force=force, strategy=strategy, seed=seed,
                  execution=execution, progress=not no_progress, announce=lambda text: click.echo(text, err=True))
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
            err=True)
        raise SystemExit(EXIT_INTERRUPTED)
    _print_summary(result)
    if csv_path:
        with Journal.open(path) as journal:
            journal.export_csv(csv_path, parameter_names=scenario.space.names, objectives=scenario.objective_names)
        click.echo(f"csv: {csv_path}")


def _quiet_dask_client() -> None:
    """Without --debug, mute Dask's own loggers for the rest of this process: when the scheduler
    goes away its client logs reconnection tracebacks from a background thread (also after the
    run has ended), while the backend already reports the loss in one line."""
    if click.get_current_context().meta.get(_DEBUG_KEY):
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
        values = ", ".join(f"{o.name} = {display(best.values.get(o.name, math.nan))}"
                           for o in scenario.objectives)
        click.echo(f"best: {values}  (trial {best.trial_id}; {counts})")
        width = max(len(name) for name in best.config)
        for name, value in best.config.items():
            click.echo(f"  {name.ljust(width)} = {display(value)}")
        if result.remeasure_interrupted:
            click.echo("re-measurement interrupted; the rounds done are in the journal, and `optimize --resume` "
                       "finishes the others")
        elif result.remeasured is not None:
            click.echo(_winner_line(result.remeasured))
        if len(scenario.objectives) > 1:
            from bayestune.pareto import pareto_trials

            front = pareto_trials(optimizer.trials, scenario.objectives)
            click.echo(f"Pareto front: {len(front)} configuration(s); see them with "
                       f"`bayestune report {shlex.quote(str(path))}`")
    click.echo(f"journal: {path}")


def _winner_line(outcome: Any) -> str:
    """``winner after re-measurement: trial 7, time = 1.02 [0.99, 1.05] (95% CI, median of 5 rounds)``."""
    winner = outcome.winner
    if winner is None:
        return "winner after re-measurement: none (every candidate failed a re-measurement)"
    interval = (f"[{display(winner.low)}, {display(winner.high)}] ({outcome.confidence:.0%} CI"
                if math.isfinite(winner.low) and math.isfinite(winner.high) else "(interval needs more rounds")
    return (f"winner after re-measurement: trial {winner.trial_id}, {outcome.objective} = {display(winner.value)} "
            f"{interval}, {outcome.statistic} of {len(winner.samples)} round(s))")


# ---- show ------------------------------------------------------------------------------------
@cli.command()
@click.argument("journal_path", metavar="JOURNAL")
@click.option("--top", "top", type=click.IntRange(min=1), default=10, show_default=True,
              help="How many of the best feasible configurations to list.")
@click.option("--all", "show_all", is_flag=True, help="List every trial in order, whatever its status.")
@click.option("--failures", is_flag=True, help="List the failed and infeasible trials with their errors.")
@_debug_option
def show(journal_path: str, top: int, show_all: bool, failures: bool) -> None:
    """Summarise a journal: the best configurations, status counts and failure kinds."""
    from bayestune import run as run_meta
    from bayestune.storage import Journal

    with Journal.open(journal_path) as journal:
        trials = journal.trials()
        objectives = run_meta.stored_objectives(journal, trials)
        params = run_meta.stored_parameters(journal, trials)
        budget = run_meta.stored_budget(journal)
        output_constraints = run_meta.stored_output_constraints(journal)
        first = objectives[0] if objectives else None
        best = journal.best(first.name, minimize=first.minimize, k=top) if first else []
        remeasurements = journal.remeasurements()
        measurement = run_meta.stored_measurement(journal.meta())
    names = [o.name for o in objectives]

    lost = [t for t in trials if t.failure_kind == FailureKind.LOST]
    by_status = Counter(t.status for t in trials if t.failure_kind != FailureKind.LOST)
    kinds = Counter(t.failure_kind or "unknown" for t in trials
                    if t.status is TrialStatus.FAILED and t.failure_kind != FailureKind.LOST)
    finished = sum(n for s, n in by_status.items() if s.is_finished)
    header = f"{journal_path}: {finished} evaluation(s)" + (f" of budget {budget}" if budget else "")
    click.echo(header)
    parts = [f"ok {by_status[TrialStatus.OK]}", f"infeasible {by_status[TrialStatus.INFEASIBLE]}",
             f"failed {by_status[TrialStatus.FAILED]}"]
    if kinds:
        parts[-1] += " (" + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + ")"
    parts.append(f"pending {by_status[TrialStatus.PENDING]}")
    if lost:
        parts.append(f"lost in flight {len(lost)} (re-run on resume)")
    click.echo("  " + ", ".join(parts))

    def cells(t: Any) -> list[str]:
        return ([display(t.values[n]) if n in t.values else "" for n in names]
                + [display(t.config.get(p, "")) for p in params])

    if show_all:
        rows = [[str(t.trial_id), t.status.value + (f":{t.failure_kind}" if t.failure_kind else ""), *cells(t)]
                for t in trials]
        click.echo("\n" + _table(["trial", "status", *names, *params], rows))
    elif first is not None:
        title = f"best {len(best)} feasible by {first.name} ({first.direction})"
        if len(objectives) > 1:
            title += f"; the other objectives are {names[1:]}"
        click.echo(f"\n{title}:")
        if best:
            rows = [[str(rank), str(t.trial_id), *cells(t)] for rank, t in enumerate(best, 1)]
            click.echo(_table(["rank", "trial", *names, *params], rows))
        else:
            click.echo("  (none)")

    if first is not None and not show_all:
        _show_repeats(best, first.name, measurement)
        _show_remeasurements(remeasurements, trials, first, measurement)
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
        click.echo(f"\nrepeats of {objective} ({measurement.policy.statistic} shown above; "
                   f"{measurement.policy.confidence:.0%} interval):")
        click.echo(_table(["trial", "runs", "min", "max", "interval"], rows))


def _show_remeasurements(remeasurements: Sequence[Any], trials: Sequence[Any], objective: Any,
                         measurement: Any) -> None:
    """The interleaved re-measurement rounds, one column per round, and the winner they declare."""
    from bayestune.measurement.remeasure import summarise_rounds

    if not remeasurements:
        return
    policy = measurement.policy
    outcome = summarise_rounds(remeasurements, trials, objective, statistic=policy.statistic,
                               confidence=policy.confidence)
    rounds = sorted({r.round for r in remeasurements})
    rows = []
    for estimate in outcome.estimates:
        by_round = {r.round: r for r in remeasurements if r.trial_id == estimate.trial_id}
        cells = [("failed" if by_round[n].error else display(by_round[n].values.get(objective.name, math.nan)))
                 if n in by_round else "" for n in rounds]
        rows.append([str(estimate.trial_id), display(estimate.searched_value), *cells, display(estimate.value)])
    click.echo(f"\nre-measured in {len(rounds)} interleaved round(s) ({objective.name}):")
    click.echo(_table(["trial", "searched", *[f"r{n}" for n in rounds], policy.statistic], rows))
    click.echo(_winner_line(outcome))


def _show_time(trials: Sequence[Any]) -> None:
    from bayestune.measurement.timing import format_breakdown, time_breakdown

    text = format_breakdown(time_breakdown(trials))
    if text:
        click.echo(f"\ntime: {text}")


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


# ---- backup ----------------------------------------------------------------------------------
@cli.command()
@click.argument("journal_path", metavar="JOURNAL")
@click.argument("out_path", metavar="COPY.db", type=click.Path(dir_okay=False))
@_debug_option
def backup(journal_path: str, out_path: str) -> None:
    """Copy a journal safely, also while its run is writing or after a crash.

    Copying only the .db file can lose the run: recent evaluations live in the -wal file until
    a checkpoint. This copy includes them and is a single self-contained file.
    """
    from bayestune.storage import Journal

    with Journal.open(journal_path) as journal:
        journal.backup(out_path)
        n = journal.n_finished()
    click.echo(f"{out_path}: a copy of {journal_path} ({n} finished evaluation(s))")


# ---- validate --------------------------------------------------------------------------------
@cli.command()
@click.argument("scenario_path", metavar="SCENARIO")
@_debug_option
def validate(scenario_path: str) -> None:
    """Load SCENARIO, check its space and black box, and describe it."""
    from bayestune.evaluators import CommandEvaluator
    from bayestune.measurement.build import make_evaluator, unwrapped

    scenario = _load(scenario_path)
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
    click.echo(f"  budget {scenario.budget if scenario.budget is not None else 'unlimited (time limit)'}, strategy {scenario.strategy}, initial design {scenario.design.method} "
               f"x {scenario.design.size}, seed {scenario.seed}")
    _check_strategy(scenario)
    if scenario.blackbox is None:
        click.echo("  black box: none (drive the optimizer from Python with ask/tell)")
    else:
        with make_evaluator(scenario) as evaluator:
            black_box = unwrapped(evaluator)
            if isinstance(black_box, CommandEvaluator):
                black_box.check_program()
        bb = scenario.blackbox
        timeout = f", timeout {bb.timeout:g} s" if bb.timeout else ""
        click.echo(f"  black box: {bb.kind} {bb.target!r}{timeout} (set up OK)")
    if scenario.time_limit is not None or scenario.batch is not None:
        click.echo(f"  time limit {scenario.time_limit} s, batch {scenario.batch}")
    if scenario.measurement is not None:
        click.echo(f"  measurement: {_describe_measurement(scenario.measurement)}")
    if scenario.key_handling:
        click.echo(f"  HyperMapper/BaCO keys ({len(scenario.key_handling)}):")
        for line in format_key_handling(scenario.key_handling):
            click.echo(f"    {line}")
    click.echo("OK")


def _describe_measurement(spec: Any) -> str:
    """``warm-up 1, median of 3 to 10 runs until ±2 %, early abort; re-measure top 3 x 5 rounds; check``."""
    p = spec.policy
    runs = f"{p.repeats}" if p.max_repeats is None else f"{p.repeats} to {p.max_repeats}"
    parts = [f"{p.statistic} of {runs} run(s)" + (f" until ±{p.precision:.1%}" if p.precision else "")]
    if p.warmup:
        parts.insert(0, f"warm-up {p.warmup}")
    if p.early_abort:
        parts.append("early abort")
    text = ", ".join(parts)
    if spec.remeasure_top:
        text += f"; re-measure the best {spec.remeasure_top} in {spec.remeasure_rounds} interleaved rounds"
        from bayestune.measurement.statistics import runs_for_interval

        needed = runs_for_interval(p.statistic, p.confidence)
        if spec.remeasure_rounds < needed:
            text += (f" (too few for a {p.confidence:.0%} interval of the {p.statistic}: the winner comes "
                     f"without one; {needed} rounds give it)")
    if spec.check is not None:
        what = [f"expected {dict(spec.check.expected)}"] if spec.check.expected else []
        what += [f"function {spec.check.function}"] if spec.check.function is not None else []
        text += "; correctness check: " + ", ".join(what)
    return text


def _check_strategy(scenario: Any) -> None:
    """Build the scenario's strategy once: unknown strategies and options fail here, not mid-run."""
    import numpy as np

    from bayestune.strategies.base import make_strategy

    make_strategy(scenario.strategy, scenario.space, list(scenario.objectives), np.random.default_rng(0),
                  dict(scenario.strategy_options))


# ---- plot and report -------------------------------------------------------------------------
_PLOT_KINDS = ("convergence", "pareto", "importance", "parallel")


def _run_space(scenario_path: str | None) -> Any:
    """The search space of --scenario, else None (the journal's stored or inferred space)."""
    return _load(scenario_path).space if scenario_path else None


@cli.command()
@click.argument("journal_path", metavar="JOURNAL")
@click.option("-o", "--out", "out_dir", default=".", show_default=True, type=click.Path(file_okay=False),
              help="Directory for the PNG files.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice([*_PLOT_KINDS, "all"]), default=("all",),
              show_default=True, help="Which plots (repeatable).")
@click.option("--scenario", "scenario_path", type=click.Path(dir_okay=False),
              help="Scenario whose search space to use (default: the space stored in the journal, else inferred).")
@click.option("--prefix", default="", help="Prefix of the file names.")
@_debug_option
def plot(journal_path: str, out_dir: str, kinds: tuple[str, ...], scenario_path: str | None, prefix: str) -> None:
    """Write PNG plots of a journal: convergence, Pareto fronts, feature importance, parallel coordinates."""
    from bayestune.plot import plot_run
    from bayestune.run import load_run

    run = load_run(journal_path, space=_run_space(scenario_path))
    if not run.trials:
        raise CliError(f"journal {journal_path!r} holds no finished evaluation to plot")
    chosen = _PLOT_KINDS if "all" in kinds else tuple(dict.fromkeys(kinds))
    files = plot_run(run, out_dir, chosen, prefix=prefix)
    if "pareto" in chosen and "pareto" not in files:
        click.echo("pareto: skipped (the run has one objective)", err=True)
    for paths in files.values():
        for path in paths:
            click.echo(str(path))


@cli.command()
@click.argument("journal_path", metavar="JOURNAL")
@click.option("-o", "--out", "out_path", default="report.html", show_default=True, type=click.Path(dir_okay=False),
              help="HTML file to write.")
@click.option("--scenario", "scenario_path", type=click.Path(dir_okay=False),
              help="Scenario whose search space to use (default: the space stored in the journal, else inferred).")
@click.option("--importance", "importance_method", type=click.Choice(["rf", "gp"]), default="rf", show_default=True,
              help="Feature importance from random-forest importances or GP length-scales.")
@_debug_option
def report(journal_path: str, out_path: str, scenario_path: str | None, importance_method: str) -> None:
    """Write a self-contained HTML report of a journal (tables, Pareto set, embedded plots)."""
    from bayestune.report import build_report

    path = build_report(journal_path, out_path, space=_run_space(scenario_path), importance_method=importance_method)
    click.echo(f"report: {path}")


@cli.command()
@click.argument("journal_path", metavar="JOURNAL")
@click.option("-o", "--out", "out_path", default="dag.png", show_default=True, type=click.Path(dir_okay=False),
              help="Picture to write (.png or .svg).")
@click.option("--scenario", "scenario_path", type=click.Path(dir_okay=False),
              help="Scenario whose search space to use (default: the space stored in the journal, else inferred).")
@_debug_option
def dag(journal_path: str, out_path: str, scenario_path: str | None) -> None:
    """Draw the BoGraph DAG learned from a journal's logged metrics, with each node's fit quality."""
    from bayestune.bograph.drawing import draw_dag
    from bayestune.run import load_run
    from bayestune.strategies.bograph import graph_of_run

    graph = graph_of_run(load_run(journal_path, space=_run_space(scenario_path)))
    quality = graph.fit_quality()
    n_parameters = sum(1 for _, r in graph.dag.nodes(data="role") if r == "parameter")
    title = f"{graph.target}: effective dimension {graph.effective_dimension} of {n_parameters} parameters"
    click.echo(f"{draw_dag(graph.dag, out_path, quality=quality, title=title)}  ({title})")
    click.echo(_table(["node", "parents", "fit R² (leave-one-out)"],
                      [[n, ", ".join(graph.dag.predecessors(n)), f"{q:.3f}"] for n, q in quality.items()]))


# ---- export, compare, dashboard: defined in cli_results.py ---------------------------------------
for _command in (export, compare, dashboard):
    cli.add_command(_debug_option(_command))

if __name__ == "__main__":  # pragma: no cover
    main()
