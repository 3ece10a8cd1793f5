"""The record every benchmark problem is, and the identity of "the same configuration".

It sits below the problem families (GPU replay and synthetic in :mod:`benchmarks.problems`,
live Halide in :mod:`benchmarks.halide_problems`, several objectives in
:mod:`benchmarks.multiobjective_problems`) so that each of them, and the registry that gathers
them, imports it without importing the others.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bayestune.objectives import Objective
from bayestune.space import Space
from bayestune.trial import Result


def config_key(config: Mapping[str, Any]) -> str:
    """A configuration's identity as text: sorted JSON, tuples as lists, numpy scalars as Python
    ones and integral floats as ints (no parameter type tells 4 from 4.0). The budget rules use it
    to recognise a repeated proposal, and the Halide measurement cache as its file key."""

    def plain(v: Any) -> Any:
        if isinstance(v, (tuple, list)):
            return [plain(x) for x in v]
        if hasattr(v, "item"):
            v = v.item()
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v

    return json.dumps({k: plain(v) for k, v in sorted(config.items())}, sort_keys=True)


@dataclass
class Problem:
    """One benchmark problem. ``evaluate`` never raises for a bad configuration: failures come
    back as ``Result.failure`` (kind ``invalid`` for a known-infeasible configuration).

    ``objectives`` may be names or :class:`Objective` records; a problem with several of them is
    scored by hypervolume, against ``pareto_front`` (a dense sample of the true front) when it is
    known, else against the union of every run's non-dominated evaluations.
    """

    name: str
    kind: str
    space: Space
    objectives: Sequence[Objective | str]
    evaluate: Callable[[Mapping[str, Any]], Result]
    optimum: float | None = None
    optimum_source: str | None = None  # "cache", "enumeration", "analytic" or None (unknown)
    description: str = ""
    optimum_config: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    timing_sensitive: bool = False  # live measurements: never run concurrently with other runs
    close: Callable[[], None] | None = None
    pareto_front: Any = None  # several objectives: an (n, n_objectives) array, if known

    def __post_init__(self) -> None:
        self.objectives = tuple(o if isinstance(o, Objective) else Objective(o) for o in self.objectives)
        if not self.objectives:
            raise ValueError(f"problem {self.name!r} needs at least one objective")

    @property
    def objective_names(self) -> list[str]:
        return [o.name for o in self.objectives]

    @property
    def multi_objective(self) -> bool:
        return len(self.objectives) > 1

    @property
    def objective(self) -> str:
        """The name of a single-objective problem's objective."""
        if self.multi_objective:
            raise ValueError(f"problem {self.name!r} has {len(self.objectives)} objectives {self.objective_names}")
        return self.objectives[0].name

    def known_feasible(self, config: Mapping[str, Any]) -> bool:
        try:
            X = self.space.to_matrix([config])
        except Exception:
            return False
        return bool(self.space.is_feasible(X)[0])
