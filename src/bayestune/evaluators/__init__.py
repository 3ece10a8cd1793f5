"""Black-box evaluators: configuration in, :class:`~bayestune.trial.Result` out, failures recorded.

:func:`make_evaluator` builds the one a scenario's ``blackbox`` section describes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from bayestune.evaluators.base import Evaluator
from bayestune.evaluators.command import DEFAULT_MAX_OUTPUT_MB, CommandEvaluator, OutputRule, parse_output
from bayestune.evaluators.external import ExternalEvaluator
from bayestune.evaluators.python_callable import CallableEvaluator, load_callable
from bayestune.evaluators.replay import ReplayEvaluator, load_kernel_tuner_cache
from bayestune.exceptions import EvaluationError
from bayestune.scenario.records import BlackBoxSpec, Scenario

logger = logging.getLogger(__name__)

#: ``blackbox.options`` understood per kind.
COMMAND_OPTIONS = ("env", "memory_limit_mb", "output_regex", "output_json", "max_output_mb")
PYTHON_OPTIONS: tuple[str, ...] = ()
EXTERNAL_OPTIONS = ("env", "metrics")
REPLAY_OPTIONS: tuple[str, ...] = ()


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
            "or drive the optimizer from Python with ask()/tell()")
    evaluator = build_evaluator(spec, base_dir=scenario.base_dir, objectives=scenario.objective_names,
                                parameter_names=scenario.space.names, feasible_output=scenario.feasible_output,
                                scenario_name=scenario.name)
    from bayestune.measurement.build import measured  # the scenario's measurement section, if any

    return measured(evaluator, scenario.measurement, minimize=scenario.objectives[0].minimize,
                    base_dir=scenario.base_dir)


def build_evaluator(spec: BlackBoxSpec, *, base_dir: Path, objectives: Sequence[str],
                    parameter_names: Sequence[str], feasible_output: str | None = None,
                    scenario_name: str = "<python>") -> Evaluator:
    """The evaluator a ``blackbox`` spec describes (what :func:`make_evaluator` and worker
    processes, via :class:`~bayestune.execution.ScenarioFactory`, both call)."""
    base = Path(base_dir)
    objectives = list(objectives)
    if spec.kind == "python":
        _check_options(spec.kind, spec.options, PYTHON_OPTIONS)
        if spec.timeout is not None:
            logger.warning("blackbox.timeout=%s is ignored for a python black box (no in-process timeout); "
                           "use a command black box to enforce it", spec.timeout)
        return CallableEvaluator(load_callable(spec.target, base), objectives, feasible_key=feasible_output)
    if spec.kind == "command":
        _check_options(spec.kind, spec.options, COMMAND_OPTIONS)
        workdir = base / spec.workdir if spec.workdir else base
        return CommandEvaluator(
            spec.target, objectives, parameter_names=list(parameter_names), timeout=spec.timeout,
            workdir=workdir, env=spec.options.get("env"), memory_limit_mb=spec.options.get("memory_limit_mb"),
            feasible_key=feasible_output, output_regex=spec.options.get("output_regex"),
            output_json=spec.options.get("output_json"),
            max_output_mb=spec.options.get("max_output_mb", DEFAULT_MAX_OUTPUT_MB),
        )
    if spec.kind == "external":
        _check_options(spec.kind, spec.options, EXTERNAL_OPTIONS)
        workdir = base / spec.workdir if spec.workdir else base
        return ExternalEvaluator(
            spec.target, objectives, parameter_names=list(parameter_names), timeout=spec.timeout,
            feasible_column=feasible_output, metrics=spec.options.get("metrics", ()), workdir=workdir,
            env=spec.options.get("env"),
        )
    if spec.kind == "replay":
        _check_options(spec.kind, spec.options, REPLAY_OPTIONS)
        return _replay_evaluator(spec, base, objectives, parameter_names, scenario_name)
    raise EvaluationError(f"black box kind {spec.kind!r} (scenario {scenario_name!r}) is unknown; "
                          "allowed: 'python', 'command', 'external', 'replay'")


def _replay_evaluator(spec: BlackBoxSpec, base: Path, objectives: Sequence[str], parameter_names: Sequence[str],
                      scenario_name: str) -> Evaluator:
    """Recorded measurements looked up by the configuration's values of the cache's varying parameters."""
    problem = load_kernel_tuner_cache(base / spec.target)
    missing = [n for n in problem.space.names if n not in parameter_names]
    if missing:
        raise EvaluationError(f"replay black box {spec.target!r} (scenario {scenario_name!r}) varies parameter(s) "
                              f"{missing} that the scenario lacks; its parameters: {list(parameter_names)}")
    if spec.timeout is not None:
        logger.warning("blackbox.timeout=%s is ignored for a replay black box (nothing runs)", spec.timeout)
    unknown = [o for o in objectives if o != problem.objective]
    if unknown:
        logger.info("replay %s: objective(s) %s are read from the recorded metrics", spec.target, unknown)
    return ReplayEvaluator(problem)


def _check_options(kind: str, options: dict, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise EvaluationError(f"blackbox.options {unknown} are not understood by a {kind!r} black box; "
                              f"allowed: {list(allowed)}")


__all__ = [
    "CallableEvaluator", "CommandEvaluator", "Evaluator", "OutputRule", "ExternalEvaluator", "ReplayEvaluator", "build_evaluator",
    "load_callable", "make_evaluator", "parse_output",
]
