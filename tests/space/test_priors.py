"""User priors (HyperMapper 2.0 §3.1): sampling follows the Beta shapes (KS tests), the
"prior" initial design uses them, and the BO acquisition is weighted by them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayestune.design.initial import initial_design
from bayestune.history import History
from bayestune.objectives import Objective
from bayestune.space import Categorical, Integer, Ordinal, Real, Space
from bayestune.space.priors import BETA_SHAPES, ValuePrior

N = 4000
#: Deterministic seeds, so a p-value threshold this low only catches real mismatches.
P_MIN = 1e-3
SHAPES = [*BETA_SHAPES.items(), ("custom", (2.0, 5.0))]


SHAPES_DICT = dict(SHAPES)


def beta_of(shape):
    return SHAPES_DICT[shape]


def discrete_pit(unit_values: np.ndarray, index: np.ndarray, a: float, b: float, rng) -> np.ndarray:
    """Randomised probability integral transform for a discretised Beta.

    Value i of a parameter stands for the unit-interval bin between the midpoints to its
    neighbours; if P(i) is the Beta mass of that bin, then drawing uniformly *within the bin's
    CDF range* turns the samples into exact Beta(a, b) draws, which a KS test can check.
    """
    edges = np.concatenate([[0.0], (unit_values[1:] + unit_values[:-1]) / 2, [1.0]])
    cdf = stats.beta.cdf(edges, a, b)
    lo, hi = cdf[index], cdf[index + 1]
    return stats.beta.ppf(lo + rng.random(len(index)) * (hi - lo), a, b)


@pytest.mark.parametrize("shape", [s for s, _ in SHAPES])
@pytest.mark.parametrize("log", [False, True])
def test_real_prior_samples_follow_the_beta(shape, log):
    a, b = beta_of(shape)
    p = Real("x", 1.0, 1000.0, log=log, prior=shape if shape != "custom" else [a, b])
    raw = p.sample(np.random.default_rng(1), N, use_prior=True)
    u = p.unit(raw).reshape(-1)
    if shape == "uniform":
        assert p.prior is None  # uniform is no prior at all
    assert stats.kstest(u, stats.beta(a, b).cdf).pvalue > P_MIN
    # and the test has teeth: a wrong shape is rejected
    wrong = (3.0, 3.0) if shape != "gaussian" else (0.5, 1.5)
    assert stats.kstest(u, stats.beta(*wrong).cdf).pvalue < P_MIN


@pytest.mark.parametrize("shape", [s for s, _ in SHAPES])
@pytest.mark.parametrize("low,high,log", [(0, 9999, False), (1, 12, False), (1, 4096, True)])
def test_integer_prior_samples_follow_the_discretised_beta(shape, low, high, log):
    a, b = beta_of(shape)
    p = Integer("n", low, high, log=log, prior=shape if shape != "custom" else [a, b])
    rng = np.random.default_rng(2)
    raw = p.sample(rng, N, use_prior=True)
    if shape == "uniform":  # no prior at all: uniform over the values (not half-width end bins)
        assert p.prior is None
        if high - low < 100:
            counts = np.bincount(p.index_of(raw), minlength=high - low + 1)
            assert stats.chisquare(counts).pvalue > P_MIN
        return
    grid = p.grid()
    u_grid = p.unit(grid).reshape(-1)
    pit = discrete_pit(u_grid, p.index_of(raw), a, b, rng)
    assert stats.kstest(pit, stats.beta(a, b).cdf).pvalue > P_MIN
    if high - low > 1000 and not log:  # a fine grid is close to the continuous Beta itself
        assert stats.kstest(p.unit(raw).reshape(-1), stats.beta(a, b).cdf).pvalue > P_MIN


@pytest.mark.parametrize("shape", [s for s, _ in SHAPES])
@pytest.mark.parametrize("values,log", [([1, 2, 4, 8, 16, 32, 64, 128], True), ([0.5, 1.0, 3.0, 3.5, 10.0], False)])
def test_ordinal_prior_samples_follow_the_discretised_beta(shape, values, log):
    a, b = beta_of(shape)
    p = Ordinal("o", values, log=log, prior=shape if shape != "custom" else [a, b])
    rng = np.random.default_rng(3)
    raw = p.sample(rng, N, use_prior=True)
    if shape == "uniform":  # no prior at all: uniform over the values
        assert p.prior is None
        assert stats.chisquare(np.bincount(p.index_of(raw), minlength=len(values))).pvalue > P_MIN
        return
    u_grid = p.unit(p.grid()).reshape(-1)
    pit = discrete_pit(u_grid, p.index_of(raw), a, b, rng)
    assert stats.kstest(pit, stats.beta(a, b).cdf).pvalue > P_MIN
    flat = p.sample(np.random.default_rng(3), N)  # without the prior the same test fails
    pit_flat = discrete_pit(u_grid, p.index_of(flat), a, b, rng)
    assert stats.kstest(pit_flat, stats.beta(a, b).cdf).pvalue < P_MIN


def test_categorical_prior_probabilities():
    p = Categorical("c", ["a", "b", "c"], prior=[0.6, 0.3, 0.1])
    idx = p.index_of(p.sample(np.random.default_rng(4), N, use_prior=True))
    counts = np.bincount(idx, minlength=3)
    assert stats.chisquare(counts, N * np.array([0.6, 0.3, 0.1])).pvalue > P_MIN


def test_prior_design_draws_from_the_priors():
    space = Space(
        [
            Real("x", 0.0, 1.0, prior=[0.5, 1.5]),
            Integer("n", 0, 100_000, prior=[1.5, 0.5]),
            Categorical("c", ["a", "b"], prior=[0.8, 0.2]),
        ]
    )
    history = History.empty(space, [Objective("y")])
    X = initial_design(space, 600, np.random.default_rng(5), history, "prior")
    cols = space.columns(X)
    assert stats.kstest(cols["x"], stats.beta(0.5, 1.5).cdf).pvalue > P_MIN
    assert stats.kstest(cols["n"] / 100_000, stats.beta(1.5, 0.5).cdf).pvalue > P_MIN
    assert 0.72 < np.mean(cols["c"] == "a") < 0.88
    X_plain = initial_design(space, 600, np.random.default_rng(5), history, "cot")
    assert stats.kstest(space.columns(X_plain)["x"], stats.beta(0.5, 1.5).cdf).pvalue < P_MIN


def test_prior_design_on_an_enumerated_space_leans_towards_the_prior():
    space = Space([Ordinal("t", [1, 2, 4, 8, 16, 32, 64, 128], log=True, prior="decay"), Integer("k", 0, 9)])
    history = History.empty(space, [Objective("y")])
    X = initial_design(space, 20, np.random.default_rng(6), history, "prior")
    assert len({tuple(r) for r in X}) == 20
    assert np.mean(space.columns(X)["t"] <= 4) > 0.5  # uniform: 3/8


def test_bo_acquisition_is_weighted_by_the_prior():
    from bayestune.strategies.bo import BayesianOptimization

    space = Space([Real("x", 0.0, 1.0, prior="gaussian")])
    strategy = BayesianOptimization(space, [Objective("y")], np.random.default_rng(0), prior={"beta": 10.0})

    class Flat:
        best_y_latent_ = 0.0

        def predict_latent(self, F):
            return np.zeros(len(F)), np.ones(len(F))

    X = np.array([[0.05], [0.5], [0.95]])
    for n_obs in (5, 50):
        score = strategy.scorer.score(Flat(), strategy.encoder, None, n_obs)(X)
        expected = space.prior_weight(X) ** (10.0 / n_obs)
        assert np.allclose(score / score[1], expected / expected[1])
    assert score[1] > score[0] and score[1] > score[2]


def test_integer_value_prior_over_a_million_values_is_drawn_per_value():
    """Above 10^6 values an Integer samples density priors directly; a value prior has no
    density, so it must still be drawn per value (it used to raise AttributeError)."""
    n = 1_000_002
    probabilities = np.zeros(n)
    probabilities[[7, n - 1]] = 1.0
    p = Integer("x", 0, n - 1, prior=ValuePrior(tuple(probabilities)))
    draws = p.sample(np.random.default_rng(0), 200, use_prior=True).ravel()
    assert set(draws) <= {7.0, float(n - 1)} and len(set(draws)) == 2
    assert p.prior_weight(np.array([7.0]))[0] > p.prior_weight(np.array([8.0]))[0]
