import numpy as np
import pytest

from bayestune.models.forest import RandomForestSurrogate
from bayestune.models.gp import GaussianProcess
from bayestune.models.kernels import FeatureBlock
from bayestune.models.linalg import cho_inverse
from bayestune.models.selection import choose_surrogate, folds, gp_cv_log_likelihood


def fit_gp(F, y):
    blocks = [FeatureBlock(f"x{i}", "numeric", i) for i in range(F.shape[1])]
    return GaussianProcess(blocks, log_transform_y=False, seed=0).fit(F, y)


def forest(log):
    return RandomForestSurrogate(n_estimators=30, log_transform_y=log, seed=0)


def test_folds_partition_the_rows():
    blocks = folds(23, 5, np.random.default_rng(0))
    assert len(blocks) == 5 and sorted(np.concatenate(blocks).tolist()) == list(range(23))


def test_gp_block_formula_matches_the_posterior_without_the_block():
    rng = np.random.default_rng(1)
    F = rng.random((25, 2))
    y = np.sin(4 * F[:, 0]) + F[:, 1]
    gp = fit_gp(F, y)
    blocks = [np.array([3, 7, 11]), np.setdiff1d(np.arange(25), [3, 7, 11])]
    K = np.linalg.inv(cho_inverse(gp.L_))  # the training covariance, noise included
    z = gp.y_latent_
    brute = np.empty(25)
    for b in blocks:  # the GP posterior from the other rows at the same hyperparameters
        rest = np.setdiff1d(np.arange(25), b)
        Kbr = K[np.ix_(b, rest)]
        mu = Kbr @ np.linalg.solve(K[np.ix_(rest, rest)], z[rest])
        var = np.diag(K[np.ix_(b, b)] - Kbr @ np.linalg.solve(K[np.ix_(rest, rest)], Kbr.T))
        brute[b] = -0.5 * (np.log(2 * np.pi * var) + (z[b] - mu) ** 2 / var)
    assert gp_cv_log_likelihood(gp, blocks) == pytest.approx(float(np.mean(brute)), rel=1e-6)


def test_smooth_landscape_chooses_the_gp():
    rng = np.random.default_rng(2)
    F = rng.random((40, 2))
    y = 2.0 + np.sin(3 * F[:, 0]) + (F[:, 1] - 0.4) ** 2
    kind, scores = choose_surrogate(fit_gp(F, y), forest, F, y, np.random.default_rng(0))
    assert kind == "gp" and scores["gp"] > scores["rf"]


def test_step_landscape_chooses_the_forest():
    rng = np.random.default_rng(3)
    F = rng.integers(0, 8, size=(60, 3)) / 7.0
    # a narrow optimum on a plateau landscape with cliffs: piecewise constant in each input
    y = 1.0 + 3.0 * (F[:, 0] > 0.5) + 2.0 * (F[:, 1] > 0.3) + 5.0 * ((F[:, 2] > 0.8) & (F[:, 0] < 0.2))
    kind, scores = choose_surrogate(fit_gp(F, y), forest, F, y, np.random.default_rng(0))
    assert kind == "rf" and scores["rf"] > scores["gp"]
