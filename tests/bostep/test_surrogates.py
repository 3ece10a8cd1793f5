"""The surrogate part: which model it fits, and what it believes inside a batch."""

from __future__ import annotations

import numpy as np
import pytest

from bayestune.bostep.surrogates import SurrogateFactory
from bayestune.history import History
from bayestune.models.gp import GaussianProcess
from bayestune.objectives import Objective
from bayestune.space import Real, Space
from bayestune.strategies.bo import BOSettings

SPACE = Space([Real("x", 0.0, 1.0), Real("y", 0.0, 1.0)])


def history(n=10, seed=0):
    X = SPACE.sample(n, np.random.default_rng(seed))
    y = (X[:, 0] - 0.3) ** 2 + X[:, 1]
    return History(SPACE, [Objective("t")], X, y.reshape(-1, 1), np.ones(n, bool), np.empty((0, 2)))


def test_the_gp_believes_its_prediction_and_keeps_its_hyperparameters():
    h = history()
    factory = SurrogateFactory(SPACE, np.random.default_rng(0), BOSettings(), "auto", "t")
    fit = factory.fit(h, h.Y[:, 0])
    row = np.array([0.3, 0.0])
    after = factory.believe(fit, row)
    assert isinstance(after.fitted, GaussianProcess) and len(after.y_fitted) == 11
    assert after.y_fitted[-1] == float(fit.fitted.predict(factory.encoder.transform(row.reshape(1, -1)))[0])
    assert np.allclose(after.fitted.hyperparameters_, fit.fitted.hyperparameters_)
    assert np.array_equal(after.X, fit.X) and np.array_equal(after.y, fit.y)  # the real data stay


def test_the_forest_believes_the_best_target_so_far():
    h = history()
    factory = SurrogateFactory(SPACE, np.random.default_rng(0), BOSettings(model="rf"), "auto", "t")
    fit = factory.fit(h, h.Y[:, 0])
    after = factory.believe(factory.believe(fit, np.array([0.1, 0.1])), np.array([0.2, 0.2]))
    assert list(after.y_fitted[-2:]) == [h.Y[:, 0].min()] * 2


def test_the_training_cap_bounds_what_the_model_learns_from():
    h = history(40)
    factory = SurrogateFactory(SPACE, np.random.default_rng(0), BOSettings(max_training_points=12), "auto", "t")
    assert len(factory.fit(h, h.Y[:, 0]).y) == 12


def test_one_training_set_per_suggestion_shared_by_the_surrogate_and_the_classifier():
    h = history(40)
    failed = h.feasible.copy()
    failed[::4] = False
    h = History(SPACE, h.objectives, h.X, np.where(failed[:, None], h.Y, np.nan), failed, np.empty((0, 2)))
    factory = SurrogateFactory(SPACE, np.random.default_rng(0), BOSettings(max_training_points=20), "auto", "t")
    targets = h.Y[:, 0]
    fit = factory.fit(h, targets)
    rows = factory.observation_rows(h, targets)
    assert len(rows) == 20 and (~h.feasible[rows]).sum() == 5  # failures keep their quarter
    assert np.array_equal(np.sort(h.X[rows][h.feasible[rows]], axis=0), np.sort(fit.X, axis=0))
    assert factory.training_set(h, targets) is factory.training_set(h, targets)
    assert factory.training_set(h, targets.copy()) is not factory.training_set(h, targets)  # new targets: new pick


def test_below_the_default_cap_the_fit_is_the_uncapped_one():
    h = history(30)
    fits = [
        SurrogateFactory(SPACE, np.random.default_rng(0), choice, "auto", "t").fit(h, h.Y[:, 0])
        for choice in (BOSettings(), BOSettings(max_training_points=None))
    ]
    assert BOSettings().max_training_points == 500
    assert np.array_equal(fits[0].fitted.hyperparameters_, fits[1].fitted.hyperparameters_)


def with_failures(h, ok):
    return History(SPACE, h.objectives, h.X, np.where(ok[:, None], h.Y, np.nan), ok, np.empty((0, 2)))


def test_failures_enter_the_mean_at_a_quantile_of_the_observed_targets_when_asked():
    h = history(40)
    ok = h.X[:, 0] < 0.7  # a failure region: x >= 0.7
    h = with_failures(h, ok)
    targets = h.Y[:, 0]
    factory = SurrogateFactory(SPACE, np.random.default_rng(0), BOSettings(), "auto", "t")
    assert len(factory.fit(h, targets).y) == ok.sum()  # by default the mean ignores failures
    with pytest.warns(UserWarning, match="experimental"):
        asked = BOSettings.from_options("bo", {"experimental": {"failure_quantile": 0.9}})
    fit = SurrogateFactory(SPACE, np.random.default_rng(0), asked, "auto", "t").fit(h, targets)
    n_failed = int((~ok).sum())
    assert len(fit.y) == 40 and np.allclose(fit.y[-n_failed:], np.quantile(targets[ok], 0.9))
    assert fit.y.min() == targets[ok].min()  # the incumbent is still a measured one
    F_failed = factory.encoder.transform(h.X[~ok])
    assert np.median(np.abs(fit.fitted.predict(F_failed) - np.quantile(targets[ok], 0.9))) < 0.02  # learnt there
