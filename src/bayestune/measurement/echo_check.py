"""The echo check: a command that prints its own arguments, or a "timing" that never varies, is
not a measurement, and a run on it stops with one line saying so.

Why: ``"command": "echo {tile}"`` prints a number, so it parses, and the search then optimises
the parameter itself (``runtime_ms = 1 [1, 1]``, a speedup of exactly 4x). Two signs tell it
from a timing, from the third evaluation on: an objective equals a value substituted into the
command in every evaluation so far, or the repeats of every evaluation measured more than once
are identical (a real timing always varies a little). A black box that truly returns a constant
or an input (a cost model, say) says so with ``"measurement": {"echo_check": false}``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bayestune.exceptions import EvaluationError
from bayestune.trial import TrialStatus

#: Evaluations after which the echo check judges (two equal pairs can be chance).
MIN_EVALUATIONS = 3
#: What the scenario sets to turn the check off.
OPT_OUT = '"measurement": {"echo_check": false}'


class EchoError(EvaluationError):
    """The objective is an echo of the command's arguments, or a constant: not a measurement."""


class EchoCheck:
    """Watches each finished evaluation of ``objectives``; :meth:`observe` raises :class:`EchoError`."""

    def __init__(self, objectives: Sequence[str], substituted: Sequence[str]) -> None:
        self.objectives = tuple(objectives)
        self.substituted = tuple(substituted)
        #: (objective, parameter) pairs that have matched in every evaluation so far
        self._echoes = {(o, p) for o in self.objectives for p in self.substituted}
        self._evaluations = 0
        self._flat = {o: 0 for o in self.objectives}  # evaluations whose repeats were all identical
        self._varied = set[str]()

    def observe(self, trial: Any) -> None:
        """Take one finished trial into account (failures and infeasible ones say nothing)."""
        if trial.status is not TrialStatus.OK:
            return
        values: Mapping[str, float] = trial.values
        self._evaluations += 1
        for objective, parameter in list(self._echoes):
            if not _same(values.get(objective), trial.config.get(parameter)):
                self._echoes.discard((objective, parameter))
        for objective in self.objectives:
            repeats = [x for x in (trial.repeats or {}).get(objective, ()) if math.isfinite(x)]
            if len(repeats) < 2:
                continue
            if max(repeats) > min(repeats):
                self._varied.add(objective)
            else:
                self._flat[objective] += 1
        self._judge()

    def _judge(self) -> None:
        if self._evaluations >= MIN_EVALUATIONS and self._echoes:
            objective, parameter = sorted(self._echoes)[0]
            raise EchoError(
                f"{objective} equalled {{{parameter}}}, a value substituted into the command, in each of the "
                f"{self._evaluations} evaluations so far: the command prints its arguments, it does not measure "
                f"(if {objective} really is that value, set {OPT_OUT})"
            )
        for objective, flat in self._flat.items():
            if flat >= MIN_EVALUATIONS and objective not in self._varied:
                raise EchoError(
                    f"{objective} never varied across the repeats of {flat} evaluations: a timing always "
                    f"varies a little, so the command does not measure (if {objective} really is constant, "
                    f"set {OPT_OUT})"
                )


def _same(value: Any, substituted: Any) -> bool:
    """Whether an objective's value is the number a parameter's value was written as."""
    if value is None or substituted is None or isinstance(substituted, bool):
        return False
    try:
        number, measured = float(substituted), float(value)
    except (TypeError, ValueError, OverflowError):  # text, or an integer past float's range
        return False
    return math.isfinite(number) and measured == number


def echo_check_for(scenario: Any) -> EchoCheck | None:
    """The check of a scenario whose black box is a command (None for other kinds, or when the
    scenario turns it off): the command's placeholders are the substituted parameters."""
    from bayestune.evaluators.command import template_fields

    spec = scenario.blackbox
    measurement = scenario.measurement
    if spec is None or spec.kind != "command" or (measurement is not None and not measurement.echo_check):
        return None
    return EchoCheck(scenario.objective_names, template_fields(spec.target))


class Watched:
    """The optimizer as the loop sees it, every trial it is told checked first-hand."""

    def __init__(self, optimizer: Any, check: EchoCheck) -> None:
        self._optimizer, self._check = optimizer, check

    def __getattr__(self, name: str) -> Any:
        return getattr(self._optimizer, name)

    def tell(self, config: Mapping[str, Any], result: Any) -> Any:
        trial = self._optimizer.tell(config, result)
        self._check.observe(trial)
        return trial
