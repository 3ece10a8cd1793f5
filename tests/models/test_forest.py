"""The random-forest surrogate and the feasibility classifier."""

import numpy as np
import pytest

from bayestune.models.forest import FeasibilityClassifier, RandomForestSurrogate


def data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    F = rng.random((n, 3))
    y = np.exp(3 * F[:, 0]) + 0.01 * F[:, 2]  # positive, driven by the first feature
    return F, y


def test_fit_returns_self_and_logs_positive_targets():
    F, y = data()
    rf = RandomForestSurrogate(seed=0)
    assert rf.fit(F, y) is rf
    assert rf.log_y_ and rf.best_y_latent_ == pytest.approx(np.log(y).min())
    assert not RandomForestSurrogate(seed=0).fit(F, -y).log_y_
    assert not RandomForestSurrogate(seed=0, log_transform_y=False).fit(F, y).log_y_
    with pytest.raises(ValueError, match="every y > 0"):
        RandomForestSurrogate(log_transform_y=True).fit(F, -y)
    with pytest.raises(ValueError, match="finite"):
        RandomForestSurrogate().fit(F, np.where(np.arange(len(y)) == 3, np.nan, y))


def test_latent_predictions_follow_the_data_with_tree_spread_as_uncertainty():
    F, y = data()
    rf = RandomForestSurrogate(seed=0).fit(F, y)
    mu, sd = rf.predict_latent(F)
    assert np.corrcoef(mu, np.log(y))[0, 1] > 0.95
    assert np.all(sd > 0)
    far_mu, _ = rf.predict_latent(np.array([[0.0, 0.5, 0.5], [1.0, 0.5, 0.5]]))
    assert far_mu[1] > far_mu[0]


def test_same_seed_same_forest():
    F, y = data()
    a = RandomForestSurrogate(seed=4).fit(F, y).predict_latent(F)[0]
    b = RandomForestSurrogate(seed=4).fit(F, y).predict_latent(F)[0]
    assert np.array_equal(a, b)


def test_feature_importance_names_the_driving_feature():
    F, y = data()
    rf = RandomForestSurrogate(seed=0).fit(F, y)
    imp = rf.feature_importance(["a", "b", "c"])
    assert set(imp) == {"a", "b", "c"} and sum(imp.values()) == pytest.approx(1.0)
    assert max(imp, key=imp.get) == "a"
    assert set(rf.feature_importance()) == {"f0", "f1", "f2"}
    with pytest.raises(ValueError, match="one name per feature"):
        rf.feature_importance(["a"])


def test_classifier_learns_a_feasible_region():
    rng = np.random.default_rng(1)
    F = rng.random((120, 2))
    feasible = F[:, 0] < 0.5
    clf = FeasibilityClassifier(seed=0).fit(F, feasible)
    p = clf.predict_proba(np.array([[0.1, 0.5], [0.9, 0.5]]))
    assert p[0] > 0.8 and p[1] < 0.2


def test_classifier_with_one_class_is_constant():
    F = np.random.default_rng(0).random((10, 2))
    assert np.all(FeasibilityClassifier().fit(F, np.ones(10, bool)).predict_proba(F) == 1.0)
    assert np.all(FeasibilityClassifier().fit(F, np.zeros(10, bool)).predict_proba(F) == 0.0)
