"""Which observations the models learn from."""

import numpy as np

from bayestune.history import History
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.training import capped_rows, feasibility_classifier, model_rows
from bayestune.objectives import Objective
from bayestune.space import Integer, Space

SPACE = Space([Integer("a", 0, 99)])


def history(n=60):
    X = np.arange(n, dtype=float).reshape(-1, 1)
    feasible = np.arange(n) % 3 != 2
    Y = np.where(feasible, (np.arange(n) - 20.0) ** 2, np.nan).reshape(-1, 1)
    return History(SPACE, [Objective("y")], X, Y, feasible, np.empty((0, 1)), set(SPACE.row_keys(X)))


def test_without_a_cap_every_row_is_kept_and_no_random_number_drawn():
    h = history()
    rng = np.random.default_rng(0)
    assert np.array_equal(capped_rows(h, h.Y[:, 0], None, rng, feasible=True), np.flatnonzero(h.feasible))
    assert np.array_equal(capped_rows(h, h.Y[:, 0], 100, rng, feasible=False), np.flatnonzero(~h.feasible))
    assert rng.random() == np.random.default_rng(0).random()


def test_the_cap_keeps_the_best_the_most_recent_and_a_random_rest():
    h = history()
    y = h.Y[:, 0]
    rows = capped_rows(h, y, 12, np.random.default_rng(0), feasible=True)
    ok = np.flatnonzero(h.feasible)
    assert len(rows) == 12 and set(rows) <= set(ok)
    assert set(ok[np.argsort(y[ok])[:4]]) <= set(rows)
    assert set(ok[-4:]) <= set(rows)
    failed = capped_rows(h, y, 12, np.random.default_rng(0), feasible=False)
    assert np.array_equal(failed, np.flatnonzero(~h.feasible)[-12:])
    both = model_rows(h, y, 12, np.random.default_rng(0))
    assert len(both) == 24 and np.all(np.diff(both) > 0)


def test_the_classifier_learns_from_the_given_rows():
    h = history()
    clf = feasibility_classifier(FeatureEncoder(SPACE), h, np.arange(h.n), np.random.default_rng(0), n_estimators=10)
    assert 0.0 <= clf.predict_proba(FeatureEncoder(SPACE).transform(h.X)).min()
