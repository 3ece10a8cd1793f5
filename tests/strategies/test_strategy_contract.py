"""The contract every registered strategy keeps, whatever its search: ``suggest(history, n)``
returns at most ``n`` distinct, known-feasible rows outside ``history.seen`` (fewer only when
the space runs out), the same rows for the same seed, and unknown options are rejected with
the list of allowed ones. A new strategy gets the whole battery by registering itself."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bayestune
from bayestune.exceptions import BayestuneError
from bayestune.history import History, draw_unseen
from bayestune.objectives import Objective
from bayestune.space import Categorical, Integer, Real, Space
from bayestune.strategies import available_strategies, make_strategy
from bayestune.strategies.base import _REGISTRY

STRATEGIES = available_strategies()
#: Options that keep the slow models small; the contract does not depend on them.
FAST = {"pareto_rf": {"rf": {"trees": 10}}}


def small_space() -> Space:
    """52 feasible configurations of 72, behind a known constraint."""
    return Space([Integer("a", 0, 5), Integer("b", 0, 5), Categorical("c", ["x", "y"])], ["a + b <= 6"])


def continuous_space() -> Space:
    """Not enumerable, so every strategy's random draws show in its suggestions."""
    return Space([Integer("a", 0, 5), Integer("b", 0, 5), Real("r", 0.0, 1.0)], ["a + b <= 6"])


def objectives_for(name: str) -> list[Objective]:
    if _REGISTRY[name].multi_objective:
        return [Objective("f1"), Objective("f2")]
    return [Objective("f1")]


def values(config: dict, n_objectives: int) -> list[float]:
    f1 = (config["a"] - 2) ** 2 + config["b"] + (config.get("c") == "y") + config.get("r", 0.0) + 1.0
    f2 = (config["b"] - 3) ** 2 + config["a"] + 1.0
    return [f1, f2][:n_objectives]


def history_of(space: Space, objectives: list[Objective], X: np.ndarray, fail_every: int = 4) -> History:
    """``X`` evaluated, every ``fail_every``-th row a failure (NaN objectives)."""
    feasible = np.array([i % fail_every != fail_every - 1 for i in range(len(X))])
    Y = np.array(
        [
            values(c, len(objectives)) if ok else [np.nan] * len(objectives)
            for c, ok in zip(space.to_configs(X), feasible)
        ]
    ).reshape(len(X), len(objectives))
    return History(space, objectives, X, Y, feasible, np.empty((0, space.width)), set(space.row_keys(X)))


def partial_history(space: Space, objectives: list[Objective], n: int = 12, seed: int = 0) -> History:
    X = draw_unseen(space, History.empty(space, objectives), n, np.random.default_rng(seed))
    return history_of(space, objectives, X)


def strategy_for(name: str, seed: int = 1, space: Space | None = None, **options):
    space = space or small_space()
    objectives = objectives_for(name)
    return (
        space,
        objectives,
        make_strategy(name, space, objectives, np.random.default_rng(seed), {**FAST.get(name, {}), **options}),
    )


@pytest.mark.parametrize("name", STRATEGIES)
def test_suggestions_are_distinct_known_feasible_and_unseen(name):
    space, objectives, strategy = strategy_for(name)
    history = partial_history(space, objectives)
    for _ in range(2):  # stateful strategies keep the contract on a repeated ask
        rows = strategy.suggest(history, 5)
        assert rows.shape == (5, space.width)
        keys = space.row_keys(rows)
        assert len(set(keys)) == 5
        assert not set(keys) & history.seen
        assert space.is_feasible(rows).all()


@pytest.mark.parametrize("name", STRATEGIES)
def test_an_exhausted_space_gives_no_rows(name):
    space, objectives, strategy = strategy_for(name)
    history = history_of(space, objectives, space.enumerate())
    assert strategy.suggest(history, 3).shape == (0, space.width)


@pytest.mark.parametrize("name", STRATEGIES)
def test_the_last_unseen_rows_are_found_when_fewer_than_asked(name):
    space, objectives, strategy = strategy_for(name)
    X = space.enumerate()
    history = history_of(space, objectives, X[2:])
    rows = strategy.suggest(history, 5)
    assert sorted(space.row_keys(rows)) == sorted(space.row_keys(X[:2]))


@pytest.mark.parametrize("name", STRATEGIES)
def test_same_seed_same_rows_other_seed_other_rows(name):
    def rows(seed: int) -> list[bytes]:
        space, objectives, strategy = strategy_for(name, seed=seed, space=continuous_space())
        return space.row_keys(strategy.suggest(partial_history(space, objectives), 4))

    assert rows(7) == rows(7)
    assert any(rows(seed) != rows(7) for seed in (8, 9, 10))


@pytest.mark.parametrize("name", STRATEGIES)
def test_unknown_options_are_rejected_naming_the_allowed_ones(name):
    allowed = sorted(f.name for f in dataclasses.fields(_REGISTRY[name].settings_class))
    with pytest.raises(BayestuneError, match="no_such_option") as info:
        strategy_for(name, no_such_option=1)
    assert f"allowed: {allowed}" in str(info.value)


FRESH_PROCESS = """
import json, sys
import numpy as np
sys.path.insert(0, {tests!r})
from test_strategy_contract import continuous_space, partial_history, strategy_for
space, objectives, strategy = strategy_for("bo", seed=5, space=continuous_space())
print(json.dumps([k.hex() for k in space.row_keys(strategy.suggest(partial_history(space, objectives), 3))]))
"""


def test_bo_gives_the_same_rows_in_a_fresh_process():
    space, objectives, strategy = strategy_for("bo", seed=5, space=continuous_space())
    here = [k.hex() for k in space.row_keys(strategy.suggest(partial_history(space, objectives), 3))]
    src = str(Path(bayestune.__file__).parents[1])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
        "PYTHONHASHSEED": "123",
    }
    out = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS.format(tests=str(Path(__file__).parent))],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == here


@pytest.mark.parametrize(
    "options, key",
    [
        ({"acquisition_search": {"n_starts": "5"}}, "acquisition_search.n_starts"),
        ({"model": 3}, "model"),
        ({"xi": "small"}, "xi"),
        ({"acquisition_search": {"n_samples": 5000.0}}, "acquisition_search.n_samples"),
        ({"feasibility": {"model": 1.5}}, "feasibility.model"),
        ({"n_starts": "5"}, "acquisition_search.n_starts"),
    ],
)
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_options_of_the_wrong_type_are_rejected_by_name(options, key):
    space = Space([Integer("a", 1, 10)])
    with pytest.raises(BayestuneError, match=f"wrong type: {key}="):
        make_strategy("bo", space, [Objective("v")], np.random.default_rng(0), options)
