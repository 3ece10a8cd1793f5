"""Monte-Carlo EI through the DAG: shared quasi-random draws, closed-form agreement, target scale."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from bayestune.acquisition.functions import mc_expected_improvement
from bayestune.bograph.acquisition import DagPosterior, TargetScale, normal_draws
from bayestune.bograph.dag import Formula
from bayestune.bograph.node_models import FormulaNode, MarginalNode


def test_draws_are_quasi_random_normal_and_reproducible():
    Z = normal_draws(256, 3, seed=1)
    assert Z.shape == (256, 3)
    assert np.allclose(Z, normal_draws(256, 3, seed=1))
    assert abs(Z.mean()) < 0.02 and abs(Z.std() - 1) < 0.03


def test_mc_ei_matches_the_closed_form_of_a_gaussian():
    z = normal_draws(4096, 1, seed=0)[:, 0]
    mu, sd, best = 0.3, 1.5, 0.0
    draws = (mu + sd * z)[:, None]
    u = (best - mu) / sd
    exact = sd * (u * norm.cdf(u) + norm.pdf(u))
    assert abs(mc_expected_improvement(draws, best)[0] - exact) < 0.01


def test_sampling_runs_in_topological_order_through_formulas():
    m = MarginalNode("m").fit({}, np.array([1.0, 3.0]))  # mean 2, std 1
    y = FormulaNode(Formula("y", "m * x")).fit({"m": np.ones(2), "x": np.ones(2)}, np.ones(2))
    post = DagPosterior(["m", "y"], {"m": m, "y": y}, "y")
    Z = np.array([[0.0, 0.0], [1.0, 0.0]])
    draws = post.sample({"x": np.ones((2, 1))}, {"x": np.array([1.0, 10.0])}, Z)
    assert np.allclose(draws, [[2.0, 20.0], [3.0, 30.0]])


def test_target_scale_logs_positive_targets_and_signs_maximised_ones():
    assert np.allclose(TargetScale(np.array([1.0, 10.0]), minimize=True, log=True)(np.e), 1.0)
    assert np.allclose(TargetScale(np.array([1.0, 10.0]), minimize=False, log=True)(np.e), -1.0)
    assert np.allclose(TargetScale(np.array([-1.0, 10.0]), minimize=True, log=True)(3.0), 3.0)
