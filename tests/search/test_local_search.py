"""The acquisition maximiser: exact on enumerated candidates, climbing otherwise."""

import numpy as np

from bayestune.search.local_search import AcquisitionSearchSettings, maximize
from bayestune.space import Categorical, Integer, Real, Space


def bowl(space):
    """Higher is better; the optimum is a = 7, b = 3, c = 'z'."""

    def score(X):
        cols = space.columns(X)
        return -((cols["a"] - 7.0) ** 2 + (cols["b"] - 3.0) ** 2) + np.where(cols["c"] == "z", 1.0, 0.0)

    return score


def space_():
    return Space([Integer("a", 0, 20), Integer("b", 0, 20), Categorical("c", ["x", "y", "z"])], ["a + b <= 30"])


def test_exhaustive_candidates_give_the_best_unseen_rows_best_first():
    space = space_()
    X = space.enumerate()
    score = bowl(space)
    rows = maximize(space, score, np.random.default_rng(0), seen=set(), n=3, candidates=X)
    assert np.all(np.diff(score(rows)) <= 0)
    assert score(rows)[0] == score(X).max()
    best = set(space.row_keys(rows[:1]))
    again = maximize(space, score, np.random.default_rng(0), seen=best, n=1, candidates=X)
    assert not best & set(space.row_keys(again))


def test_local_search_climbs_to_the_optimum_from_few_samples():
    space = space_()
    rows = maximize(
        space,
        bowl(space),
        np.random.default_rng(1),
        seen=set(),
        n=1,
        settings=AcquisitionSearchSettings(n_samples=20, n_starts=3),
    )
    assert space.to_configs(rows)[0] == {"a": 7, "b": 3, "c": "z"}


def test_results_are_feasible_distinct_and_unseen():
    space = Space([Integer("a", 0, 20), Integer("b", 0, 20), Real("r", 0.0, 1.0)], ["a + b <= 25"])
    score = lambda X: -np.abs(space.columns(X)["a"] - 5.0)  # noqa: E731
    seen = set(space.row_keys(space.sample(50, np.random.default_rng(2))))
    rows = maximize(
        space, score, np.random.default_rng(3), seen=seen, n=5, settings=AcquisitionSearchSettings(n_samples=200)
    )
    keys = space.row_keys(rows)
    assert len(rows) == 5 and len(set(keys)) == 5
    assert space.is_feasible(rows).all() and not seen & set(keys)


def test_minus_infinity_is_never_returned():
    space = Space([Integer("a", 0, 9)])
    X = space.enumerate()
    score = lambda X: np.where(space.columns(X)["a"] < 3, 1.0, -np.inf)  # noqa: E731
    rows = maximize(space, score, np.random.default_rng(0), seen=set(), n=5, candidates=X)
    assert sorted(space.columns(rows)["a"]) == [0, 1, 2]


def test_random_search_only_scores_samples():
    space = space_()
    calls = []

    def score(X):
        calls.append(len(X))
        return bowl(space)(X)

    maximize(
        space,
        score,
        np.random.default_rng(0),
        seen=set(),
        n=1,
        settings=AcquisitionSearchSettings(method="random", n_samples=64),
    )
    assert calls == [64]


def test_best_neighbour_of_each_start_is_the_first_maximum_as_argmax_picks_it():
    from bayestune.search.local_search import _best_of_each

    r = np.random.default_rng(0)
    for trial in range(300):
        n = int(r.integers(1, 40))
        who = r.integers(0, 6, n)
        s = r.choice([0.0, -0.0, 0.5, 1.0, np.inf, -np.inf], n) if trial % 2 else r.random(n)
        if trial % 5 == 0:
            s[r.integers(n)] = np.nan
        owners, best = _best_of_each(who, s)
        expected = np.unique(who)
        np.testing.assert_array_equal(owners, expected)
        np.testing.assert_array_equal(best, [np.flatnonzero(who == i)[np.argmax(s[who == i])] for i in expected])
