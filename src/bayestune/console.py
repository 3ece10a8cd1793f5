"""What a run looks like while it goes: a progress bar on a terminal, one line per evaluation
in a log (CI, nohup), log records that do not tear the bar, and SIGTERM treated as Ctrl-C."""

from __future__ import annotations

import contextlib
import logging
import math
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import click

from bayestune.formatting import display
from bayestune.measurement.timing import format_breakdown, time_breakdown
from bayestune.trial import TrialStatus


class TqdmLogHandler(logging.Handler):
    """Log lines on stderr that do not tear the progress bar."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            from tqdm import tqdm

            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # noqa: BLE001 - logging must never stop a run
            self.handleError(record)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM (batch schedulers, ``kill``) like Ctrl-C while a run is going, and make
    sure Ctrl-C itself is not ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    # A process started in the background by a non-interactive shell inherits SIGINT as
    # ignored, and Python then keeps it ignored: restore Ctrl-C for the run.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


def run_with_progress(
    optimizer: Any, evaluator: Any, budget: int | None, scenario: Any, execution: dict[str, Any], *, show_progress: bool
) -> bool:
    """The evaluation loop under a progress bar; True if stopped by Ctrl-C/SIGTERM.

    Worker processes get a recipe to rebuild the scenario's evaluator, this process the evaluator itself.
    ``budget=None``: the run's time limit ends it (the bar then counts evaluations without a total).
    The bar's postfix shows where the time went (compile / run / optimizer ...).
    """
    from tqdm import tqdm

    from bayestune.execution import ScenarioFactory, run

    objective = scenario.objectives[0]
    initial = optimizer.n_evaluated if budget is None else min(optimizer.n_evaluated, budget)
    bar = tqdm(
        total=budget,
        initial=initial,
        desc=scenario.name,
        unit="eval",
        file=sys.stderr,
        dynamic_ncols=True,
        disable=None if show_progress else True,
    )

    lines = show_progress and not is_terminal(sys.stderr)  # piped (CI, nohup): one line per evaluation
    seen: list[Any] = []
    target = evaluator if execution["backend"] == "serial" else ScenarioFactory(scenario)
    if execution["backend"] == "pipeline":  # built here so the bar can show the builders and devices
        from bayestune.execution import make_backend

        options = {k: execution[k] for k in ("workers", "dask_client", "build_workers", "devices") if k in execution}
        execution = {**execution, "backend": make_backend("pipeline", target, scenario.objective_names, **options)}
    started, first = time.monotonic(), optimizer.n_evaluated

    def on_trial(trial: Any) -> None:
        seen.append(trial)
        best = optimizer.best
        best_text = display(best.values[objective.name]) if best is not None else "-"
        time_text = format_breakdown(time_breakdown(seen), shares=False)
        status = getattr(execution["backend"], "status", None)
        if status is not None:
            time_text = pipeline_text(status(), optimizer.n_evaluated - first, started, budget, optimizer.n_evaluated)
        postfix = f"best {objective.name}={best_text}, failed={optimizer.n_failed}"
        bar.set_postfix_str(postfix + (f"; {time_text}" if time_text else ""), refresh=False)
        done = optimizer.n_evaluated if budget is None else min(optimizer.n_evaluated, budget)
        bar.update(done - bar.n)
        if lines:
            click.echo(progress_line(trial, objective.name, optimizer.n_evaluated, budget, best_text), err=True)

    try:
        with sigterm_as_interrupt():
            run(optimizer, target, budget, callback=on_trial, **execution)
    except KeyboardInterrupt:
        return True
    finally:
        bar.close()
    if seen and show_progress:
        click.echo(f"time: {format_breakdown(time_breakdown(seen))}", err=True)
    return False


def pipeline_text(status: dict[str, Any], done: int, started: float, budget: int | None, evaluated: int) -> str:
    """``building 6, 1 waiting, device use 92%, ~3 min left``: the pipeline as the bar shows it."""
    text = (
        f"building {status['building']}, {status['built']} built waiting, device use {100 * status['device_use']:.0f}%"
    )
    if budget is not None and done > 0:
        left = (budget - evaluated) * (time.monotonic() - started) / done
        text += f", ~{display(round(left / 60, 1)) + ' min' if left >= 90 else display(round(left)) + ' s'} left"
    return text


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def progress_line(trial: Any, objective: str, done: int, budget: int | None, best_text: str) -> str:
    """One evaluation as a line for logs: ``[3/40] trial 3 ok runtime=1.2 | best 1.1 | run 0.8 s, ...``."""
    if trial.status is TrialStatus.OK:
        what = f"ok {objective}={display(trial.values.get(objective, math.nan))}"
    elif trial.status is TrialStatus.INFEASIBLE:
        what = "infeasible"
    else:
        what = f"failed ({trial.failure_kind}): {first_line(trial.error, 80)}"
    count = f"{done}" if budget is None else f"{min(done, budget)}/{budget}"
    timings = format_breakdown(trial.timings, shares=False) if getattr(trial, "timings", None) else ""
    return f"[{count}] trial {trial.trial_id} {what} | best {objective}={best_text}" + (
        f" | {timings}" if timings else ""
    )


def first_line(text: str | None, limit: int = 100) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."
