"""The acquisition scorer against hand-computed values on a mocked posterior."""

import math

import numpy as np
import pytest

from bayestune.acquisition.scoring import FEASIBILITY_THRESHOLDS, acquisition_scorer
from bayestune.models.encoding import FeatureEncoder
from bayestune.space import Real, Space

SPACE = Space([Real("x", 0.0, 1.0)])
X = np.array([[0.1], [0.5], [0.9]])


class Posterior:
    """Latent mean x and standard deviation 1 everywhere; incumbent 0.5."""

    best_y_latent_ = 0.5

    def predict_latent(self, F):
        return F[:, 0].copy(), np.ones(len(F))


class Classifier:
    def predict_proba(self, F):
        return np.array([0.01, 0.5, 0.9])[: len(F)]


def ei(mu: float, sigma: float, best: float, xi: float) -> float:
    z = (best - xi - mu) / sigma
    pdf = math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1 + math.erf(z / math.sqrt(2)))
    return sigma * (z * cdf + pdf)


def scorer(classifier=None, rng=None, **kwargs):
    options = {"acquisition": "ei", "parameter": 0.0, "n_obs": 10, "prior_beta": 10.0, **kwargs}
    return acquisition_scorer(
        SPACE, FeatureEncoder(SPACE), Posterior(), classifier, rng or np.random.default_rng(0), **options
    )


def test_ei_on_the_latent_posterior():
    expected = [ei(x, 1.0, 0.5, 0.0) for x in (0.1, 0.5, 0.9)]
    assert np.allclose(scorer()(X), expected)
    assert scorer()(X)[1] == pytest.approx(1 / math.sqrt(2 * math.pi))


def test_ei_times_p_feasible_with_the_drawn_threshold():
    epsilon = float(np.random.default_rng(3).choice(FEASIBILITY_THRESHOLDS))
    score = scorer(Classifier(), np.random.default_rng(3))(X)
    p = np.array([0.01, 0.5, 0.9])
    expected = np.array([ei(x, 1.0, 0.5, 0.0) for x in (0.1, 0.5, 0.9)]) * p
    expected[p <= epsilon] = -np.inf
    assert np.array_equal(np.isinf(score), np.isinf(expected))
    assert np.allclose(score[1:], expected[1:])


def test_the_threshold_rules_out_unlikely_candidates():
    rng = next(
        np.random.default_rng(s) for s in range(100) if np.random.default_rng(s).choice(FEASIBILITY_THRESHOLDS) >= 0.01
    )
    assert scorer(Classifier(), rng)(X)[0] == -np.inf


def test_no_classifier_draws_no_threshold():
    rng = np.random.default_rng(0)
    scorer(None, rng)
    assert rng.random() == np.random.default_rng(0).random()


def test_lcb_is_shifted_positive_and_ranks_low_means_first():
    score = scorer(acquisition="lcb", parameter=2.0)(X)
    assert np.all(score > 0)
    assert score[0] > score[1] > score[2]
    assert score[0] - score[2] == pytest.approx(0.8)


def test_the_prior_weight_fades_with_observations():
    space = Space([Real("x", 0.0, 1.0, prior="decay")])
    for n_obs in (5, 50):
        score = acquisition_scorer(
            space,
            FeatureEncoder(space),
            Posterior(),
            None,
            np.random.default_rng(0),
            acquisition="pi",
            parameter=0.0,
            n_obs=n_obs,
            prior_beta=10.0,
        )(X)
        plain = scorer(acquisition="pi", n_obs=n_obs)(X)
        assert np.allclose(score / plain, space.prior_weight(X) ** (10.0 / n_obs))


class Draws:
    """A sampling posterior: draw s of the target at x is x + z_s, with two base samples ±1."""

    best = 0.5

    def base_samples(self, n_samples, rng):
        rng.integers(2**31)  # consumes the generator as a real posterior's seed draw does
        return np.array([[-1.0], [1.0]])

    def rsample(self, X, base_samples):
        return X[:, 0][None, :] + base_samples


def test_a_sampling_posterior_is_scored_by_monte_carlo_ei():
    score = acquisition_scorer(
        SPACE, FeatureEncoder(SPACE), Draws(), None, np.random.default_rng(0), parameter=0.0, n_obs=10, prior_beta=10.0
    )(X)
    expected = [np.mean(np.maximum(0.5 - (x + np.array([-1.0, 1.0])), 0.0)) for x in X[:, 0]]
    assert np.allclose(score, expected, atol=1e-8)


def test_a_sampling_posterior_gets_the_same_feasibility_and_prior_weights():
    """What bograph lacked before the shared scorer: P(feasible) with the ε cut, and piBO."""
    space = Space([Real("x", 0.0, 1.0, prior={"mean": 0.9, "std": 0.1})])
    plain = acquisition_scorer(
        space, FeatureEncoder(space), Draws(), None, np.random.default_rng(0), parameter=0.0, n_obs=10, prior_beta=10.0
    )(X)
    flat = acquisition_scorer(
        SPACE, FeatureEncoder(SPACE), Draws(), None, np.random.default_rng(0), parameter=0.0, n_obs=10, prior_beta=10.0
    )(X)
    weights = space.prior_weight(X) ** (10.0 / 10)
    assert np.allclose(plain, flat * weights)
    rng = np.random.default_rng(0)
    epsilon = float(np.random.default_rng(0).choice(FEASIBILITY_THRESHOLDS))
    weighted = acquisition_scorer(
        SPACE, FeatureEncoder(SPACE), Draws(), Classifier(), rng, parameter=0.0, n_obs=10, prior_beta=10.0
    )(X)
    p = Classifier().predict_proba(X)
    assert np.allclose(np.where(p <= epsilon, -np.inf, flat * p), weighted)


def test_a_sampling_posterior_takes_only_expected_improvement():
    with pytest.raises(ValueError, match="Monte-Carlo EI"):
        acquisition_scorer(
            SPACE,
            FeatureEncoder(SPACE),
            Draws(),
            None,
            np.random.default_rng(0),
            acquisition="lcb",
            parameter=2.0,
            n_obs=10,
            prior_beta=10.0,
        )
