"""What a run optimises: objectives and the conditions measured outputs must meet.

These records sit at the bottom of the house so strategies, the optimizer and the scenario
loaders all import them from here rather than from each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bayestune.exceptions import ConstraintError, ScenarioError

DIRECTIONS = ("minimize", "maximize")


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
                f"objective {self.name!r}: direction must be one of {list(DIRECTIONS)}, but got {self.direction!r}"
            )

    @property
    def minimize(self) -> bool:
        return self.direction == "minimize"


class OutputConstraint:
    """A condition on measured outputs, e.g. ``utilisation <= 100`` (HyperMapper 2.0's FPGA
    "the design must fit"): a measurement that breaks it is *infeasible*, not a failure.

    The expression uses the grammar of known constraints (:mod:`bayestune.space.expressions`,
    parsed, never ``eval``'d); its names are black-box outputs (objectives or extra metrics).
    """

    def __init__(self, expression: str) -> None:
        from bayestune.space.expressions import numeric_condition

        if not isinstance(expression, str) or not expression.strip():
            raise ScenarioError(f"an output constraint must be a non-empty expression string, but got {expression!r}")
        self.expression = expression
        try:
            self._condition = numeric_condition(expression, noun="outputs")
        except ConstraintError as exc:
            raise ScenarioError(f"output constraint {expression!r}: {exc}") from None
        self.outputs: tuple[str, ...] = tuple(sorted(self._condition.variables))

    def holds(self, values: Mapping[str, float]) -> bool:
        """Whether measured ``values`` satisfy the constraint; KeyError names a missing output."""
        missing = [n for n in self.outputs if n not in values]
        if missing:
            raise KeyError(", ".join(missing))
        columns = {n: np.array([float(values[n])]) for n in self.outputs} or {"_": np.zeros(1)}
        return bool(self._condition.evaluate(columns)[0])

    def __repr__(self) -> str:
        return f"OutputConstraint({self.expression!r})"


def parse_output_constraints(expressions: Sequence[str]) -> tuple[OutputConstraint, ...]:
    if isinstance(expressions, str):
        raise ScenarioError(
            f"output_constraints must be a list of expressions, but got the single string "
            f"{expressions!r}; wrap it in a list"
        )
    return tuple(OutputConstraint(e) for e in expressions)
