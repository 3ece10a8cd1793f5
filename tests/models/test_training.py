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


def test_lru_keeps_the_most_recent_and_best_keeps_the_best():
    h = history()
    y = h.Y[:, 0]
    ok = np.flatnonzero(h.feasible)
    assert np.array_equal(capped_rows(h, y, 10, np.random.default_rng(0), feasible=True, policy="lru"), ok[-10:])
    best = capped_rows(h, y, 10, np.random.default_rng(0), feasible=True, policy="best")
    assert np.array_equal(best, np.sort(ok[np.argsort(y[ok], kind="stable")[:10]]))


def test_reset_forgets_all_but_the_best_each_time_the_memory_fills():
    h = history()  # 40 feasible rows; the best (y = 0) is row 20
    y = h.Y[:, 0]
    ok = np.flatnonzero(h.feasible)
    kept = {}
    for n in range(1, len(ok) + 1):
        sub = History(SPACE, h.objectives, h.X[: ok[n - 1] + 1], h.Y[: ok[n - 1] + 1], h.feasible[: ok[n - 1] + 1],
                      np.empty((0, 1)), set())
        rows = capped_rows(sub, y[: ok[n - 1] + 1], 10, np.random.default_rng(0), feasible=True, policy="reset")
        assert ok[n - 1] in rows and len(rows) <= 10
        best = ok[:n][np.argmin(y[ok[:n]])]
        assert best in rows
        kept[n] = set(rows.tolist()) - {best}
    # fills to 10, then restarts from the best plus the newest row, refilling 9 rows at a time
    assert kept[10] | {ok[:10][np.argmin(y[ok[:10]])]} == set(ok[:10])
    assert kept[11] <= {ok[10]} and kept[19] | {ok[18]} >= set(ok[10:19]) - {ok[np.argmin(y[ok])]}
    assert kept[20] <= {ok[19]} and kept[21] <= {ok[19], ok[20]}


def test_unknown_memory_policy_is_refused():
    import pytest
    with pytest.raises(ValueError, match="unknown memory policy 'fifo'"):
        capped_rows(history(), history().Y[:, 0], 10, np.random.default_rng(0), feasible=True, policy="fifo")


def test_bo_takes_a_memory_policy_only_with_its_window():
    import pytest

    from bayestune.exceptions import BayestuneError
    from bayestune.strategies import make_strategy
    objectives = [Objective("y")]
    strategy = make_strategy("bo", SPACE, objectives, np.random.default_rng(0),
                             {"max_training_points": 12, "memory_policy": "reset"})
    assert len(strategy.suggest(history(), 2)) == 2
    with pytest.raises(BayestuneError, match="needs `max_training_points`"):
        make_strategy("bo", SPACE, objectives, np.random.default_rng(0), {"memory_policy": "lru"})
