import numpy as np

from bayestune.acquisition.thompson import thompson_pick
from bayestune.models.gp import GaussianProcess
from bayestune.models.kernels import FeatureBlock


def fitted_gp():
    rng = np.random.default_rng(0)
    F = rng.uniform(size=(12, 1))
    y = np.sin(6 * F[:, 0])
    gp = GaussianProcess([FeatureBlock("x", "numeric", 0, 1)], seed=0)
    return gp.fit(F, y), F


def test_posterior_covariance_matches_the_marginal_predictions():
    gp, _ = fitted_gp()
    G = np.linspace(0, 1, 7).reshape(-1, 1)
    mean, cov = gp.posterior_covariance(G)
    mu, sd = gp.predict_latent(G)
    np.testing.assert_allclose(mean, mu, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.sqrt(np.clip(np.diag(cov), 0, None)), sd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(cov, cov.T)


def test_draws_pick_the_predicted_minimum_most_often_but_not_always():
    gp, F = fitted_gp()
    G = np.linspace(0, 1, 201).reshape(-1, 1)
    mu, _ = gp.predict_latent(G)
    picks = [thompson_pick(gp, G, np.random.default_rng(s)) for s in range(60)]
    near = np.abs(G[picks, 0] - G[int(np.argmin(mu)), 0]) < 0.1
    assert near.mean() > 0.5 and len(set(picks)) > 1


def test_infeasible_weights_exclude_rows_and_an_empty_pool_gives_none():
    gp, _ = fitted_gp()
    G = np.linspace(0, 1, 50).reshape(-1, 1)
    weights = (G[:, 0] > 0.8).astype(float)
    picks = {thompson_pick(gp, G, np.random.default_rng(s), weights=weights) for s in range(10)}
    assert all(G[i, 0] > 0.8 for i in picks)
    assert thompson_pick(gp, G, np.random.default_rng(0), weights=np.zeros(50)) is None


def test_large_pools_are_subsampled():
    gp, _ = fitted_gp()
    G = np.linspace(0, 1, 300).reshape(-1, 1)
    assert 0 <= thompson_pick(gp, G, np.random.default_rng(1), max_candidates=20) < 300
