"""The multi-objective strategies ``pareto_rf`` (HyperMapper 2.0) and ``parego`` on a small
problem with a known Pareto front, plus their contracts (seeds, no repeats, batches, options,
priors, hidden constraints)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bayestune.exceptions import BayestuneError
from bayestune.history import History
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.pareto import hypervolume, pareto_mask
from bayestune.scenario.records import DesignSpec
from bayestune.space import Categorical, Integer, Ordinal, Real, Space
from bayestune.strategies.base import make_strategy
from bayestune.strategies.bo import ParEGO

X1 = [i / 20 for i in range(21)]
SHIFT = {"a": 0.0, "b": 0.5, "c": 1.0}
REF = np.array([1.1, 1.1])
OBJECTIVES = [Objective("f1"), Objective("f2")]


def zdt_space() -> Space:
    """A discrete ZDT1 (3,465 configurations): f1 = x1, g = 1 at x2 = x3 = 0, x4 = a."""
    return Space(
        [
            Ordinal("x1", X1),
            Integer("x2", 0, 10),
            Ordinal("x3", [0.0, 0.1, 0.2, 0.5, 1.0]),
            Categorical("x4", list(SHIFT)),
        ]
    )


def zdt(cfg):
    g = 1.0 + 9.0 * (cfg["x2"] / 10 + cfg["x3"] + SHIFT[cfg["x4"]]) / 3
    return {"f1": cfg["x1"], "f2": g * (1.0 - math.sqrt(cfg["x1"] / g))}


def true_front_hv() -> float:
    front = np.array([[f, 1.0 - math.sqrt(f)] for f in X1])
    return hypervolume(front, REF)


def hv_ratio(strategy: str, seed: int, budget: int = 24, **options) -> float:
    opt = Optimizer(
        zdt_space(),
        objectives=OBJECTIVES,
        strategy=strategy,
        seed=seed,
        design=DesignSpec(size=8),
        strategy_options=options,
    )
    opt.optimize(zdt, budget)
    Y = np.array([[t.values["f1"], t.values["f2"]] for t in opt.trials])
    return hypervolume(Y, REF) / true_front_hv()


def test_the_known_front_is_the_enumerated_one():
    space = zdt_space()
    X = space.enumerate()
    Y = np.array([[v["f1"], v["f2"]] for v in map(zdt, space.to_configs(X))])
    front = Y[pareto_mask(Y)]
    expected = np.array([[f, 1.0 - math.sqrt(f)] for f in X1])
    assert np.allclose(np.unique(front, axis=0), expected)
    assert hypervolume(Y, REF) == pytest.approx(true_front_hv())


@pytest.mark.parametrize("strategy", ["pareto_rf", "parego"])
def test_strategy_beats_random_on_a_known_front(strategy):
    # Measured (4 seeds, 24 evaluations): pareto_rf 0.62-0.75 (0.68-0.72 with 50 trees), parego
    # 0.82-0.94, random 0.00-0.28 of the true front's hypervolume.
    options = {"rf": {"trees": 50}} if strategy == "pareto_rf" else {}
    ours = np.mean([hv_ratio(strategy, s, **options) for s in range(2)])
    rnd = np.mean([hv_ratio("random", s) for s in range(2)])
    assert ours > rnd + 0.25, (ours, rnd)
    assert ours > 0.6


#: Fewer trees where only the contract is checked, not the search quality (keeps the tests fast).
FAST = {"pareto_rf": {"rf": {"trees": 25}}, "parego": {}}


@pytest.mark.parametrize("strategy", ["pareto_rf", "parego"])
def test_seeds_reproduce_and_nothing_repeats(strategy):
    def configs(seed):
        opt = Optimizer(
            zdt_space(),
            objectives=OBJECTIVES,
            strategy=strategy,
            seed=seed,
            design=DesignSpec(size=5),
            strategy_options=FAST[strategy],
        )
        opt.optimize(zdt, 12)
        return [tuple(sorted(t.config.items())) for t in opt.trials]

    a, b, c = configs(3), configs(3), configs(4)
    assert a == b and a != c
    assert len(set(a)) == len(a)


@pytest.mark.parametrize("strategy", ["pareto_rf", "parego"])
def test_batches_are_distinct_feasible_and_respect_known_constraints(strategy):
    space = Space([Integer("a", 0, 15), Integer("b", 0, 15), Real("r", 0.0, 1.0)], ["a + b <= 18"])

    def box(cfg):
        return {"u": (cfg["a"] - 3) ** 2 + cfg["r"], "v": (cfg["b"] - 9) ** 2 + 1 - cfg["r"]}

    opt = Optimizer(
        space, objectives=[Objective("u"), Objective("v")], strategy=strategy, seed=0, design=DesignSpec(size=6)
    )
    for cfg in opt.ask(6):
        opt.tell(cfg, box(cfg))
    batch = opt.ask(4)
    assert len({tuple(sorted(c.items())) for c in batch}) == 4
    assert all(c["a"] + c["b"] <= 18 for c in batch)


@pytest.mark.parametrize("strategy", ["pareto_rf", "parego"])
def test_hidden_constraints_are_learned(strategy):
    # Half the space crashes (x2 >= 5); after the design the feasibility classifier should keep
    # most suggestions out of it (random would fail about half the time).
    def crashy(cfg):
        if cfg["x2"] >= 5:
            raise RuntimeError("does not compile")
        return zdt(cfg)

    opt = Optimizer(
        zdt_space(),
        objectives=OBJECTIVES,
        strategy=strategy,
        seed=1,
        design=DesignSpec(size=10),
        strategy_options=FAST[strategy],
    )
    opt.optimize(crashy, 26)
    later = opt.trials[10:]
    assert sum(not t.feasible for t in later) <= 5


def test_maximised_objectives_are_handled():
    def flipped(cfg):
        v = zdt(cfg)
        return {"f1": v["f1"], "neg_f2": -v["f2"]}

    opt = Optimizer(
        zdt_space(),
        objectives=[Objective("f1"), Objective("neg_f2", "maximize")],
        strategy="parego",
        seed=0,
        design=DesignSpec(size=8),
    )
    opt.optimize(flipped, 20)
    Y = np.array([[t.values["f1"], t.values["neg_f2"]] for t in opt.trials])
    hv = hypervolume(Y, [1.1, -1.1], ["minimize", "maximize"])
    assert hv / true_front_hv() > 0.5


def test_options_are_checked():
    with pytest.raises(BayestuneError, match="allowed"):
        Optimizer(zdt_space(), objectives=OBJECTIVES, strategy="pareto_rf", strategy_options={"trees": 3})
    with pytest.raises(BayestuneError, match="batch_size"):
        Optimizer(zdt_space(), objectives=OBJECTIVES, strategy="pareto_rf", strategy_options={"batch_size": 0})
    with pytest.raises(BayestuneError, match="weights"):
        Optimizer(zdt_space(), objectives=OBJECTIVES, strategy="parego", strategy_options={"weights": "grid"})
    with pytest.raises(BayestuneError, match="one objective"):
        Optimizer(zdt_space(), objectives=OBJECTIVES, strategy="bo")


# ---- priors weight the multi-objective acquisition too ---------------------------------------
def _history(space, n, rng, values):
    X = space.sample(n, rng)
    Y = np.array([values(c) for c in space.to_configs(X)])
    return History(space, OBJECTIVES, X, Y, np.ones(n, dtype=bool), np.empty((0, space.width)), set(space.row_keys(X)))


def test_pareto_rf_random_picks_follow_the_prior():
    # Both objectives are flat, so every candidate is on the predicted front and the M picks
    # are random: with a Beta(0.5, 1.5) prior on x they concentrate at small x.
    space = Space([Real("x", 0.0, 1.0, prior=[0.5, 1.5]), Real("y", 0.0, 1.0)])
    rng = np.random.default_rng(0)
    history = _history(space, 12, rng, lambda c: [1.0, 1.0])
    strategy = make_strategy(
        "pareto_rf", space, OBJECTIVES, np.random.default_rng(1), {"batch_size": 40, "n_candidates": 4000}
    )
    X = strategy.suggest(history, 40)
    x = space.columns(X)["x"]
    assert x.mean() < 0.33  # uniform: 0.5; Beta(0.5, 1.5)^(10/12)-weighted: about 0.27
    plain = make_strategy(
        "pareto_rf",
        Space([Real("x", 0.0, 1.0), Real("y", 0.0, 1.0)]),
        OBJECTIVES,
        np.random.default_rng(1),
        {"batch_size": 40, "n_candidates": 4000},
    )
    assert space.columns(plain.suggest(history, 40))["x"].mean() > 0.38


def test_parego_acquisition_is_prior_weighted():
    space = Space([Real("x", 0.0, 1.0, prior="exponential"), Real("y", 0.0, 1.0)])
    strategy = ParEGO(space, OBJECTIVES, np.random.default_rng(0), prior={"beta": 10.0})

    class Flat:
        best_y_latent_ = 0.0

        def predict_latent(self, F):
            return np.zeros(len(F)), np.ones(len(F))

    X = np.array([[0.1, 0.5], [0.5, 0.5], [0.9, 0.5]])
    score = strategy.scorer.score(Flat(), strategy.encoder, None, 20)
    score = score(X)
    expected = space.prior_weight(X) ** (10.0 / 20)
    assert np.allclose(score / score[1], expected / expected[1])
    assert score[2] > score[1] > score[0]
