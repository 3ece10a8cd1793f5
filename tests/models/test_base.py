"""The Gaussian process, the random forest and the failure-aware posterior keep the
:class:`Surrogate` contract with the same signatures."""

import inspect

import numpy as np
import pytest

from bayestune.models.base import Surrogate
from bayestune.models.failure_aware import FailureAwarePosterior
from bayestune.models.forest import RandomForestSurrogate
from bayestune.models.gp import GaussianProcess
from bayestune.models.kernels import FeatureBlock

BLOCKS = [FeatureBlock("a", "numeric", 0, 1, "euclidean"), FeatureBlock("b", "numeric", 1, 1, "euclidean")]
F = np.random.default_rng(0).random((12, 2))
Y = 1.0 + F[:, 0] ** 2 + 0.1 * F[:, 1]


def fitted(kind):
    if kind == "gp":
        return GaussianProcess(BLOCKS, seed=0).fit(F, Y)
    if kind == "rf":
        return RandomForestSurrogate(n_estimators=10, seed=0).fit(F, Y)
    return FailureAwarePosterior(GaussianProcess(BLOCKS, seed=0), np.vstack([F, [[0.9, 0.9]]])).fit(F, Y)


@pytest.mark.parametrize("kind", ["gp", "rf", "failure_aware"])
def test_every_surrogate_keeps_the_contract(kind):
    model = fitted(kind)
    assert isinstance(model, Surrogate)
    mu, sd = model.predict_latent(F[:3])
    assert mu.shape == sd.shape == (3,) and np.all(np.isfinite(mu)) and np.all(sd >= 0)
    assert isinstance(model.best_y_latent_, float) and np.isfinite(model.best_y_latent_)
    importance = model.feature_importance(["a", "b"])
    assert list(importance) == ["a", "b"] and sum(importance.values()) == pytest.approx(1.0)


@pytest.mark.parametrize("cls", [GaussianProcess, RandomForestSurrogate, FailureAwarePosterior])
def test_the_contract_methods_share_their_signatures(cls):
    assert list(inspect.signature(cls.fit).parameters)[:3] == ["self", "F", "y"]
    assert list(inspect.signature(cls.predict_latent).parameters)[:2] == ["self", "F"]
    names = inspect.signature(cls.feature_importance).parameters["names"]
    assert names.default is None
