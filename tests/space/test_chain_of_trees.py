import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from bayestune.exceptions import InfeasibleSpaceError
from bayestune.space import Categorical, ChainOfTreesWarning, Integer, Ordinal, Permutation, Real, Space


def brute_force(space):
    grids = [p.grid() for p in space.parameters]
    rows = [np.concatenate(combo) for combo in itertools.product(*grids)]
    X = np.array(rows)
    return X[space.satisfies_constraints(X)]


def baco_example():
    return Space(
        [
            Ordinal("p1", [2, 4]),
            Ordinal("p2", [2, 4]),
            Ordinal("p3", [1, 4]),
            Ordinal("p4", [1, 2, 4]),
            Ordinal("p5", [2, 4, 8]),
        ],
        ["p1 >= p2", "p4 >= p3", "p5 >= 2 * p4"],
    )


def test_baco_example_groups_and_count():
    space = baco_example()
    cot = space.chain_of_trees
    assert sorted(sorted(g.names) for g in cot.groups) == [["p1", "p2"], ["p3", "p4", "p5"]]
    assert space.count_feasible() == len(brute_force(space))
    X = space.sample(200, np.random.default_rng(0))
    assert space.satisfies_constraints(X).all()


def test_taco_like_permutation_and_splits():
    space = Space(
        [
            Permutation("order", 5),
            Ordinal("split_i", [1, 2, 4, 8, 16, 32]),
            Ordinal("split_j", [1, 2, 4, 8, 16, 32]),
            Ordinal("chunk", [1, 2, 4, 8, 16, 32, 64, 128, 256]),
            Categorical("sched", ["static", "dynamic"]),
        ],
        ["split_i * split_j <= 256", "order[0] != 4", "pos(order, 1) < pos(order, 2)", "chunk <= split_i * 16"],
    )
    brute = brute_force(space)
    assert space.count_feasible() == len(brute)
    assert space.is_feasible(brute).all()
    X = space.sample(1000, np.random.default_rng(1))
    assert space.satisfies_constraints(X).all()
    assert space.is_feasible(X).all()


def test_leaf_sampling_is_uniform_on_a_skewed_tree():
    # Level 1: a in {0..4}; only a == 0 has many children (b in 0..19), the others one child.
    # Uniform child choice would give the big subtree 1/5 of the mass instead of 20/24.
    space = Space([Integer("a", 0, 4), Integer("b", 0, 19)], ["a == 0 or b == 0"])
    cot = space.chain_of_trees
    assert space.count_feasible() == 24
    X = space.sample(24_000, np.random.default_rng(2))
    keys = cot.group_keys(cot.groups[0], space.blocks(X))
    leaf_index = np.searchsorted(cot.groups[0].leaves, keys)
    counts = np.bincount(leaf_index, minlength=24)
    assert stats.chisquare(counts).pvalue > 1e-3
    # The same test must reject the biased "uniform child" walk, so it has power.
    r = np.random.default_rng(3)
    a = r.integers(0, 5, 24_000)
    b = np.where(a == 0, r.integers(0, 20, 24_000), 0)
    biased = np.bincount(np.where(a == 0, b, 19 + a), minlength=24)
    assert stats.chisquare(biased).pvalue < 1e-6


small_params = st.lists(
    st.tuples(st.sampled_from(["ordinal", "integer", "categorical", "permutation"]), st.integers(2, 4)),
    min_size=2,
    max_size=4,
)
constraint_templates = [
    "{a} <= {b}",
    "{a} + {b} != 3",
    "{a} * {b} <= 6",
    "{a} % 2 == 0 or {b} > 1",
    "max({a}, {b}) >= 2",
    "abs({a} - {b}) <= 1",
    "not ({a} == {b})",
]


def _make(kind, size, name):
    if kind == "ordinal":
        return Ordinal(name, [2**i for i in range(size)])
    if kind == "integer":
        return Integer(name, 0, size - 1)
    if kind == "categorical":
        return Categorical(name, list(range(size)))
    return Permutation(name, size)


def _term(p):
    return f"{p.name}[0]" if p.kind == "permutation" else p.name


