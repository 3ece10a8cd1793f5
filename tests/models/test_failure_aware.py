"""The failure-aware posterior: the mean of the feasible data, the variance of every location."""

import numpy as np
import pytest

from bayestune.models.failure_aware import FailureAwarePosterior
from bayestune.models.gp import GaussianProcess
from bayestune.models.kernels import FeatureBlock

BLOCKS = [FeatureBlock("x", "numeric", 0, 1, "euclidean")]
F_OK = np.array([[0.0], [0.2], [0.4]])
Y_OK = np.array([1.0, 2.0, 1.5])
F_FAILED = np.array([[0.8], [0.9]])
FIXED = {"lengthscales": 0.2, "outputscale": 1.0, "noise": 1e-4}


def gp():
    return GaussianProcess(BLOCKS, fixed_hyperparameters=FIXED, log_transform_y=False)


def test_mean_ignores_failures_and_variance_shrinks_at_them():
    mean_model = gp().fit(F_OK, Y_OK)
    posterior = FailureAwarePosterior.build(mean_model, np.vstack([F_OK, F_FAILED]))
    F = np.array([[0.1], [0.85]])
    mu, sd = posterior.predict_latent(F)
    mu_plain, sd_plain = mean_model.predict_latent(F)
    assert np.allclose(mu, mu_plain)
    assert sd[1] < 0.2 * sd_plain[1]  # next to two failures
    assert sd[0] == pytest.approx(sd_plain[0], rel=0.05)  # far from them
    assert posterior.best_y_latent_ == mean_model.best_y_latent_


def test_fit_equals_build_on_a_fitted_mean_model():
    locations = np.vstack([F_OK, F_FAILED])
    fitted = FailureAwarePosterior(gp(), locations).fit(F_OK, Y_OK)
    built = FailureAwarePosterior.build(gp().fit(F_OK, Y_OK), locations)
    F = np.linspace(0, 1, 7).reshape(-1, 1)
    assert np.allclose(fitted.predict_latent(F), built.predict_latent(F))
    assert fitted.feature_importance(["width"]) == {"width": 1.0}
