"""Initial designs: the configurations evaluated before any model exists.

All designs return distinct, known-feasible rows; infeasible candidates are replaced by
Chain-of-Trees samples, so a sparse constrained space never yields a short design.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bayestune.design.hypermapper import grid_design, hypermapper_design
from bayestune.exceptions import SpaceError
from bayestune.history import History, draw_unseen, top_up
from bayestune.space.parameters import Categorical, Integer, Ordinal, Permutation, Real
from bayestune.space.space import Space


def _fill_unseen(
    space: Space, X: np.ndarray, n: int, rng: np.random.Generator, history: History, use_prior: bool = False
) -> np.ndarray:
    """Keep the feasible, new, distinct rows of X; top up with random unseen feasible rows."""
    X = X[space.is_feasible(X)] if len(X) else X
    seen = set(history.seen)
    keep = []
    for row, key in zip(X, space.row_keys(X)):
        if key not in seen:
            seen.add(key)
            keep.append(row)
    return top_up(space, history, keep[:n], seen, n, rng, use_prior=use_prior)


def uniform_design(space: Space, n: int, rng: np.random.Generator, history: History) -> np.ndarray:
    """Whole configurations drawn independently; infeasible ones rejected."""
    return draw_unseen(space, history, n, rng, method="uniform")


def cot_design(space: Space, n: int, rng: np.random.Generator, history: History) -> np.ndarray:
    """Uniform over the feasible leaves of the Chain-of-Trees (BaCO's default)."""
    return draw_unseen(space, history, n, rng, method="cot")


def prior_design(space: Space, n: int, rng: np.random.Generator, history: History) -> np.ndarray:
    """Draws following the user's priors (HyperMapper 2.0), restricted to feasible rows."""
    return draw_unseen(space, history, n, rng, method="cot", use_prior=True)


def _lhs_rows(space: Space, n: int, rng: np.random.Generator) -> np.ndarray:
    """A Latin hypercube over the whole grid (constraints ignored): each parameter's range is
    cut into n strata, each used once."""
    X = np.empty((n, space.width))
    for p in space.parameters:
        s = space.slices[p.name]
        u = (rng.permutation(n) + rng.random(n)) / n
        if isinstance(p, Permutation):
            X[:, s] = p.sample(rng, n)
        elif p.kind == "perfect_tile":  # strata over the table of tilings
            X[:, s] = p.raw_of_index(np.minimum((u * p.cardinality).astype(int), int(p.cardinality) - 1))
        elif isinstance(p, (Ordinal, Categorical)):
            X[:, s] = np.minimum((u * p.cardinality).astype(int), int(p.cardinality) - 1).reshape(-1, 1)
        elif isinstance(p, (Integer, Real)):
            values = p.from_sampling_unit(u)
            if p.kind == "integer":
                values = np.rint(values)
            X[:, s] = values.reshape(-1, 1)
        else:
            raise SpaceError(f"parameter {p.name!r}: no Latin hypercube strata for a {p.kind} parameter")
    return X


def lhs_design(space: Space, n: int, rng: np.random.Generator, history: History) -> np.ndarray:
    """Latin hypercube: each parameter's range is cut into n strata, each used once; infeasible
    rows are replaced by random feasible ones (on a sparse constrained space most of them)."""
    return _fill_unseen(space, _lhs_rows(space, n, rng), n, rng, history)


def design_features(space: Space, X: np.ndarray) -> np.ndarray:
    """Embedding whose Euclidean distances mix the per-type distances: numeric on the unit scale,
    categorical as Hamming (one-hot / sqrt 2), permutation by normalised positions."""
    parts = []
    for p in space.parameters:
        raw = X[:, space.slices[p.name]]
        if isinstance(p, Categorical):
            parts.append(np.eye(int(p.cardinality))[p.index_of(raw)] / np.sqrt(2.0))
        elif isinstance(p, Permutation):
            parts.append(raw / max(1, p.n - 1) / np.sqrt(p.n / 2.0))
        else:
            parts.append(p.unit(raw))
    return np.concatenate(parts, axis=1)


def maximin_design(space: Space, n: int, rng: np.random.Generator, history: History) -> np.ndarray:
    """Greedy maximin over a large feasible pool: each pick is farthest from those before
    (and from what was already evaluated), spreading the design over the space."""
    pool = draw_unseen(space, history, max(50 * n, 1000), rng)
    if len(pool) <= n:
        return pool
    F = design_features(space, pool)
    chosen = [int(rng.integers(len(pool)))]
    dist = np.full(len(pool), np.inf)
    if history.n:
        Fh = design_features(space, history.X)
        for row in Fh:
            dist = np.minimum(dist, np.linalg.norm(F - row, axis=1))
    for _ in range(n - 1):
        dist = np.minimum(dist, np.linalg.norm(F - F[chosen[-1]], axis=1))
        dist[chosen] = -1.0
        chosen.append(int(np.argmax(dist)))
    return pool[chosen]


def feasible_lhs_design(space: Space, n: int, rng: np.random.Generator, history: History) -> np.ndarray:
    """A Latin hypercube moved onto the feasible set: each LHS row (drawn over the whole grid)
    takes the nearest not yet chosen configuration of a large feasible pool (distances of
    :func:`design_features`). Unlike ``lhs``, whose infeasible rows become random draws (on the
    recorded GPU spaces 60-100 % of them), every point keeps its stratum approximately."""
    pool = draw_unseen(space, history, max(50 * n, 1000), rng)
    if len(pool) <= n:
        return pool
    F = design_features(space, pool)
    targets = design_features(space, _lhs_rows(space, n, rng))
    free = np.ones(len(pool), dtype=bool)
    chosen = []
    for t in targets[rng.permutation(n)]:
        d = np.linalg.norm(F - t, axis=1)
        d[~free] = np.inf
        i = int(np.argmin(d))
        free[i] = False
        chosen.append(i)
    return pool[chosen]


DESIGNS: dict[str, Callable[[Space, int, np.random.Generator, History], np.ndarray]] = {
    "uniform": uniform_design,
    "cot": cot_design,
    "lhs": lhs_design,
    "maximin": maximin_design,
    "feasible_lhs": feasible_lhs_design,
    "prior": prior_design,
    "hypermapper": hypermapper_design,
    "grid": grid_design,
}


def initial_design(space: Space, n: int, rng: np.random.Generator, history: History, method: str = "cot") -> np.ndarray:
    """``n`` distinct feasible rows not yet in ``history`` by the named method."""
    if method not in DESIGNS:
        raise SpaceError(f"unknown initial design {method!r}; allowed: {sorted(DESIGNS)}")
    if n <= 0:
        return np.empty((0, space.width))
    return DESIGNS[method](space, n, rng, history)
