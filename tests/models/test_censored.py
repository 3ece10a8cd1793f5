"""Censored observations: imputed above their bound by a Gaussian process, never below it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayestune.models.censored import impute_censored, truncated_normal_mean
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.gp import GaussianProcess
from bayestune.space import Real, Space


def test_truncated_mean_matches_scipy_and_is_stable_in_the_tail() -> None:
    mu, sd, lower = np.array([0.0, 1.0, -2.0]), np.array([1.0, 0.5, 2.0]), np.array([0.5, 0.0, 1.0])
    expected = [stats.truncnorm.mean((lo - m) / s, np.inf, loc=m, scale=s) for m, s, lo in zip(mu, sd, lower)]
    assert truncated_normal_mean(mu, sd, lower) == pytest.approx(expected, rel=1e-9)
    far = truncated_normal_mean(np.array([0.0]), np.array([1.0]), np.array([40.0]))
    assert np.isfinite(far).all() and far[0] == pytest.approx(40.0, rel=1e-2)
    assert truncated_normal_mean(np.array([0.0]), np.array([0.0]), np.array([3.0]))[0] == 3.0


def _fitted(x: np.ndarray, y: np.ndarray) -> tuple[GaussianProcess, FeatureEncoder]:
    space = Space([Real("x", 0.0, 1.0)])
    encoder = FeatureEncoder(space)
    gp = GaussianProcess(encoder.blocks, seed=0).fit(encoder.transform(x.reshape(-1, 1)), y)
    return gp, encoder


def test_a_bound_below_the_trend_is_raised_and_never_lowered() -> None:
    x = np.linspace(0, 1, 12)
    y = np.exp(3 * x)  # positive: the GP logs it
    bound_at = 10  # the run stopped at 60 % of the true value there
    targets = y.copy()
    targets[bound_at] = 0.6 * y[bound_at]
    censored = np.zeros(12, dtype=bool)
    censored[bound_at] = True
    gp, encoder = _fitted(x, targets)
    imputed = impute_censored(targets, censored, gp, encoder.transform(x[censored].reshape(-1, 1)))
    assert imputed[bound_at] > targets[bound_at]
    assert np.array_equal(imputed[~censored], targets[~censored])
    high = targets.copy()
    high[bound_at] = 5 * y[bound_at]  # a bound far above the trend stays the bound
    gp, encoder = _fitted(x, high)
    raised = impute_censored(high, censored, gp, encoder.transform(x[censored].reshape(-1, 1)))
    assert raised[bound_at] >= high[bound_at]


def test_nothing_censored_or_no_gaussian_model_leaves_the_targets() -> None:
    targets = np.array([1.0, 2.0, 3.0])
    assert impute_censored(targets, np.zeros(3, dtype=bool), object(), np.empty((0, 1))) is targets
    assert impute_censored(targets, np.array([False, True, False]), object(), np.ones((1, 1))) is targets
