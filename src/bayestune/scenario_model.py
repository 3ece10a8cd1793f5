"""What a tuning run is: the space, objectives, budget, black box and strategy.

These frozen records are the Python API equivalent of a scenario file; loaders in
:mod:`bayestune.scenario` build them from JSON/YAML (ours, HyperMapper/BaCO, T1).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayestune.exceptions import ConstraintError, ScenarioError
from bayestune.space.space import Space

DIRECTIONS = ("minimize", "maximize")
#: Strategy used when a scenario names none.
DEFAULT_STRATEGY = "bo"
#: ... and when it has several objectives (``bo`` optimises one).
DEFAULT_MULTI_OBJECTIVE_STRATEGY = "parego"
BLACKBOX_KINDS = ("python", "command", "external", "replay")


@dataclass(frozen=True)
class Objective:
    """A measured quantity to minimise (runtimes, energy) or maximise (throughput)."""

    name: str
    direction: str = "minimize"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ScenarioError(f"objective name must be a non-empty string, but got {self.name!r}")
        if self.direction not in DIRECTIONS:
            raise ScenarioError(
                f"objective {self.name!r}: direction must be one of {list(DIRECTIONS)}, but got {self.direction!r}")

    @property
    def minimize(self) -> bool:
        return self.direction == "minimize"


class OutputConstraint:
    """A condition on measured outputs, e.g. ``utilisation <= 100`` (HyperMapper 2.0's FPGA
    "the design must fit"): a measurement that breaks it is *infeasible*, not a failure.

    The expression uses the grammar of known constraints (:mod:`bayestune.space.constraints`,
    parsed, never ``eval``'d); its names are black-box outputs (objectives or extra metrics).
    """

    def __init__(self, expression: str) -> None:
        from bayestune.space.constraints import Constraint
        from bayestune.space.parameters import Real

        if not isinstance(expression, str) or not expression.strip():
            raise ScenarioError(f"an output constraint must be a non-empty expression string, but got {expression!r}")
        self.expression = expression
        try:
            tree = ast.parse(expression.strip(), mode="eval")
        except SyntaxError as exc:
            raise ScenarioError(f"output constraint {expression!r}: invalid syntax ({exc.msg})") from None
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called
                        and n.id not in ("True", "False")})
        try:  # each output becomes a stand-in numeric "parameter" for the constraint compiler
            self._constraint = Constraint(expression, {n: Real(n, -1.0, 1.0) for n in names})
        except (ConstraintError, ValueError) as exc:
            raise ScenarioError(f"output constraint {expression!r}: {exc}") from None
        self.outputs: tuple[str, ...] = tuple(sorted(self._constraint.variables))

    def holds(self, values: Mapping[str, float]) -> bool:
        """Whether measured ``values`` satisfy the constraint; KeyError names a missing output."""
        missing = [n for n in self.outputs if n not in values]
        if missing:
            raise KeyError(", ".join(missing))
        columns = {n: np.array([float(values[n])]) for n in self.outputs} or {"_": np.zeros(1)}
        return bool(self._constraint.evaluate(columns)[0])

    def __repr__(self) -> str:
        return f"OutputConstraint({self.expression!r})"


def parse_output_constraints(expressions: Sequence[str]) -> tuple[OutputConstraint, ...]:
    if isinstance(expressions, str):
        raise ScenarioError(f"output_constraints must be a list of expressions, but got the single string "
                            f"{expressions!r}; wrap it in a list")
    return tuple(OutputConstraint(e) for e in expressions)


@dataclass(frozen=True)
class DesignSpec:
    """The initial design: how many configurations to evaluate before modelling, and how."""

    method: str = "cot"  # uniform | cot | lhs | maximin | prior
    size: int = 10
    include_default: bool = True


@dataclass(frozen=True)
class BlackBoxSpec:
    """How to evaluate a configuration.

    ``python``: ``target`` is ``"module:function"`` (or ``"path/to/file.py:function"``), called with
    the configuration dict. ``command``: ``target`` is a shell command template with ``{param}``
    placeholders whose stdout carries the objective values. ``external``: a long-running tool
    speaking the line protocol. ``replay``: ``target`` is a recorded cache file.
    """

    kind: str
    target: str
    timeout: float | None = None
    workdir: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in BLACKBOX_KINDS:
            raise ScenarioError(f"black box kind must be one of {list(BLACKBOX_KINDS)}, but got {self.kind!r}")
        if not isinstance(self.target, str) or not self.target.strip():
            raise ScenarioError(f"black box {self.kind!r}: target must be a non-empty string, but got {self.target!r}")
        if self.timeout is not None and not (isinstance(self.timeout, (int, float)) and self.timeout > 0):
            raise ScenarioError(f"black box timeout must be a positive number of seconds, but got {self.timeout!r}")


@dataclass(frozen=True)
class Scenario:
    """One tuning problem, ready to run."""

    name: str
    space: Space
    objectives: tuple[Objective, ...] = (Objective("value"),)
    budget: int = 50
    design: DesignSpec = field(default_factory=DesignSpec)
    strategy: str = DEFAULT_STRATEGY
    strategy_options: dict[str, Any] = field(default_factory=dict)
    blackbox: BlackBoxSpec | None = None
    seed: int | None = None
    journal: str | None = None
    feasible_output: str | None = None  # name of a black-box output that flags feasibility
    output_constraints: tuple[str, ...] = ()  # e.g. "utilisation <= 100": breaking one makes a result infeasible
    source: str = "<python>"  # file the scenario came from (for error messages and relative paths)

    def __post_init__(self) -> None:
        if not self.objectives:
            raise ScenarioError("a scenario needs at least one objective")
        names = [o.name for o in self.objectives]
        if len(set(names)) != len(names):
            raise ScenarioError(f"objective names must be unique, but got {names}")
        clash = sorted(set(names) & set(self.space.names))
        if clash:
            raise ScenarioError(f"objective names {clash} clash with parameter names")
        if not isinstance(self.budget, int) or isinstance(self.budget, bool) or self.budget < 1:
            raise ScenarioError(f"budget must be a positive integer, but got {self.budget!r}")
        parse_output_constraints(self.output_constraints)

    @property
    def objective_names(self) -> list[str]:
        return [o.name for o in self.objectives]
