import numpy as np
import pytest
from scipy import integrate, stats

from bayestune.acquisition import (
    expected_improvement,
    feasibility_weighted,
    get_acquisition,
    lower_confidence_bound,
    prior_weighted,
    probability_of_improvement,
)
from bayestune.exceptions import BayestuneError


@pytest.mark.parametrize("mu, sigma, best", [(0.0, 1.0, 0.0), (1.0, 0.5, 0.2), (-1.0, 2.0, 0.5), (3.0, 0.1, 0.0)])
def test_ei_matches_integral(mu, sigma, best):
    def integrand(f):
        return max(best - f, 0.0) * stats.norm.pdf(f, mu, sigma)

    reference, _ = integrate.quad(integrand, mu - 12 * sigma, mu + 12 * sigma, points=[best], limit=200)
    assert expected_improvement(np.array([mu]), np.array([sigma]), best, xi=0.0)[0] == pytest.approx(
        reference, abs=1e-9
    )


def test_ei_closed_form_at_zero():
    assert expected_improvement(np.array([0.0]), np.array([1.0]), 0.0, xi=0.0)[0] == pytest.approx(
        1 / np.sqrt(2 * np.pi)
    )


def test_pi_and_lcb_closed_forms():
    mu, sd = np.array([0.3, -0.2]), np.array([0.5, 2.0])
    np.testing.assert_allclose(probability_of_improvement(mu, sd, 0.1, xi=0.0), stats.norm.cdf((0.1 - mu) / sd))
    np.testing.assert_allclose(lower_confidence_bound(mu, sd, 0.0, kappa=1.5), -(mu - 1.5 * sd))


def test_zero_sigma_is_finite():
    ei = expected_improvement(np.array([1.0, -1.0]), np.array([0.0, 0.0]), 0.0)
    assert np.all(np.isfinite(ei)) and ei[0] == pytest.approx(0.0, abs=1e-9) and ei[1] == pytest.approx(1.0, abs=1e-3)


def test_feasibility_threshold_rules_out_candidates():
    out = feasibility_weighted(np.array([1.0, 1.0, 1.0]), np.array([0.9, 0.05, 0.5]), epsilon=0.1)
    assert out[0] == pytest.approx(0.9) and out[1] == -np.inf and out[2] == pytest.approx(0.5)


def test_prior_weight_fades_with_observations():
    acq, prior = np.array([1.0, 1.0]), np.array([2.0, 0.5])
    early, late = prior_weighted(acq, prior, 1), prior_weighted(acq, prior, 1000)
    assert early[0] / early[1] > late[0] / late[1] > 1.0


def test_unknown_acquisition_lists_allowed():
    with pytest.raises(BayestuneError, match="allowed"):
        get_acquisition("ucb9")
