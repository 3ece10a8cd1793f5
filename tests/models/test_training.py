"""Which observations the models learn from."""

import numpy as np
import pytest

from bayestune.exceptions import BayestuneError
from bayestune.history import History
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.training import (
    DEFAULT_MAX_TRAINING_POINTS,
    TrainingSet,
    farthest_points,
    feasibility_classifier,
    split_cap,
)
from bayestune.objectives import Objective
from bayestune.space import Integer, Space
from bayestune.strategies import make_strategy

SPACE = Space([Integer("a", 0, 99)])
ENCODE = FeatureEncoder(SPACE).transform


def history(n=60, fail_every=3):
    X = np.arange(n, dtype=float).reshape(-1, 1)
    feasible = np.arange(n) % fail_every != fail_every - 1 if fail_every else np.ones(n, bool)
    Y = np.where(feasible, (np.arange(n) - 20.0) ** 2, np.nan).reshape(-1, 1)
    return History(SPACE, [Objective("y")], X, Y, feasible, np.empty((0, 1)), set(SPACE.row_keys(X)))


def choose(h, cap, policy="mixed"):
    return TrainingSet.choose(h, h.Y[:, 0], cap, ENCODE, policy=policy)


def test_without_a_cap_or_below_it_every_row_is_kept():
    h = history()
    for cap in (None, 60, 100):
        t = choose(h, cap)
        assert np.array_equal(t.feasible, np.flatnonzero(h.feasible))
        assert np.array_equal(t.failed, np.flatnonzero(~h.feasible))
        assert np.array_equal(t.rows, np.arange(h.n))


def test_failures_keep_their_share_at_most_half_and_the_feasible_rows_the_rest():
    assert split_cap(500, 8000, 2000) == (100, 400)  # 20 %: their share
    assert split_cap(500, 600, 9400) == (250, 250)  # mostly failed: at most half
    assert split_cap(500, 100, 9900) == (400, 100)  # ... unless the feasible rows run short
    assert split_cap(500, 10, 990) == (490, 10)
    assert split_cap(500, 999, 1) == (1, 499)  # a single failure is never dropped
    assert split_cap(500, 1000, 0) == (0, 500)
    h = history()  # 40 feasible, 20 failed
    t = choose(h, 12)
    assert (len(t.feasible), len(t.failed)) == (8, 4)
    assert np.array_equal(t.failed, np.flatnonzero(~h.feasible)[-4:])  # the most recent failures
    assert len(t.rows) == 12 and np.all(np.diff(t.rows) > 0)


def test_mixed_keeps_the_best_third_the_recent_third_and_spreads_the_rest():
    h = history(90, fail_every=0)  # y = (a - 20)^2 on a = 0..89, all feasible
    t = choose(h, 30)
    assert len(t.feasible) == 30 and len(t.failed) == 0
    kept = set(t.feasible.tolist())
    assert set(np.argsort(h.Y[:, 0], kind="stable")[:10].tolist()) <= kept  # 15..24 around the optimum
    assert set(range(80, 90)) <= kept  # the most recent ten
    # the rest covers the gaps the best and the recent rows leave (0..14 and 25..79) evenly
    assert min(kept) <= 3 and max(np.diff(sorted(kept))) <= 8
    assert np.array_equal(choose(h, 30).feasible, t.feasible)  # deterministic


def test_farthest_points_picks_the_row_farthest_from_all_chosen_before():
    F = np.array([[0.0], [1.0], [0.2], [0.6], [0.9]])
    assert list(farthest_points(F, np.array([True, False, False, False, False]), 3)) == [1, 3, 2]
    assert list(farthest_points(F, np.zeros(5, bool), 2)) == [0, 1]  # nothing chosen: the first row, then the farthest
    big = np.random.default_rng(0).random((5000, 3))
    picks = farthest_points(big, np.arange(5000) < 100, 50)
    assert len(set(picks.tolist())) == 50 and min(picks) >= 100


def test_the_classifier_learns_from_the_given_rows():
    h = history()
    clf = feasibility_classifier(FeatureEncoder(SPACE), h, np.arange(h.n), np.random.default_rng(0), n_estimators=10)
    assert 0.0 <= clf.predict_proba(FeatureEncoder(SPACE).transform(h.X)).min()


def test_lru_keeps_the_most_recent_and_best_keeps_the_best():
    h = history(fail_every=0)
    y = h.Y[:, 0]
    assert np.array_equal(choose(h, 10, "lru").feasible, np.arange(50, 60))
    assert np.array_equal(choose(h, 10, "best").feasible, np.sort(np.argsort(y, kind="stable")[:10]))


def test_reset_forgets_all_but_the_best_each_time_the_memory_fills():
    h = history(40, fail_every=0)  # the best (y = 0) is row 20
    y = h.Y[:, 0]
    kept = {}
    for n in range(1, 41):
        sub = History(SPACE, h.objectives, h.X[:n], h.Y[:n], h.feasible[:n], np.empty((0, 1)), set())
        rows = TrainingSet.choose(sub, y[:n], 10, ENCODE, policy="reset").feasible
        assert n - 1 in rows and len(rows) <= 10
        best = int(np.argmin(y[:n]))
        assert best in rows
        kept[n] = set(rows.tolist()) - {best}
    # fills to 10, then restarts from the best plus the newest row, refilling 9 rows at a time
    assert kept[10] | {int(np.argmin(y[:10]))} == set(range(10))
    assert kept[11] <= {10} and kept[19] | {18} >= set(range(10, 19)) - {20}
    assert kept[20] <= {19} and kept[21] <= {19, 20}


def test_bad_policies_and_caps_are_refused():
    with pytest.raises(ValueError, match="unknown memory policy 'fifo'"):
        choose(history(), 10, "fifo")
    with pytest.raises(ValueError, match="at least 2"):
        choose(history(), 1)


def test_bo_caps_by_default_and_takes_a_memory_policy_only_with_its_window():
    objectives = [Objective("y")]
    strategy = make_strategy("bo", SPACE, objectives, np.random.default_rng(0), {})
    assert strategy.surrogates.options.max_training_points == DEFAULT_MAX_TRAINING_POINTS == 500
    uncapped = make_strategy("bo", SPACE, objectives, np.random.default_rng(0), {"max_training_points": None})
    assert uncapped.surrogates.options.max_training_points is None
    strategy = make_strategy(
        "bo", SPACE, objectives, np.random.default_rng(0), {"max_training_points": 12, "memory_policy": "reset"}
    )
    assert len(strategy.suggest(history(), 2)) == 2
    with pytest.raises(BayestuneError, match="needs `max_training_points`"):
        make_strategy(
            "bo", SPACE, objectives, np.random.default_rng(0), {"max_training_points": None, "memory_policy": "lru"}
        )
    with pytest.raises(BayestuneError, match="max_training_points >= 10"):
        make_strategy("bo", SPACE, objectives, np.random.default_rng(0), {"max_training_points": 5})
