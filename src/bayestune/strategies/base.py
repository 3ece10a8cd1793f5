"""The suggestion interface every search strategy implements, and the strategy registry.

A strategy only proposes raw rows; the :class:`~bayestune.optimizer.Optimizer` owns the
initial design, the journal, duplicate bookkeeping and the budget.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.formatting import did_you_mean
from bayestune.history import History
from bayestune.objectives import Objective
from bayestune.settings import Rule, Settings
from bayestune.space.space import Space

__all__ = ["Rule", "Settings", "Strategy", "available_strategies", "make_strategy", "register"]


class Strategy(ABC):
    """Proposes configurations. Subclasses set ``name`` and implement :meth:`suggest`; those
    with options set ``settings_class`` to their :class:`Settings` subclass (read as ``self.settings``)."""

    name: ClassVar[str]
    #: Whether the strategy can handle several objectives.
    multi_objective: ClassVar[bool] = False
    #: The options the strategy accepts (none by default).
    settings_class: ClassVar[type[Settings]] = Settings

    def __init__(self, space: Space, objectives: Sequence[Objective], rng: np.random.Generator, **options: Any) -> None:
        self.settings = self.settings_class.from_options(f"strategy {self.name!r}", options)
        self.space = space
        self.objectives = list(objectives)
        self.rng = rng
        if len(self.objectives) > 1 and not self.multi_objective:
            raise BayestuneError(
                f"strategy {self.name!r} optimises one objective, but the scenario has {len(self.objectives)}: "
                f"{[o.name for o in self.objectives]}"
            )

    @abstractmethod
    def suggest(self, history: History, n: int) -> np.ndarray:
        """Up to ``n`` distinct feasible raw rows not in ``history.seen`` (fewer only when the
        space is exhausted)."""


_REGISTRY: dict[str, type[Strategy]] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator: make a strategy constructible by name (scenario files, CLI)."""
    _REGISTRY[cls.name] = cls
    return cls


def available_strategies() -> list[str]:
    import bayestune.strategies  # noqa: F401  (registers the built-in strategies)

    return sorted(_REGISTRY)


def make_strategy(
    name: str,
    space: Space,
    objectives: Sequence[Objective],
    rng: np.random.Generator,
    options: Mapping[str, Any] | None = None,
) -> Strategy:
    names = available_strategies()
    if name not in _REGISTRY:
        raise BayestuneError(f"unknown strategy {name!r}{did_you_mean(name, names)}; allowed: {names}")
    return _REGISTRY[name](space, objectives, rng, **(options or {}))
