import numpy as np
import pytest

from bayestune.design import DESIGNS, initial_design
from bayestune.history import History
from bayestune.objectives import Objective
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real, Space


def space():
    return Space(
        [
            Ordinal("tx", [1, 2, 4, 8, 16, 32]),
            Ordinal("ty", [1, 2, 4, 8, 16, 32]),
            Real("r", 0, 1),
            Categorical("c", ["a", "b", "c"]),
            Permutation("p", 3),
        ],
        ["tx * ty <= 64"],
    )


@pytest.mark.parametrize("method", sorted(DESIGNS))
def test_designs_are_distinct_and_feasible(method):
    s = space()
    h = History.empty(s, [Objective("t")])
    X = initial_design(s, 20, np.random.default_rng(0), h, method)
    assert len(X) == 20
    assert s.is_feasible(X).all()
    assert len(set(s.row_keys(X))) == 20


@pytest.mark.parametrize("method", ["lhs", "feasible_lhs"])  # feasible_lhs: a pool smaller than the design
def test_designs_skip_already_seen_rows(method):
    s = Space([Integer("a", 0, 4)])
    h = History.empty(s, [Objective("t")])
    h.seen.update(s.row_keys(s.to_matrix([{"a": 0}, {"a": 1}])))
    X = initial_design(s, 10, np.random.default_rng(0), h, method)
    assert sorted(X[:, 0]) == [2, 3, 4]


def test_maximin_spreads_more_than_random():
    s = Space([Real("x", 0, 1), Real("y", 0, 1)])
    h = History.empty(s, [Objective("t")])

    def min_dist(X):
        d = np.linalg.norm(X[:, None] - X[None], axis=2)
        return d[np.triu_indices(len(X), 1)].min()

    r = np.random.default_rng(0)
    mm = np.mean([min_dist(initial_design(s, 10, r, h, "maximin")) for _ in range(5)])
    un = np.mean([min_dist(initial_design(s, 10, r, h, "uniform")) for _ in range(5)])
    assert mm > 2 * un


def test_lhs_stratifies_each_dimension():
    s = Space([Real("x", 0, 1), Real("y", 0, 1)])
    X = initial_design(s, 10, np.random.default_rng(1), History.empty(s, [Objective("t")]), "lhs")
    for j in range(2):
        assert sorted(np.floor(X[:, j] * 10).astype(int)) == list(range(10))


def test_feasible_lhs_keeps_strata_where_lhs_falls_back_to_random():
    # A chain of constraints keeps ~3 % of the grid: most LHS rows are infeasible and `lhs`
    # replaces them by random feasible draws; `feasible_lhs` moves each row to the nearest
    # feasible configuration instead, so the design covers more values of each parameter.
    values = [2**i for i in range(8)]
    s = Space([Ordinal(f"p{i}", values) for i in range(4)], ["p0 >= p1", "p1 >= p2", "p2 >= p3"])
    h = History.empty(s, [Objective("t")])

    def coverage(method):
        r = np.random.default_rng(3)
        return np.mean(
            [sum(len(set(X[:, j])) for j in range(4)) for X in (initial_design(s, 8, r, h, method) for _ in range(10))]
        )

    assert coverage("feasible_lhs") > coverage("lhs") + 2
