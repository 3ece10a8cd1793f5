"""A black box in two stages: a *build* (compile the configuration into an artefact) and a
*run* (measure that artefact on a device).

Why two stages: compiling a kernel takes seconds and wants every core; timing it takes
milliseconds to seconds and wants a device to itself. Declared apart, builds can run many at
once while each device measures one configuration at a time
(:mod:`bayestune.execution.pipeline`), and a configuration that does not compile never
reaches a device (a ``compile`` failure).

The build gets the path its artefact must be written to (``{artefact}`` in a command
template, the second argument of a Python build function, which may return another path); the
run gets that path and the device's name as ``{artefact}`` / ``{device}`` in its template, or as
``config["artefact"]`` / ``config["device"]`` in Python. So the names ``artefact`` and ``device``
are reserved: a space with a parameter of either name is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator, describe_exception, evaluate_safely
from bayestune.exceptions import EvaluationError
from bayestune.trial import FailureKind, Result, TrialStatus

#: Names a run step receives besides the parameters (reserved: no parameter may have them).
ARTEFACT = "artefact"
DEVICE = "device"
RESERVED = (ARTEFACT, DEVICE)
#: Timing phase of a build (the measurement's phases come from the run step).
BUILD_PHASE = "compile"
#: Device of a run outside a pipeline (``evaluate``): this machine's CPU.
DEFAULT_DEVICE = "cpu"


def check_reserved(parameter_names: Sequence[str]) -> None:
    clash = [n for n in parameter_names if n in RESERVED]
    if clash:
        raise EvaluationError(
            f"a black box with a build step passes {list(RESERVED)} to its run step, but the space has "
            f"parameter(s) named {clash}: rename them"
        )


class BuildStep(ABC):
    """Turns a configuration into an artefact at a given path."""

    @abstractmethod
    def build(self, config: Mapping[str, Any], artefact: str) -> tuple[Result, str]:
        """``(Result, artefact path)``: an OK Result (no values) or a failure; never raises."""

    def close(self) -> None:  # noqa: B027 - an optional hook
        """Release resources (the default has none)."""


class CommandBuild(BuildStep):
    """A shell command template, ``{artefact}`` being the path it must write (exit 0 = built)."""

    def __init__(self, command: Evaluator) -> None:
        self.command = command  # a CommandEvaluator that reads no output (see build.py)

    def build(self, config: Mapping[str, Any], artefact: str) -> tuple[Result, str]:
        result = evaluate_safely(self.command, {**config, ARTEFACT: artefact})
        return result, artefact

    def close(self) -> None:
        self.command.close()

    def __repr__(self) -> str:
        return f"CommandBuild({self.command!r})"


class CallableBuild(BuildStep):
    """A Python function ``build(config, artefact) -> None | path``; an exception is a compile failure."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise EvaluationError(f"a build step must be a function build(config, artefact), but got {fn!r}")
        self.fn = fn

    def build(self, config: Mapping[str, Any], artefact: str) -> tuple[Result, str]:
        try:
            returned = self.fn(dict(config), artefact)
        except (Exception, SystemExit) as exc:
            return Result.failure(f"the build raised {describe_exception(exc)}", FailureKind.COMPILE), artefact
        if returned is not None and not isinstance(returned, (str, os.PathLike)):
            return Result.failure(
                f"the build returned {returned!r}; it returns None (the artefact is at the path it was given) "
                "or the artefact's path",
                FailureKind.COMPILE,
            ), artefact
        return Result(), os.fspath(returned) if returned is not None else artefact

    def __repr__(self) -> str:
        return f"CallableBuild({getattr(self.fn, '__qualname__', self.fn)!r})"


class StagedEvaluator(Evaluator):
    """``build`` then ``run``. As a plain evaluator (one configuration at a time, or the final
    confirmation) it builds into a fresh temporary directory, measures on ``device`` and cleans
    up; a pipeline calls :meth:`build_into` and :meth:`measure` on different workers instead."""

    def __init__(
        self, build: BuildStep, run: Evaluator, *, device: str = DEFAULT_DEVICE, keep_artefacts: bool = False
    ) -> None:
        super().__init__(run.objectives)
        self.build_step = build
        self.run = run
        self.device = device
        self.deterministic = run.deterministic
        #: Build each configuration once and measure its artefact again on later calls (the
        #: confirmation's rounds): artefacts are kept until :meth:`close`.
        self.keep_artefacts = keep_artefacts
        self._kept: dict[str, tuple[Result, str, str]] = {}  # config key -> (build result, artefact, directory)

    def with_run(self, run: Evaluator, *, keep_artefacts: bool | None = None) -> StagedEvaluator:
        """The same build with another run step (the measurement wrappers around it)."""
        keep = self.keep_artefacts if keep_artefacts is None else keep_artefacts
        return StagedEvaluator(self.build_step, run, device=self.device, keep_artefacts=keep)

    def build_into(self, config: Mapping[str, Any], directory: str) -> tuple[Result, str | None]:
        """Build ``config`` into ``directory``: ``(Result with the build's time, artefact)``; a failed
        build, or one that wrote nothing, is a ``compile`` failure and has no artefact."""
        started = time.perf_counter()
        result, artefact = self.build_step.build(config, str(Path(directory) / ARTEFACT))
        timings = {BUILD_PHASE: time.perf_counter() - started}
        if result.status is not TrialStatus.OK:
            kind = result.kind if result.kind in (FailureKind.TIMEOUT, FailureKind.TEMPLATE) else FailureKind.COMPILE
            error = f"build failed: {result.error or 'the build reported an infeasible configuration'}"
            return Result(values={}, feasible=False, error=error, kind=kind, timings=timings), None
        if not os.path.exists(artefact):
            error = f"the build finished but wrote no artefact at {artefact!r} (write the path given as {{artefact}})"
            return Result(values={}, feasible=False, error=error, kind=FailureKind.COMPILE, timings=timings), None
        return Result(timings=timings), artefact

    def measure(self, config: Mapping[str, Any], artefact: str, device: str | None = None) -> Result:
        """Run the measurement of a built ``artefact`` on ``device``."""
        if not os.path.exists(artefact):
            return Result.failure(
                f"the run step cannot find its artefact {artefact!r} (built elsewhere, or removed)", FailureKind.CRASH
            )
        return evaluate_safely(self.run, {**config, ARTEFACT: artefact, DEVICE: device or self.device})

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        key = json.dumps({k: str(v) for k, v in config.items()}, sort_keys=True)
        if key in self._kept:
            _, kept, _ = self._kept[key]
            return self.measure(config, kept)  # built before: this round measures only
        directory = tempfile.mkdtemp(prefix="bayestune-build-")
        keep = False
        try:
            built, artefact = self.build_into(config, directory)
            if artefact is None:
                return built
            result = self.measure(config, artefact)
            keep = self.keep_artefacts
            if keep:
                self._kept[key] = (built, artefact, directory)
        finally:
            if not keep:
                shutil.rmtree(directory, ignore_errors=True)
        return merge_timings(built, result)

    def drop_artefacts(self) -> None:
        """Remove the artefacts kept for later rounds."""
        for _, _, directory in self._kept.values():
            shutil.rmtree(directory, ignore_errors=True)
        self._kept.clear()

    def close(self) -> None:
        self.drop_artefacts()
        self.build_step.close()
        self.run.close()

    def __repr__(self) -> str:
        return f"StagedEvaluator({self.build_step!r}, run={self.run!r})"


def merge_timings(built: Result, measured: Result) -> Result:
    """The measurement's Result with the build's time added under its own phase."""
    return replace(measured, timings={**built.timings, **measured.timings})
