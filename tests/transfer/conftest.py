"""A small grid space with a target objective and related / unrelated sources of it."""

import itertools

import numpy as np
import pytest

from bayestune.space import Categorical, Ordinal, Space
from bayestune.transfer.runs import PriorRun

VALUES = [1, 2, 4, 8, 16, 32]


def grid_space() -> Space:
    return Space(
        [Ordinal("bx", VALUES, log=True), Ordinal("by", VALUES, log=True), Categorical("c", ["a", "b"])],
        ["bx * by <= 256"],
    )


def target(cfg) -> float:
    """Minimum at bx=16, by=4, c='b'."""
    return float(1.0 + (np.log2(cfg["bx"]) - 4) ** 2 + (np.log2(cfg["by"]) - 2) ** 2 + (cfg["c"] == "a"))


def all_configs(space: Space) -> list[dict]:
    configs = [dict(zip(["bx", "by", "c"], v)) for v in itertools.product(VALUES, VALUES, ["a", "b"])]
    return [c for c in configs if space.is_feasible(space.to_matrix([c]))[0]]


@pytest.fixture
def space() -> Space:
    return grid_space()


@pytest.fixture
def related(space) -> PriorRun:
    """Another 'device': three times slower, plus a small distortion; same ranking near the optimum."""
    configs = all_configs(space)
    return PriorRun.from_configs(
        space, configs, [3.0 * target(c) + 0.1 * (c["bx"] == 1) for c in configs], name="related"
    )


@pytest.fixture
def unrelated(space) -> PriorRun:
    """The related source's values shuffled: same distribution, no information."""
    configs = all_configs(space)
    values = [target(c) for c in configs]
    values = list(np.random.default_rng(7).permutation(values))
    return PriorRun.from_configs(space, configs, values, name="unrelated")
