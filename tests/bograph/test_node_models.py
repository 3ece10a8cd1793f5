"""Node models: a GP on parameter features and a metric parent, formulas, custom and marginal nodes."""

from __future__ import annotations

import numpy as np
import pytest

from bayestune.bograph.dag import Formula
from bayestune.bograph.node_models import CustomNode, FormulaNode, GPNode, MarginalNode
from bayestune.exceptions import BayestuneError
from bayestune.models.kernels import FeatureBlock

BLOCKS = {"x": FeatureBlock("x", "numeric", 0, 1, "euclidean")}


def test_gp_node_learns_from_a_parameter_and_a_metric_parent():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(25, 1))
    m = np.exp(3 * rng.uniform(size=25))
    y = np.sin(4 * x[:, 0]) + np.log(m)
    node = GPNode("y", ["x", "m"], BLOCKS, seed=0, light=True).fit({"x": x, "m": m}, y)
    draws = node.sample({"x": x[None, :5, :], "m": m[None, :5]}, np.zeros((3, 1)))
    assert draws.shape == (3, 5)
    assert np.allclose(draws[0], y[:5], atol=0.1)
    assert node.fit_quality() > 0.8


def test_gp_node_samples_spread_with_the_draws():
    x = np.linspace(0, 1, 8).reshape(-1, 1)
    node = GPNode("y", ["x"], BLOCKS, seed=0, light=True).fit({"x": x}, np.exp(x[:, 0]))
    far = node.sample({"x": np.array([[[0.5]]])}, np.array([[-2.0], [0.0], [2.0]]))
    assert far[0, 0] < far[1, 0] < far[2, 0] and np.all(far > 0)  # log-transformed positive node


def test_formula_node_is_exact():
    node = FormulaNode(Formula("edp", "power * latency**2"))
    p, lat = np.array([1.0, 2.0]), np.array([3.0, 1.0])
    node.fit({"power": p, "latency": lat}, p * lat**2)
    assert node.fit_quality() == pytest.approx(1.0)
    assert np.allclose(node.sample({"power": p, "latency": lat}, 0.0), [9.0, 2.0])


class _Linear:
    def fit(self, parents, y):
        self.coef_ = float(np.polyfit(parents["x"], y, 1)[0])

    def predict(self, parents):
        return self.coef_ * np.asarray(parents["x"]), np.full(np.shape(parents["x"]), 0.5)


def test_custom_node_uses_the_experts_model_and_refuses_objects_without_the_api():
    node = CustomNode("y", ["x"], _Linear()).fit({"x": np.arange(5.0)}, 2 * np.arange(5.0))
    assert np.allclose(node.sample({"x": np.array([1.0])}, 2.0), [3.0])
    with pytest.raises(BayestuneError, match="fit"):
        CustomNode("y", ["x"], object())


def test_marginal_node_samples_its_observed_spread():
    node = MarginalNode("m").fit({}, np.array([1.0, 3.0]))
    assert np.allclose(node.sample({}, np.array([-1.0, 1.0])), [1.0, 3.0])
