"""The one log rule, and ParEGO's Chebyshev scalarisation."""

import numpy as np
import pytest

from bayestune.models.targets import ChebyshevScalarization, chebyshev, repeat_variances, uses_log, weight_lattice


def test_auto_logs_exactly_when_every_value_is_positive():
    assert uses_log(np.array([0.5, 2.0]), "auto")
    assert uses_log(np.array([1.0, 1.01]), "auto")  # no ratio threshold: a narrow range is logged too
    assert not uses_log(np.array([0.0, 2.0]), "auto")
    assert not uses_log(np.array([-3.0, -1.0]), "auto")
    assert not uses_log(np.array([1.0, 2.0]), False)
    assert uses_log(np.array([1.0, 2.0]), True)


def test_forced_log_of_non_positive_values_and_unknown_settings_raise():
    with pytest.raises(ValueError, match="every y > 0"):
        uses_log(np.array([-1.0, 2.0]), True)
    with pytest.raises(ValueError, match="True, False or 'auto'"):
        uses_log(np.array([1.0]), "yes")


def test_weight_lattice_and_chebyshev():
    lattice = weight_lattice(2, 10)
    assert lattice.shape == (11, 2) and np.allclose(lattice.sum(axis=1), 1.0)
    assert weight_lattice(3, 4).shape == (15, 3)
    Z = np.array([[0.2, 0.8], [0.5, 0.5]])
    assert np.allclose(chebyshev(Z, np.array([0.5, 0.5]), rho=0.0), [0.4, 0.25])
    assert np.allclose(chebyshev(Z, np.array([1.0, 0.0]), rho=0.1), [0.22, 0.55])


def test_objectives_are_logged_by_the_rule_then_scaled_to_the_unit_interval():
    S = np.array([[1.0, -5.0], [10.0, -3.0], [100.0, -1.0]])
    Z = ChebyshevScalarization(2).normalized(S)
    assert np.allclose(Z[:, 0], [0.0, 0.5, 1.0])  # positive: logged
    assert np.allclose(Z[:, 1], [0.0, 0.5, 1.0])  # negative: linear
    assert np.allclose(ChebyshevScalarization(2, log_transform=False).normalized(S)[:, 0], [0.0, 9 / 99, 1.0])
    assert np.allclose(ChebyshevScalarization(2).normalized(np.ones((3, 2))), 0.0)


def test_weights_come_from_the_lattice_or_a_dirichlet_and_follow_the_rng():
    lattice = ChebyshevScalarization(2)
    assert any(np.allclose(lattice.draw_weights(np.random.default_rng(0)), w) for w in weight_lattice(2, 10))
    assert ChebyshevScalarization(3).lattice.shape == (15, 3)
    w = ChebyshevScalarization(3, weights="dirichlet").draw_weights(np.random.default_rng(0))
    assert w.shape == (3,) and w.sum() == pytest.approx(1.0)
    S = np.random.default_rng(1).random((6, 2)) + 1.0
    a = lattice(S, np.random.default_rng(5))
    assert np.array_equal(a, lattice(S, np.random.default_rng(5)))
    weights = lattice.draw_weights(np.random.default_rng(5))
    assert np.allclose(a, chebyshev(lattice.normalized(S), weights, 0.05))


def test_repeat_variances_is_the_variance_of_the_mean_and_nan_without_repeats():
    repeats = [
        {"t": (1.0, 2.0, 3.0)},
        {"t": (5.0,)},
        {},
        {"t": (2.0, 2.0)},
        {"other": (1.0, 9.0)},
        {"t": (1.0, float("nan"), 3.0)},
    ]
    v = repeat_variances(repeats, "t")
    np.testing.assert_allclose(v[[0, 3, 5]], [1.0 / 3, 0.0, 1.0])
    assert np.isnan(v[[1, 2, 4]]).all()
