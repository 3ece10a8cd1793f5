"""Random-search baselines: uniform over the feasible set, by rejection or via Chain-of-Trees."""

from __future__ import annotations

import numpy as np

from bayestune.history import History, draw_unseen
from bayestune.strategies.base import Strategy, register


@register
class UniformRandom(Strategy):
    """Uniform random search: whole configurations drawn independently, infeasible ones rejected."""

    name = "random"
    multi_objective = True
    sampling = "uniform"

    def suggest(self, history: History, n: int) -> np.ndarray:
        return draw_unseen(self.space, history, n, self.rng, method=self.sampling)


@register
class ChainOfTreesRandom(UniformRandom):
    """Random search drawing directly from the Chain-of-Trees (fast on sparse spaces)."""

    name = "cot_random"
    sampling = "cot"