@settings(max_examples=60, deadline=None)
@given(
    small_params,
    st.lists(
        st.tuples(st.sampled_from(constraint_templates), st.integers(0, 99), st.integers(0, 99)), min_size=1, max_size=3
    ),
    st.integers(0, 2**31 - 1),
)
def test_membership_matches_brute_force(param_specs, constraint_specs, seed):
    params = [_make(kind, size, f"v{i}") for i, (kind, size) in enumerate(param_specs)]
    cons = []
    for template, i, j in constraint_specs:
        a, b = params[i % len(params)], params[j % len(params)]
        if a is b:
            b = params[(j + 1) % len(params)]
        cons.append(template.format(a=_term(a), b=_term(b)))
    space = Space(params, cons)
    grids = [p.grid() for p in params]
    X = np.array([np.concatenate(c) for c in itertools.product(*grids)])
    truth = space.satisfies_constraints(X)
    if not truth.any():
        with pytest.raises(InfeasibleSpaceError):
            space.count_feasible()
        return
    np.testing.assert_array_equal(space.is_feasible(X), truth)
    assert space.count_feasible() == int(truth.sum())
    sample = space.sample(50, np.random.default_rng(seed))
    assert truth[np.isin(space.row_keys(X), space.row_keys(sample))].all()
    assert space.satisfies_constraints(sample).all()
    enumerated = space.enumerate(limit=len(X))
    assert sorted(space.row_keys(enumerated)) == sorted(space.row_keys(X[truth]))
    if truth.sum() > 1:
        assert space.enumerate(limit=int(truth.sum()) - 1) is None  # more than the limit: None, not a partial list


def test_impossible_constraints_raise_clearly():
    space = Space([Integer("a", 0, 3), Integer("b", 0, 3)], ["a + b > 10"])
    with pytest.raises(InfeasibleSpaceError, match="a \\+ b > 10"):
        space.count_feasible()


def test_real_parameter_group_falls_back_to_rejection_with_warning():
    space = Space([Real("x", 0, 1), Integer("n", 1, 10)], ["x * n <= 2"])
    with pytest.warns(ChainOfTreesWarning, match="rejection"):
        cot = space.chain_of_trees
    assert not cot.fully_enumerated
    X = space.sample(100, np.random.default_rng(0))
    assert space.satisfies_constraints(X).all()
    assert space.count_feasible() is None


def test_too_many_leaves_falls_back_instead_of_hanging():
    space = Space([Integer("a", 0, 999), Integer("b", 0, 999)], ["a != b"], max_leaves=10_000)
    with pytest.warns(ChainOfTreesWarning, match="more than"):
        _ = space.chain_of_trees
    X = space.sample(10, np.random.default_rng(0))
    assert (X[:, 0] != X[:, 1]).all()


def test_impossible_rejection_sampling_gives_up_with_a_message():
    space = Space([Real("x", 0, 1), Real("y", 0, 1)], ["x + y > 2.5"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChainOfTreesWarning)
        with pytest.raises(InfeasibleSpaceError, match="x \\+ y > 2.5"):
            space.sample(1, np.random.default_rng(0))


def prefix_sum_space(limit, k=7, high=16):
    """One tree: prefix sums bounded, so every level prunes (x0 + x1 <= S, x0 + x1 + x2 <= S, ...)."""
    names = [f"x{i}" for i in range(k)]
    cons = [" + ".join(names[: j + 1]) + f" <= {limit}" for j in range(1, k)]
    return Space([Integer(n, 1, high) for n in names], cons)


def _check_big_tree(space, expected_min):
    count = space.count_feasible()
    assert len(space.chain_of_trees.groups) == 1 and count > expected_min
    X = space.sample(100_000, np.random.default_rng(0))
    assert space.satisfies_constraints(X).all()
    assert space.is_feasible(X).all()
    # Uniform over leaves: E[x0] equals the mean of x0 over all leaves (checked on a coarse histogram).
    leaves = space.chain_of_trees.groups[0]
    first = space.chain_of_trees.decode_leaves(leaves, leaves.leaves)["x0"][:, 0]
    expected = np.bincount(first.astype(int), minlength=17)[1:] / len(first)
    observed = np.bincount(X[:, 0].astype(int), minlength=17)[1:]
    mask = expected > 0
    assert stats.chisquare(observed[mask], expected[mask] * len(X)).pvalue > 1e-4


def test_million_leaf_tree():
    _check_big_tree(prefix_sum_space(32), 1_000_000)


@pytest.mark.slow
def test_ten_million_leaf_tree():
    space = prefix_sum_space(40)
    _check_big_tree(space, 10_000_000)
    assert space.chain_of_trees.stats()[0]["memory_bytes"] < 200e6


def test_neighbours_stay_feasible():
    space = baco_example()
    r = np.random.default_rng(0)
    for x in space.sample(30, r):
        nb = space.neighbours(x, r)
        assert space.satisfies_constraints(nb).all()
        assert (np.abs(nb - x) > 0).sum(axis=1).max() == 1  # one parameter changed


def test_prior_weighted_cot_sampling_shifts_mass():
    space = Space([Ordinal("a", [1, 2, 4, 8, 16], prior="decay"), Ordinal("b", [1, 2, 4, 8, 16])], ["a <= b"])
    X = space.sample(5000, np.random.default_rng(0), use_prior=True)
    Y = space.sample(5000, np.random.default_rng(0))
    assert X[:, 0].mean() < Y[:, 0].mean()
    assert space.satisfies_constraints(X).all()
