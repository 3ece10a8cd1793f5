"""A search space: parameters, known constraints, and the Chain-of-Trees over them.

Configurations travel in two forms: user-facing dicts (``{"tile": 32, "order": (2, 0, 1)}``)
and raw matrices ``X`` of shape ``(N, width)`` (see :mod:`bayestune.space.parameters`),
which every vectorised component (sampling, constraints, models, local search) works on.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from bayestune.exceptions import InfeasibleSpaceError, SpaceError
from bayestune.space.chain_of_trees import DEFAULT_MAX_LEAVES, ChainOfTrees
from bayestune.space.constraints import Constraint, KnownConstraint, parse_constraints
from bayestune.space.parameters import Parameter

logger = logging.getLogger(__name__)

#: Sampling methods of :meth:`Space.sample`.
SAMPLING_METHODS = ("cot", "uniform")
#: Draws before uniform rejection sampling of whole configurations gives up.
MAX_UNIFORM_DRAWS = 5_000_000


class Space:
    """Parameters plus known constraints.

    ``constraints`` are expressions over parameter names (see
    :mod:`bayestune.space.constraints`); they are parsed once, never ``eval``'d.
    The Chain-of-Trees is built lazily on first use, so loading a scenario stays cheap.
    """

    def __init__(
        self,
        parameters: Sequence[Parameter],
        constraints: Sequence[str | KnownConstraint] = (),
        *,
        max_leaves: int = DEFAULT_MAX_LEAVES,
    ) -> None:
        params = list(parameters)
        if not params:
            raise SpaceError("a search space needs at least one parameter, but got none")
        for p in params:
            if not isinstance(p, Parameter):
                raise SpaceError(f"expected Parameter objects, but got {p!r}")
        names = [p.name for p in params]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SpaceError(f"parameter names must be unique, but {dupes} appear more than once")
        self.parameters: list[Parameter] = params
        self._by_name = {p.name: p for p in params}
        # Expressions are parsed here; ready-made constraint objects (a parsed Constraint, a
        # MembershipConstraint table) are kept as they are.
        self.constraints: list[KnownConstraint] = [
            parse_constraints([c], self._by_name)[0] if isinstance(c, str) else c for c in constraints
        ]
        for c in self.constraints:
            unknown = sorted(set(c.variables) - set(self._by_name))
            if unknown:
                raise SpaceError(f"constraint {c.expression!r} refers to unknown parameter(s) {unknown}")
        self.max_leaves = max_leaves
        self.slices: dict[str, slice] = {}
        start = 0
        for p in params:
            self.slices[p.name] = slice(start, start + p.width)
            start += p.width
        self.width = start

    # ---- basic access ------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parameters]

    def __getitem__(self, name: str) -> Parameter:
        try:
            return self._by_name[name]
        except KeyError:
            raise SpaceError(f"unknown parameter {name!r}; the space has {self.names}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self.parameters)

    def __repr__(self) -> str:
        return f"Space({self.names}, constraints={[c.expression for c in self.constraints]})"

    @cached_property
    def chain_of_trees(self) -> ChainOfTrees:
        return ChainOfTrees(self.parameters, self.constraints, max_leaves=self.max_leaves)

    # ---- configurations <-> raw matrices -----------------------------------------------
    def validate_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """Canonical dict of a user configuration; errors name the parameter and value."""
        if not isinstance(config, Mapping):
            raise SpaceError(f"a configuration must be a mapping of parameter names to values, but got {config!r}")
        unknown = sorted(set(config) - set(self._by_name))
        if unknown:
            raise SpaceError(f"configuration has unknown parameter(s) {unknown}; the space has {self.names}")
        missing = [n for n in self.names if n not in config]
        if missing:
            raise SpaceError(f"configuration lacks parameter(s) {missing}: {dict(config)!r}")
        return {p.name: p.validate(config[p.name]) for p in self.parameters}

    def to_matrix(self, configs: Iterable[Mapping[str, Any]]) -> np.ndarray:
        configs = [self.validate_config(c) for c in configs]
        X = np.empty((len(configs), self.width))
        for p in self.parameters:
            X[:, self.slices[p.name]] = p.raw_from_values([c[p.name] for c in configs]) if configs else 0
        return X

    def to_configs(self, X: np.ndarray) -> list[dict[str, Any]]:
        X = self._check_matrix(X)
        per_param = {p.name: p.values_from_raw(X[:, self.slices[p.name]]) for p in self.parameters}
        return [{n: per_param[n][i] for n in self.names} for i in range(len(X))]

    def to_config(self, x: np.ndarray) -> dict[str, Any]:
        return self.to_configs(np.asarray(x).reshape(1, -1))[0]

    def _check_matrix(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X.reshape(1, -1)
        if X.ndim != 2 or X.shape[1] != self.width:
            raise SpaceError(f"expected a raw matrix with {self.width} columns, but got shape {X.shape}")
        return X

    def blocks(self, X: np.ndarray) -> dict[str, np.ndarray]:
        X = self._check_matrix(X)
        return {n: X[:, s] for n, s in self.slices.items()}

    def columns(self, X: np.ndarray) -> dict[str, np.ndarray]:
        """Vectorised user values per parameter, as constraint expressions see them."""
        return {p.name: p.columns(b) for p, b in zip(self.parameters, self.blocks(X).values())}

    def row_keys(self, X: np.ndarray) -> list[bytes]:
        """Hashable identity of each configuration (for duplicate detection)."""
        X = np.ascontiguousarray(self._check_matrix(X))
        return [row.tobytes() for row in X]

    # ---- feasibility -------------------------------------------------------------------
    def in_domain(self, X: np.ndarray) -> np.ndarray:
        X = self._check_matrix(X)
        ok = np.ones(len(X), dtype=bool)
        for p in self.parameters:
            ok &= p.in_domain(X[:, self.slices[p.name]])
        return ok

    def satisfies_constraints(self, X: np.ndarray) -> np.ndarray:
        """Evaluate every constraint expression directly (rows must be in the domain)."""
        X = self._check_matrix(X)
        ok = np.ones(len(X), dtype=bool)
        if self.constraints and len(X):
            cols = self.columns(X)
            for c in self.constraints:
                ok &= c.evaluate(cols)
        return ok

    def is_feasible(self, X: np.ndarray) -> np.ndarray:
        """Known-feasible rows: legal values and every constraint satisfied. Uses Chain-of-Trees
        membership (binary search) for enumerated groups, direct evaluation otherwise."""
        X = self._check_matrix(X)
        ok = self.in_domain(X)
        if not self.constraints or not ok.any():
            return ok
        cot = self.chain_of_trees
        idx = np.flatnonzero(ok)
        blocks = self.blocks(X[idx])
        sub = np.ones(len(idx), dtype=bool)
        for g in cot.groups:
            gb = {n: blocks[n] for n in g.names}
            sub &= cot.group_contains(g, gb, in_domain=True) if g.enumerated else cot.evaluate_group(g, gb)
        ok[idx] = sub
        return ok

    # ---- sampling ----------------------------------------------------------------------
    def sample(self, n: int, rng: np.random.Generator, *, method: str = "cot", use_prior: bool = False) -> np.ndarray:
        """``n`` feasible raw rows (duplicates possible).

        ``"cot"`` draws each constraint group uniformly over its feasible leaves and each free
        parameter independently: uniform over the feasible set, however sparse. ``"uniform"``
        draws whole configurations and rejects infeasible ones (BaCO's uniform baseline).
        """
        if method not in SAMPLING_METHODS:
            raise SpaceError(f"unknown sampling method {method!r}; allowed: {list(SAMPLING_METHODS)}")
        if n <= 0:
            return np.empty((0, self.width))
        if method == "uniform" or not self.constraints:
            return self._sample_rejection(n, rng, use_prior)
        cot = self.chain_of_trees
        X = np.empty((n, self.width))
        for p in cot.free_parameters:
            X[:, self.slices[p.name]] = p.sample(rng, n, use_prior)
        for g in cot.groups:
            for name, block in cot.sample_group(g, rng, n, use_prior).items():
                X[:, self.slices[name]] = block
        return X

    def _sample_independent(self, n: int, rng: np.random.Generator, use_prior: bool) -> np.ndarray:
        X = np.empty((n, self.width))
        for p in self.parameters:
            X[:, self.slices[p.name]] = p.sample(rng, n, use_prior)
        return X

    def _sample_rejection(self, n: int, rng: np.random.Generator, use_prior: bool) -> np.ndarray:
        if not self.constraints:
            return self._sample_independent(n, rng, use_prior)
        found, n_found, drawn = [], 0, 0
        batch = max(256, 4 * n)
        while n_found < n:
            if drawn >= MAX_UNIFORM_DRAWS:
                raise InfeasibleSpaceError(
                    f"uniform sampling found {n_found} of {n} feasible configurations in {drawn:,} draws; "
                    "the space is too sparse for rejection sampling: use method='cot'"
                )
            X = self._sample_independent(batch, rng, use_prior)
            drawn += batch
            ok = self.satisfies_constraints(X)
            found.append(X[ok])
            n_found += int(ok.sum())
            batch = min(2 * batch, 1 << 18)
        return np.concatenate(found)[:n]

    # ---- neighbourhoods (local search) -------------------------------------------------
    def neighbours(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Feasible configurations one parameter move away from ``x`` (a permutation moves by a
        swap or by moving one element)."""
        rows, _ = self.neighbours_of_many(self._check_matrix(x)[:1], rng)
        return rows

    def neighbours_of_many(self, X: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Feasible one-move neighbours of every row of ``X`` in one vectorised feasibility check;
        returns the neighbours and, for each, the index of the row it came from."""
        X = self._check_matrix(X)
        moves = []
        for p in self.parameters:
            s = self.slices[p.name]
            cand, owner = p.neighbours_many(X[:, s], rng)
            if len(cand):
                moves.append((s, cand, owner))
        if not moves:
            return np.empty((0, self.width)), np.empty(0, dtype=int)
        total = sum(len(owner) for _, _, owner in moves)
        N, who = np.empty((total, self.width)), np.empty(total, dtype=int)
        at = 0
        for s, cand, owner in moves:  # each move: its row copied with one parameter changed
            rows = slice(at, at + len(owner))
            N[rows] = X[owner]
            N[rows, s] = cand
            who[rows] = owner
            at += len(owner)
        ok = self.is_feasible(N)
        return N[ok], who[ok]

    # ---- size and enumeration ----------------------------------------------------------
    @property
    def cartesian_size(self) -> float:
        return math.prod(p.cardinality for p in self.parameters)

    def count_feasible(self) -> int | None:
        """Exact number of feasible configurations (None if continuous or not enumerated)."""
        if not self.constraints:
            size = self.cartesian_size
            if isinstance(size, int):  # exact, however large (1,025 two-valued flags: 2**1025)
                return size
            return int(size) if math.isfinite(size) else None
        return self.chain_of_trees.count()

    def enumerate(self, limit: int = 100_000) -> np.ndarray | None:
        """All feasible configurations as raw rows, or None when more than ``limit`` (or unknown)."""
        count = self.count_feasible()
        if count is None or count > limit:
            return None
        cot = self.chain_of_trees if self.constraints else None
        factors: list[dict[str, np.ndarray]] = []
        free = cot.free_parameters if cot else self.parameters
        for p in free:
            factors.append({p.name: p.grid()})
        if cot:
            for g in cot.groups:
                factors.append(cot.decode_leaves(g, g.leaf_keys))
        sizes = [len(next(iter(f.values()))) for f in factors]
        grids = np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")
        picks = [g.reshape(-1) for g in grids]
        X = np.empty((count, self.width))
        for f, pick in zip(factors, picks):
            for name, block in f.items():
                X[:, self.slices[name]] = block[pick]
        return X

    # ---- defaults, priors, description ------------------------------------------------
    def default_config(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.parameters}

    @property
    def has_prior(self) -> bool:
        return any(p.has_prior for p in self.parameters)

    def prior_weight(self, X: np.ndarray) -> np.ndarray:
        """Product of per-parameter prior densities relative to uniform."""
        X = self._check_matrix(X)
        w = np.ones(len(X))
        for p in self.parameters:
            if p.has_prior:
                w *= p.prior_weight(X[:, self.slices[p.name]])
        return w

    def to_spec(self) -> dict[str, Any]:
        """JSON-ready description (the ``parameters`` and ``constraints`` of a scenario)."""
        return {
            "parameters": [p.to_spec() for p in self.parameters],
            "constraints": [c.expression for c in self.constraints if isinstance(c, Constraint)],
        }

    def ensure_feasible(self) -> None:
        """Raise InfeasibleSpaceError now if the constraints admit nothing."""
        if self.constraints:
            self.sample(1, np.random.default_rng(0))
