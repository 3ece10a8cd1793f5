"""The initial design and the budget of a HyperMapper 2.0 / BaCO file: ``design_of_experiment``,
``optimization_iterations``, ``evaluations_per_optimization_iteration`` and ``time_budget``."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayestune.scenario.hypermapper.keys import KeyHandling, unknown_key_message
from bayestune.scenario.hypermapper.peers import Peer
from bayestune.scenario.hypermapper.schemas import DOE_KEYS
from bayestune.scenario.records import DesignSpec
from bayestune.space.inference import is_integral, is_number
from bayestune.space.parameters import Real
from bayestune.space.space import Space
from bayestune.space.spec import SpecContext, show

logger = logging.getLogger(__name__)

#: HyperMapper/BaCO ``doe_type`` -> our initial-design method.
HM_DOE_METHODS = {
    "random sampling": "cot",  # uniform over the feasible set (BaCO samples the Chain-of-Trees)
    "embedding random sampling": "cot",
    "standard latin hypercube": "lhs",
    "k latin hypercube": "lhs",
    "grid_search": "grid",
}
#: HyperMapper's random sampling draws from the priors and opens with its default-or-random point.
HM_RANDOM_SAMPLING = "hypermapper"
#: HyperMapper's grid holds a real parameter at this many evenly spaced points (``np.linspace``).
REAL_GRID_POINTS = 10


@dataclass(frozen=True)
class Budget:
    """The design, the number of evaluations, the batch and the time limit a file asks for."""

    design: DesignSpec
    budget: int
    per_iteration: int
    time_limit: float | None


def _all_defaults(inputs: Mapping[str, Any]) -> bool:
    return all(isinstance(s, Mapping) and s.get("parameter_default") is not None for s in inputs.values())


def _grid_size(space: Space, inputs: Mapping[str, Any]) -> int:
    """How many configurations HyperMapper's grid holds, and one more for a default off it
    (HyperMapper evaluates the default first, then every grid point it has not seen)."""
    size = math.prod(REAL_GRID_POINTS if isinstance(p, Real) else int(p.cardinality) for p in space.parameters)
    off_grid = _all_defaults(inputs) and any(
        isinstance(p, Real) and not np.isclose(np.linspace(p.low, p.high, REAL_GRID_POINTS), p.default).any()
        for p in space.parameters
    )
    return int(size) + int(off_grid)


def _design(
    data: Mapping[str, Any],
    ctx: SpecContext,
    space: Space,
    inputs: Mapping[str, Any],
    peer: Peer,
    handled: list[KeyHandling],
) -> tuple[str, int]:
    doe = data.get("design_of_experiment", {})
    if not isinstance(doe, Mapping):
        ctx.fail(("design_of_experiment",), f"expected an object, but got {show(doe)}")
    for sub in doe:
        if sub not in DOE_KEYS:
            ctx.fail(
                ("design_of_experiment", str(sub)), unknown_key_message(str(sub), DOE_KEYS, "in design_of_experiment")
            )
    if doe.get("allow_repetitions", False) is not False:
        logger.warning(
            "%s: design_of_experiment.allow_repetitions has no bayestune equivalent: the design "
            "never repeats a configuration",
            ctx.source,
        )
        handled.append(
            KeyHandling(
                "design_of_experiment.allow_repetitions",
                "approximated",
                "the initial design never repeats a configuration",
            )
        )
    doe_type = doe.get("doe_type", "random sampling")
    if doe_type not in HM_DOE_METHODS:
        ctx.fail(
            ("design_of_experiment", "doe_type"), f"must be one of {sorted(HM_DOE_METHODS)}, but got {show(doe_type)}"
        )
    n_doe = doe.get("number_of_samples", 10)
    if not (is_integral(n_doe) and n_doe >= 0):
        ctx.fail(
            ("design_of_experiment", "number_of_samples"), f"`value >= 0` (an integer) must hold, but got {show(n_doe)}"
        )
    method = HM_DOE_METHODS[doe_type]
    if method == "grid":
        n_doe = _grid_size(space, inputs)
        detail = f"design method 'grid': all {n_doe} grid configurations (a real at 10 points), then no iterations"
    elif method == "cot" and peer.key == "hypermapper":
        method = HM_RANDOM_SAMPLING
        detail = "design method 'hypermapper': drawn from the priors, the default-or-random point first"
    else:
        detail = f"design method {method!r}" + (
            " (uniform; the priors weight the acquisition, piBO, as in BaCO)" if space.has_prior else ""
        )
    handled.append(KeyHandling("design_of_experiment.doe_type", "mapped", detail))
    return method, int(n_doe)


def read_budget(
    data: Mapping[str, Any],
    ctx: SpecContext,
    space: Space,
    inputs: Mapping[str, Any],
    peer: Peer,
    handled: list[KeyHandling],
) -> Budget:
    """The design (its method, size, and whether the defaults come first) and the budget."""
    method, n_doe = _design(data, ctx, space, inputs, peer, handled)
    iterations = data.get("optimization_iterations", 50)
    if not (is_integral(iterations) and iterations >= 0):
        ctx.fail(("optimization_iterations",), f"`value >= 0` (an integer) must hold, but got {show(iterations)}")
    per_iter = data.get("evaluations_per_optimization_iteration", 1)
    if not (is_integral(per_iter) and per_iter >= 1):
        ctx.fail(
            ("evaluations_per_optimization_iteration",),
            f"`value >= 1` (an integer) must hold, but got {show(per_iter)}",
        )
    if method == "grid":  # HyperMapper: "DoE is grid search, setting number of optimization iterations to 0"
        iterations = 0
    budget = n_doe + int(iterations) * int(per_iter)
    if budget < 1:
        ctx.fail(
            ("optimization_iterations",),
            "the budget (number_of_samples + optimization_iterations × "
            "evaluations_per_optimization_iteration) must be at least 1, but got 0",
        )
    time_budget = data.get("time_budget", -1)
    if not (is_number(time_budget) and (time_budget == -1 or time_budget > 0)):
        ctx.fail(("time_budget",), f"minutes > 0, or -1 for no limit, must hold, but got {show(time_budget)}")
    time_limit = None if time_budget == -1 else float(time_budget) * 60.0
    design = DesignSpec(method=method, size=n_doe, include_default=_all_defaults(inputs))
    return Budget(design, budget, int(per_iter), time_limit)
