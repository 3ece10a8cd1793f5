"""A scenario's black box as an evaluator under its ``measurement`` section: the black box
(``blackbox`` kind and options), the correctness check innermost (every run is checked), the
repeat policy around it.

Kept above both :mod:`bayestune.evaluators` and the measurement wrappers, which it assembles, so
neither has to know about scenarios.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from bayestune.evaluators.base import Evaluator
from bayestune.evaluators.command import DEFAULT_MAX_OUTPUT_MB, CommandEvaluator
from bayestune.evaluators.csv_table import CsvTableEvaluator
from bayestune.evaluators.external import ExternalEvaluator
from bayestune.evaluators.python_callable import CallableEvaluator, load_callable
from bayestune.evaluators.replay import ReplayEvaluator, load_kernel_tuner_cache
from bayestune.evaluators.staged import ARTEFACT, RESERVED, CallableBuild, CommandBuild, StagedEvaluator, check_reserved
from bayestune.exceptions import EvaluationError
from bayestune.measurement.correctness import CheckedEvaluator
from bayestune.measurement.policy import MeasuredEvaluator
from bayestune.measurement.racing import RacingEvaluator
from bayestune.measurement_spec import MeasurementSpec
from bayestune.scenario.records import BlackBoxSpec, Scenario

logger = logging.getLogger(__name__)

#: ``blackbox.options`` understood per kind.
COMMAND_OPTIONS = ("env", "memory_limit_mb", "output_regex", "output_json", "max_output_mb")
PYTHON_OPTIONS: tuple[str, ...] = ()
EXTERNAL_OPTIONS = ("env", "metrics")
REPLAY_OPTIONS: tuple[str, ...] = ()
TABLE_OPTIONS: tuple[str, ...] = ()


def make_evaluator(scenario: Scenario) -> Evaluator:
    """The evaluator of ``scenario.blackbox``; relative paths are resolved against the scenario's directory.

    ``command`` black boxes run in ``workdir`` (relative to the scenario's directory), by
    default the scenario's directory itself, so a template like ``python bench.py {tile}``
    works from wherever ``bayestune`` is started. ``external`` tools likewise.
    """
    spec = scenario.blackbox
    if spec is None:
        raise EvaluationError(
            f"scenario {scenario.name!r} ({scenario.source}) has no 'blackbox' section: add one, "
            "or drive the optimizer from Python with ask()/tell()"
        )
    evaluator = build_evaluator(
        spec,
        base_dir=scenario.base_dir,
        objectives=scenario.objective_names,
        parameter_names=scenario.space.names,
        feasible_output=scenario.feasible_output,
        scenario_name=scenario.name,
    )
    return measured(
        evaluator, scenario.measurement, minimize=scenario.objectives[0].minimize, base_dir=scenario.base_dir
    )


def build_evaluator(
    spec: BlackBoxSpec,
    *,
    base_dir: Path,
    objectives: Sequence[str],
    parameter_names: Sequence[str],
    feasible_output: str | None = None,
    scenario_name: str = "<python>",
) -> Evaluator:
    """The evaluator a ``blackbox`` spec describes (what :func:`make_evaluator` and worker
    processes, via :class:`~bayestune.execution.ScenarioFactory`, both call), without the measurement wrappers."""
    base = Path(base_dir)
    objectives = list(objectives)
    if spec.build is not None:
        return _staged_evaluator(spec, base, objectives, parameter_names, feasible_output, scenario_name)
    if spec.kind == "python":
        _check_options(spec.kind, spec.options, PYTHON_OPTIONS)
        if spec.timeout is not None:
            logger.warning(
                "blackbox.timeout=%s is ignored for a python black box (no in-process timeout); "
                "use a command black box to enforce it",
                spec.timeout,
            )
        return CallableEvaluator(load_callable(spec.target, base), objectives, feasible_key=feasible_output)
    if spec.kind == "command":
        _check_options(spec.kind, spec.options, COMMAND_OPTIONS)
        workdir = base / spec.workdir if spec.workdir else base
        return CommandEvaluator(
            spec.target,
            objectives,
            parameter_names=list(parameter_names),
            timeout=spec.timeout,
            workdir=workdir,
            env=spec.options.get("env"),
            memory_limit_mb=spec.options.get("memory_limit_mb"),
            feasible_key=feasible_output,
            output_regex=spec.options.get("output_regex"),
            output_json=spec.options.get("output_json"),
            max_output_mb=spec.options.get("max_output_mb", DEFAULT_MAX_OUTPUT_MB),
        )
    if spec.kind == "external":
        _check_options(spec.kind, spec.options, EXTERNAL_OPTIONS)
        workdir = base / spec.workdir if spec.workdir else base
        return ExternalEvaluator(
            spec.target,
            objectives,
            parameter_names=list(parameter_names),
            timeout=spec.timeout,
            feasible_column=feasible_output,
            metrics=spec.options.get("metrics", ()),
            workdir=workdir,
            env=spec.options.get("env"),
        )
    if spec.kind == "replay":
        _check_options(spec.kind, spec.options, REPLAY_OPTIONS)
        return _replay_evaluator(spec, base, objectives, parameter_names, scenario_name)
    if spec.kind == "table":
        _check_options(spec.kind, spec.options, TABLE_OPTIONS)
        return CsvTableEvaluator(
            base / spec.target, objectives, parameter_names=parameter_names, feasible_column=feasible_output
        )
    raise EvaluationError(
        f"black box kind {spec.kind!r} (scenario {scenario_name!r}) is unknown; "
        "allowed: 'python', 'command', 'external', 'replay', 'table'"
    )


def _staged_evaluator(
    spec: BlackBoxSpec,
    base: Path,
    objectives: list[str],
    parameter_names: Sequence[str],
    feasible_output: str | None,
    scenario_name: str,
) -> StagedEvaluator:
    """A build step and a run step (``evaluators.staged``): the run is the spec's own black box,
    given ``{artefact}`` and ``{device}`` besides the parameters."""
    check_reserved(parameter_names)
    names = [*parameter_names, *RESERVED]
    run = build_evaluator(
        replace(spec, build=None),
        base_dir=base,
        objectives=objectives,
        parameter_names=names,
        feasible_output=feasible_output,
        scenario_name=scenario_name,
    )
    assert spec.build is not None  # checked by the caller
    if isinstance(run, CommandEvaluator) and ARTEFACT not in run.fields:
        raise EvaluationError(
            f"the run step {spec.target!r} does not name {{artefact}}: it would not find what the build wrote "
            '(e.g. "command": "{artefact} --size 512")'
        )
    if spec.build_kind == "python":
        return StagedEvaluator(CallableBuild(load_callable(spec.build, base)), run)
    workdir = base / spec.workdir if spec.workdir else base
    command = CommandEvaluator(
        spec.build,
        ["built"],
        parameter_names=[*parameter_names, ARTEFACT],
        timeout=spec.build_timeout,
        workdir=workdir,
        env=spec.options.get("env"),
        memory_limit_mb=spec.options.get("memory_limit_mb"),
        read_output=False,
    )
    if ARTEFACT not in command.fields:
        raise EvaluationError(
            f"blackbox.build {spec.build!r} does not name {{artefact}}: a build writes the path it is given "
            "(builds run in parallel, so a fixed path would be overwritten by the next one)"
        )
    return StagedEvaluator(CommandBuild(command), run)


def _replay_evaluator(
    spec: BlackBoxSpec, base: Path, objectives: Sequence[str], parameter_names: Sequence[str], scenario_name: str
) -> Evaluator:
    """Recorded measurements looked up by the configuration's values of the cache's varying parameters."""
    problem = load_kernel_tuner_cache(base / spec.target)
    missing = [n for n in problem.space.names if n not in parameter_names]
    if missing:
        raise EvaluationError(
            f"replay black box {spec.target!r} (scenario {scenario_name!r}) varies parameter(s) "
            f"{missing} that the scenario lacks; its parameters: {list(parameter_names)}"
        )
    if spec.timeout is not None:
        logger.warning("blackbox.timeout=%s is ignored for a replay black box (nothing runs)", spec.timeout)
    unknown = [o for o in objectives if o != problem.objective]
    if unknown:
        logger.info("replay %s: objective(s) %s are read from the recorded metrics", spec.target, unknown)
    return ReplayEvaluator(problem)


def _check_options(kind: str, options: dict, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise EvaluationError(
            f"blackbox.options {unknown} are not understood by a {kind!r} black box; allowed: {list(allowed)}"
        )


def measured(
    evaluator: Evaluator, spec: MeasurementSpec | None, *, minimize: bool = True, base_dir: str | Path | None = None
) -> Evaluator:
    """``evaluator`` wrapped as ``spec`` asks (returned unchanged when it asks for nothing).

    No section is the default section: racing for a live single-objective black box. Replays
    (deterministic) and external batch tools (a process per call, their own repeats) are raced
    only when the section says ``race: true``.
    """
    spec = spec if spec is not None else MeasurementSpec()
    if isinstance(evaluator, StagedEvaluator):  # the wrappers measure the run; the build happens once
        return evaluator.with_run(measured(evaluator.run, spec, minimize=minimize, base_dir=base_dir))
    if spec.check is not None:
        evaluator = CheckedEvaluator(evaluator, spec.check, base_dir=base_dir)
    if spec.race or (spec.races and _raced_by_default(evaluator)):
        return RacingEvaluator(evaluator, spec.policy, minimize=minimize)
    if spec.policy.is_single_run:
        return evaluator
    return MeasuredEvaluator(evaluator, spec.policy, minimize=minimize)


def _raced_by_default(evaluator: Evaluator) -> bool:
    box = unwrapped(evaluator)
    return len(box.objectives) == 1 and not box.deterministic and not isinstance(box, ExternalEvaluator)


def for_remeasurement(evaluator: Evaluator) -> Evaluator:
    """The evaluator one re-measurement round calls: the policy's warm-up, then a single run.

    A round is one sample per candidate; the statistic is taken over the rounds.
    """
    if isinstance(evaluator, StagedEvaluator):  # each candidate built once, its artefact timed every round
        return evaluator.with_run(for_remeasurement(evaluator.run), keep_artefacts=True)
    if isinstance(evaluator, MeasuredEvaluator):
        single = replace(evaluator.policy, repeats=1, max_repeats=None, precision=None, early_abort=False)
        return MeasuredEvaluator(evaluator.inner, single, minimize=evaluator.minimize)
    return evaluator


def measuring_part(evaluator: Evaluator) -> Evaluator:
    """The evaluator that repeats runs (racing, a policy): a staged black box's run step, else itself."""
    return evaluator.run if isinstance(evaluator, StagedEvaluator) else evaluator


def unwrapped(evaluator: Evaluator) -> Evaluator:
    """The black box under the measurement wrappers (what `validate` checks is runnable)."""
    while isinstance(evaluator, (MeasuredEvaluator, CheckedEvaluator, StagedEvaluator)):
        evaluator = evaluator.run if isinstance(evaluator, StagedEvaluator) else evaluator.inner
    return evaluator


def seed_incumbent(evaluator: Evaluator, best_value: float | None, history: Iterable[Sequence[float]] = ()) -> None:
    """Let a resumed run's early abort compare with the journal's best, not only this session's;
    racing learns the noise and the incumbent from the journal's runs (``history``: each
    configuration's repeats of the first objective)."""
    if isinstance(evaluator, StagedEvaluator):
        evaluator = evaluator.run
    if isinstance(evaluator, RacingEvaluator):
        evaluator.learn(history)
    elif isinstance(evaluator, MeasuredEvaluator) and best_value is not None:
        evaluator.incumbent = best_value
