"""The suggestion interface every search strategy implements, and what it sees of the past.

A strategy only proposes raw rows; the :class:`~bayestune.optimizer.Optimizer` owns the
initial design, the journal, duplicate bookkeeping and the budget.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.scenario_model import Objective
from bayestune.space.space import Space

#: Rounds of sampling before concluding that (almost) every configuration has been seen.
MAX_UNSEEN_ROUNDS = 50


@dataclass
class History:
    """Finished and in-flight evaluations as raw rows.

    ``Y[i, j]`` is objective ``j`` of row ``i`` in its own units (NaN where the evaluation
    failed); ``feasible[i]`` is False for failures and infeasible outputs.
    """

    space: Space
    objectives: Sequence[Objective]
    X: np.ndarray
    Y: np.ndarray
    feasible: np.ndarray
    pending: np.ndarray
    seen: set[bytes] = field(default_factory=set)

    @classmethod
    def empty(cls, space: Space, objectives: Sequence[Objective]) -> "History":
        return cls(space, list(objectives), np.empty((0, space.width)), np.empty((0, len(objectives))),
                   np.empty(0, dtype=bool), np.empty((0, space.width)))

    @property
    def n(self) -> int:
        return len(self.X)

    @property
    def n_feasible(self) -> int:
        return int(self.feasible.sum())

    def signed_Y(self) -> np.ndarray:
        """Objective values turned into quantities to minimise (maximised ones negated)."""
        signs = np.array([1.0 if o.minimize else -1.0 for o in self.objectives])
        return self.Y * signs


class Strategy(ABC):
    """Proposes configurations. Subclasses set ``name`` and implement :meth:`suggest`."""

    name: ClassVar[str]
    #: Whether the strategy can handle several objectives.
    multi_objective: ClassVar[bool] = False

    def __init__(self, space: Space, objectives: Sequence[Objective], rng: np.random.Generator, **options: Any) -> None:
        if options:
            raise BayestuneError(f"strategy {self.name!r} takes no options, but got {sorted(options)}")
        self.space = space
        self.objectives = list(objectives)
        self.rng = rng
        if len(self.objectives) > 1 and not self.multi_objective:
            raise BayestuneError(
                f"strategy {self.name!r} optimises one objective, but the scenario has {len(self.objectives)}: "
                f"{[o.name for o in self.objectives]}")

    @abstractmethod
    def suggest(self, history: History, n: int) -> np.ndarray:
        """Up to ``n`` distinct feasible raw rows not in ``history.seen`` (fewer only when the
        space is exhausted)."""


def draw_unseen(space: Space, history: History, n: int, rng: np.random.Generator, *,
                method: str = "cot", use_prior: bool = False) -> np.ndarray:
    """``n`` feasible, distinct rows never evaluated nor pending.

    Small spaces are enumerated so the last unseen configurations are still found; large
    ones are sampled in growing batches.
    """
    seen = history.seen
    count = space.count_feasible()
    if count is not None and count <= 200_000:
        if len(seen) >= count:
            return np.empty((0, space.width))
        if count <= 4 * (len(seen) + n) or count <= 20_000:
            all_rows = space.enumerate(limit=count)
            keys = space.row_keys(all_rows)
            unseen = np.array([k not in seen for k in keys])
            rows = all_rows[unseen]
            if use_prior and space.has_prior and len(rows) > n:
                w = space.prior_weight(rows)
                idx = rng.choice(len(rows), size=n, replace=False, p=w / w.sum())
            else:
                idx = rng.permutation(len(rows))[:n]
            return rows[idx]
    out: list[np.ndarray] = []
    taken: set[bytes] = set()
    batch = max(16, 2 * n)
    for _ in range(MAX_UNSEEN_ROUNDS):
        X = space.sample(batch, rng, method=method, use_prior=use_prior)
        for row, key in zip(X, space.row_keys(X)):
            if key not in seen and key not in taken:
                taken.add(key)
                out.append(row)
                if len(out) == n:
                    return np.array(out)
        batch = min(batch * 2, 1 << 16)
    return np.array(out).reshape(-1, space.width)


_REGISTRY: dict[str, type[Strategy]] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator: make a strategy constructible by name (scenario files, CLI)."""
    _REGISTRY[cls.name] = cls
    return cls


def available_strategies() -> list[str]:
    import bayestune.strategies  # noqa: F401  (registers the built-in strategies)

    return sorted(_REGISTRY)


def make_strategy(name: str, space: Space, objectives: Sequence[Objective], rng: np.random.Generator,
                  options: dict[str, Any] | None = None) -> Strategy:
    names = available_strategies()
    if name not in _REGISTRY:
        raise BayestuneError(f"unknown strategy {name!r}; allowed: {names}")
    return _REGISTRY[name](space, objectives, rng, **(options or {}))
