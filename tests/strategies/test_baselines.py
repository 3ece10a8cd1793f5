"""The genetic, annealing and multi-start local-search baselines."""

import itertools

import numpy as np
import pytest

from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.space import Categorical, Ordinal, Permutation, Real, Space
from bayestune.strategies import History, available_strategies, make_strategy
from bayestune.strategies.annealing import value_spread
from bayestune.strategies.genetic import order_crossover, repair

BASELINES = ["genetic", "annealing", "local"]


def small_space():
    return Space(
        [
            Ordinal("tx", [1, 2, 4, 8, 16, 32, 64], log=True),
            Ordinal("ty", [1, 2, 4, 8, 16, 32, 64], log=True),
            Categorical("c", ["a", "b", "c"]),
            Permutation("p", 4),
        ],
        ["tx * ty <= 256", "ty <= tx"],
    )


def objective(cfg):
    return (
        1.0
        + (np.log2(cfg["tx"]) - 4) ** 2
        + (np.log2(cfg["ty"]) - 2) ** 2
        + {"a": 0.5, "b": 0.0, "c": 1.0}[cfg["c"]]
        + 0.5 * cfg["p"][0]
        + 0.25 * cfg["p"][3]
    )


def history_of(space, n, seed=0, fail_every=4):
    rng = np.random.default_rng(seed)
    X = space.sample(n, rng)
    _, idx = np.unique(X, axis=0, return_index=True)
    X = X[np.sort(idx)]
    configs = space.to_configs(X)
    feasible = np.array([i % fail_every != fail_every - 1 for i in range(len(X))])
    Y = np.array([[objective(c)] if ok else [np.nan] for c, ok in zip(configs, feasible)])
    return History(space, [Objective("t")], X, Y, feasible, np.empty((0, space.width)), set(space.row_keys(X)))


def test_baselines_are_registered():
    assert set(BASELINES) <= set(available_strategies())


@pytest.mark.parametrize("name", BASELINES)
def test_suggest_with_no_feasible_history_falls_back_to_sampling(name):
    space = small_space()
    history = history_of(space, 3, fail_every=1)  # every evaluation failed
    strategy = make_strategy(name, space, [Objective("t")], np.random.default_rng(0))
    rows = strategy.suggest(history, 4)
    assert len(rows) == 4 and space.is_feasible(rows).all()


@pytest.mark.parametrize("name", BASELINES)
def test_seed_reproducible(name):
    def run(seed):
        opt = Optimizer(small_space(), objectives=["t"], strategy=name, seed=seed)
        opt.optimize(objective, 30)
        return [t.config for t in opt.trials]

    assert run(5) == run(5)
    assert run(5) != run(6)


@pytest.mark.parametrize("name", BASELINES)
def test_improves_on_its_first_samples(name):
    gains = []
    for seed in range(4):
        opt = Optimizer(small_space(), objectives=["t"], strategy=name, seed=seed)
        opt.optimize(objective, 60)
        values = [t.values["t"] for t in opt.trials]
        assert len({tuple(sorted(t.config.items())) for t in opt.trials}) == 60
        gains.append(min(values[:10]) - min(values))
    assert np.mean(gains) > 0.5
    assert all(g >= 0 for g in gains)


@pytest.mark.parametrize("name", BASELINES)
def test_handles_failures_and_maximisation(name):
    space = Space([Ordinal("a", list(range(12))), Real("r", 0.0, 1.0)])

    def box(cfg):
        if cfg["a"] % 5 == 0:
            raise RuntimeError("crash")
        return -((cfg["a"] - 7) ** 2) - (cfg["r"] - 0.5) ** 2

    opt = Optimizer(space, objectives=[Objective("gain", direction="maximize")], strategy=name, seed=0)
    best = opt.optimize(box, 40)
    assert opt.n_evaluated == 40 and opt.n_failed > 0
    assert best.config["a"] in (6, 7, 8)


def test_order_crossover_gives_permutations_mixing_both_parents():
    rng = np.random.default_rng(0)
    a, b = np.arange(6), np.array([5, 3, 1, 0, 2, 4])
    children = {tuple(order_crossover(a, b, rng)) for _ in range(200)}
    for c in children:
        assert sorted(c) == list(range(6))
    assert len(children) > 5


def test_repair_only_resamples_violated_groups():
    space = Space(
        [Ordinal("x", [1, 2, 4, 8]), Ordinal("y", [1, 2, 4, 8]), Categorical("free", ["u", "v", "w"])], ["x >= y"]
    )
    bad = space.to_matrix([{"x": 1, "y": 8, "free": "w"}])[0]
    rng = np.random.default_rng(0)
    for _ in range(20):
        fixed = repair(space, bad, rng)
        cfg = space.to_config(fixed)
        assert cfg["x"] >= cfg["y"] and cfg["free"] == "w"


def test_value_spread_is_robust():
    assert value_spread(np.array([1.0, 2.0, 3.0, 4.0, 1000.0])) == pytest.approx(2.0)
    assert value_spread(np.array([5.0, 5.0])) == pytest.approx(0.5)
    assert value_spread(np.array([])) == 1.0


def test_local_search_reaches_the_optimum_of_a_small_convex_problem():
    space = Space([Ordinal(f"p{i}", list(range(8))) for i in range(3)])
    best = {}
    for seed in range(3):
        opt = Optimizer(space, objectives=["t"], strategy="local", seed=seed)
        best[seed] = opt.optimize(lambda c: sum((c[f"p{i}"] - 3) ** 2 for i in range(3)), 80).values["t"]
    assert all(v == 0 for v in best.values())


def test_every_permutation_reachable_by_genetic_operators():
    space = Space([Permutation("p", 3)])
    strategy = make_strategy("genetic", space, [Objective("t")], np.random.default_rng(0))
    X = space.to_matrix([{"p": (0, 1, 2)}, {"p": (2, 1, 0)}])
    history = History(
        space,
        [Objective("t")],
        X,
        np.array([[1.0], [2.0]]),
        np.array([True, True]),
        np.empty((0, 3)),
        set(space.row_keys(X)),
    )
    rows = strategy.suggest(history, 4)
    assert {tuple(space.to_config(r)["p"]) for r in rows} == set(itertools.permutations(range(3))) - {
        (0, 1, 2),
        (2, 1, 0),
    }
