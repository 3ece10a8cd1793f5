"""HyperMapper 2.0's own initial designs, so its files start where HyperMapper starts.

HyperMapper draws its ``random sampling`` design from the user's priors (``space.py``:
``random_sample_configurations_without_repetitions`` samples each parameter's prior) and opens
it with the "default or random" point: the defaults the file gives, the other parameters
drawn like the design. Its ``grid_search`` design is the Cartesian product of every
parameter's values, a real parameter's at 10 evenly spaced points. BaCO's design is uniform
and is not here.
"""

from __future__ import annotations

import math

import numpy as np

from bayestune.exceptions import SpaceError
from bayestune.history import History, top_up
from bayestune.space.parameters import Real
from bayestune.space.space import Space

#: HyperMapper's ``preferred_discretization`` of a real parameter: ``np.linspace(min, max, num=10)``.
REAL_GRID_POINTS = 10
#: The largest grid built: HyperMapper lists the whole product, which past this takes too long to be meant.
MAX_GRID = 1_000_000


def _given_defaults(space: Space) -> dict[str, object]:
    """The defaults the user gave (a parameter's ``default`` falls back to a value of its own)."""
    specs = {p.name: p.to_spec() for p in space.parameters}
    return {name: spec["default"] for name, spec in specs.items() if spec.get("default") is not None}


def default_or_random_row(space: Space, rng: np.random.Generator) -> np.ndarray | None:
    """HyperMapper's ``get_default_or_random_configuration``: the given defaults, the other
    parameters drawn from their priors; None when every default or none is given (the
    optimizer evaluates a complete default itself; with none it is just another draw)."""
    given = _given_defaults(space)
    if not given or len(given) == len(space.parameters):
        return None
    row = space.sample(1, rng, use_prior=True)[0]
    for name, value in given.items():
        row[space.slices[name]] = space[name].to_raw(space[name].validate(value))
    return row if space.is_feasible(row.reshape(1, -1))[0] else None


def hypermapper_design(space: Space, n: int, rng: np.random.Generator, history: History) -> np.ndarray:
    """Random sampling as HyperMapper 2.0 does it: on a fresh run the default-or-random point
    first, then distinct draws from the priors."""
    first = []
    if history.n == 0 and not len(history.pending):
        row = default_or_random_row(space, rng)
        if row is not None:
            first.append(row)
    seen = set(history.seen) | set(space.row_keys(np.array(first).reshape(-1, space.width)))
    return top_up(space, history, first[:n], seen, n, rng, use_prior=True)


def grid_size(space: Space) -> int:
    """How many configurations HyperMapper's grid holds (before the known constraints)."""
    sizes = [REAL_GRID_POINTS if isinstance(p, Real) else p.cardinality for p in space.parameters]
    return int(math.prod(sizes))


def grid_rows(space: Space) -> np.ndarray:
    """Every configuration of the grid, in HyperMapper's order (``itertools.product`` over the
    parameters in file order, the first varying slowest), infeasible ones left out."""
    size = grid_size(space)
    if size > MAX_GRID:
        raise SpaceError(f"a grid_search design needs at most {MAX_GRID} grid points, but this space has {size}")
    factors = []
    for p in space.parameters:
        if isinstance(p, Real):
            factors.append(p.raw_from_values(list(np.linspace(p.low, p.high, REAL_GRID_POINTS))))
        else:
            factors.append(np.asarray(p.grid()).reshape(int(p.cardinality), -1))
    picks = np.meshgrid(*[np.arange(len(f)) for f in factors], indexing="ij")
    X = np.empty((size, space.width))
    for p, f, pick in zip(space.parameters, factors, picks):
        X[:, space.slices[p.name]] = f[pick.reshape(-1)]
    return X[space.is_feasible(X)] if space.constraints else X


def grid_design(space: Space, n: int, rng: np.random.Generator, history: History) -> np.ndarray:
    """The first ``n`` grid configurations not yet evaluated (HyperMapper evaluates them all)."""
    X = grid_rows(space)
    keep = [row for row, key in zip(X, space.row_keys(X)) if key not in history.seen]
    return np.array(keep[:n]).reshape(-1, space.width)
