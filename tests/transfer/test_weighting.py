import numpy as np
import pytest

from bayestune.transfer.weighting import MIN_OBSERVATIONS, source_weight, tau_standard_error


def test_a_source_that_ranks_the_observations_gets_full_weight():
    observed = np.arange(12.0)
    weight, tau = source_weight(2 * observed + 5, observed)
    assert tau == pytest.approx(1.0) and weight == pytest.approx(1.0)


def test_an_anticorrelated_or_unrelated_source_gets_zero():
    rng = np.random.default_rng(0)
    observed = rng.random(30)
    assert source_weight(-observed, observed)[0] == 0.0
    zero = [source_weight(rng.random(30), observed)[0] == 0.0 for _ in range(50)]
    assert sum(zero) >= 45  # a two-standard-error gate: ~98% of unrelated sources drop out


def test_too_few_or_constant_observations_give_zero():
    assert source_weight(np.arange(MIN_OBSERVATIONS - 1.0), np.arange(MIN_OBSERVATIONS - 1.0))[0] == 0.0
    assert source_weight(np.ones(10), np.arange(10.0))[0] == 0.0
    assert source_weight(np.arange(10.0), np.full(10, np.nan))[0] == 0.0


def test_tau_standard_error_shrinks_with_n():
    assert tau_standard_error(10) > tau_standard_error(40) > 0
    assert tau_standard_error(1) == float("inf")
