import itertools
import math

import numpy as np
import pytest
from scipy import stats

from bayestune.exceptions import SpaceError
from bayestune.space.parameters import Categorical, Integer, Ordinal, Permutation, Real
from bayestune.space.space import Space


def rng(seed=0):
    return np.random.default_rng(seed)


ALL = [
    Real("lr", 1e-4, 1.0, log=True),
    Real("x", -2.0, 3.0),
    Integer("threads", 1, 64),
    Integer("big", 1, 4096, log=True),
    Ordinal("tile", [1, 2, 4, 8, 16, 32, 64], log=True),
    Categorical("layout", ["NCHW", "NHWC", "CHWN"]),
    Categorical("flag", [True, False]),
    Permutation("order", 4),
]


@pytest.mark.parametrize("p", ALL, ids=lambda p: p.name)
def test_samples_are_in_domain_and_round_trip(p):
    raw = p.sample(rng(), 500)
    assert raw.shape == (500, p.width)
    assert p.in_domain(raw).all()
    values = p.values_from_raw(raw)
    back = p.raw_from_values(values)
    np.testing.assert_allclose(back, raw)
    for v in values[:20]:
        assert p.validate(v) == v


@pytest.mark.parametrize("p", ALL, ids=lambda p: p.name)
def test_neighbours_are_legal_and_differ(p):
    r = rng(1)
    for raw in p.sample(r, 20):
        nb = p.neighbours(raw, r)
        assert len(nb) > 0
        assert p.in_domain(nb).all()
        assert not np.any(np.all(nb == raw, axis=1))


@pytest.mark.parametrize("p", ALL, ids=lambda p: p.name)
def test_unit_features_within_bounds(p):
    u = p.unit(p.sample(rng(2), 200))
    if p.kind in ("real", "integer", "ordinal"):
        assert u.min() >= 0 and u.max() <= 1


def test_ordinal_neighbours_are_adjacent_values():
    p = Ordinal("tile", [1, 2, 4, 8, 16])
    nb = p.values_from_raw(p.neighbours(p.to_raw(4), rng()))
    assert sorted(nb) == [2, 8]
    assert p.values_from_raw(p.neighbours(p.to_raw(1), rng())) == [2]


def test_categorical_neighbours_are_all_other_values():
    p = Categorical("c", ["a", "b", "c", "d"])
    assert sorted(p.values_from_raw(p.neighbours(p.to_raw("b"), rng()))) == ["a", "c", "d"]


def test_permutation_neighbours_include_all_swaps_and_moves():
    p = Permutation("order", 4)
    nb = {p.from_raw(r) for r in p.neighbours(p.to_raw((0, 1, 2, 3)), rng())}
    identity = (0, 1, 2, 3)
    for i, j in itertools.combinations(range(4), 2):
        swapped = list(identity)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        assert tuple(swapped) in nb
    assert (1, 2, 3, 0) in nb or (3, 0, 1, 2) in nb  # moving one element across the order
    assert identity not in nb


def test_permutation_rank_round_trip_all():
    p = Permutation("order", 5)
    grid = p.grid()
    assert len(grid) == math.factorial(5)
    np.testing.assert_array_equal(p.index_of(grid), np.arange(len(grid)))
    np.testing.assert_array_equal(p.raw_of_index(np.arange(len(grid))), grid)


def test_permutation_sampling_is_uniform():
    p = Permutation("order", 3)
    idx = p.index_of(p.sample(rng(3), 6000))
    counts = np.bincount(idx, minlength=6)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_integer_log_sampling_is_log_uniform():
    p = Integer("n", 1, 1024, log=True)
    v = p.values_from_raw(p.sample(rng(4), 20000))
    small = np.mean(np.array(v) <= 32)
    assert 0.4 < small < 0.6  # half the octaves lie below 32


def test_prior_sampling_follows_beta():
    p = Real("x", 0.0, 1.0, prior="exponential")
    u = p.sample(rng(5), 4000, use_prior=True)[:, 0]
    assert stats.kstest(u, stats.beta(1.0, 0.8).cdf).pvalue > 1e-3  # HyperMapper 2.0's shape
    assert p.prior_weight(np.array([[0.9]]))[0] > p.prior_weight(np.array([[0.1]]))[0]


def test_categorical_prior_probabilities():
    p = Categorical("c", ["a", "b", "c"], prior=[0.7, 0.2, 0.1])
    counts = np.bincount(p.index_of(p.sample(rng(6), 10000, use_prior=True)), minlength=3)
    assert stats.chisquare(counts, [7000, 2000, 1000]).pvalue > 1e-3


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Real("x", 5, 2), "low < high"),
        (lambda: Real("x", 0, 2, log=True), "low > 0"),
        (lambda: Real("x", 0, float("inf")), "finite"),
        (lambda: Integer("n", 1.5, 4), "integer bounds"),
        (lambda: Ordinal("t", [4, 2, 8]), "strictly increasing"),
        (lambda: Ordinal("t", []), "at least one value"),
        (lambda: Ordinal("t", [1, "a"]), "finite numbers"),
        (lambda: Categorical("c", ["a", "a"]), "distinct"),
        (lambda: Categorical("c", ["a", "b"], prior=[1.0]), "probabilities"),
        (lambda: Permutation("p", 0), "n >= 1"),
        (lambda: Permutation("p", 3, metric="cosine"), "metric"),
        (lambda: Real("x", 0, 1, prior="bumpy"), "prior shape"),
        (lambda: Real("not a name", 0, 1), "identifier"),
        (lambda: Real("x", 0, 1, default=3.0), "value <= 1"),
    ],
)
def test_bad_definitions_name_the_rule(make, message):
    with pytest.raises(SpaceError, match=message):
        make()


@pytest.mark.parametrize(
    "p, bad",
    [
        (Integer("n", 1, 8), 2.5),
        (Integer("n", 1, 8), 9),
        (Ordinal("t", [1, 2, 4]), 3),
        (Categorical("c", ["a", "b"]), "z"),
        (Permutation("p", 3), (0, 0, 1)),
        (Permutation("p", 3), (0, 1)),
        (Real("x", 0, 1), float("nan")),
    ],
)
def test_bad_values_are_rejected(p, bad):
    with pytest.raises(SpaceError, match=p.name):
        p.validate(bad)


def test_csv_text_values_are_accepted():
    assert Permutation("p", 3).validate("(2, 0, 1)") == (2, 0, 1)
    assert Categorical("c", [1, 2, 3]).validate("2") == 2


@pytest.mark.parametrize("n", [21, 22, 30])
def test_permutations_beyond_64_bit_ranks_still_validate_sample_and_move(n):
    p = Permutation("order", n)
    rng = np.random.default_rng(0)
    rows = p.sample(rng, 5)
    assert p.in_domain(rows).all()
    assert p.validate(list(range(n))[::-1]) == tuple(range(n))[::-1]
    neighbours, owner = p.neighbours_many(rows, rng)
    assert len(neighbours) and p.in_domain(neighbours).all()
    with pytest.raises(SpaceError, match="no 64-bit rank"):
        p.index_of(rows)


def test_a_space_with_a_22_element_permutation_is_tuned_end_to_end():
    from bayestune.optimizer import Optimizer

    space = Space([Permutation("order", 22), Integer("x", 0, 5)])
    opt = Optimizer(space, objectives=["t"], seed=0)
    best = opt.optimize(lambda c: float(np.dot(range(22), c["order"])) + c["x"], 14)
    assert best is not None and opt.n_evaluated == 14


@pytest.mark.parametrize("p", [q for q in ALL if q.kind in ("real", "integer")], ids=lambda p: p.name)
def test_neighbours_of_many_rows_are_each_rows_neighbours_drawn_in_order(p):
    """The vectorised moves draw the same random steps, row after row, as one row at a time."""
    X = p.sample(rng(3), 40)
    X[:2] = [[p.low], [p.high]]
    cand, owner = p.neighbours_many(X, rng(4))
    r = rng(4)
    for i, raw in enumerate(X):
        np.testing.assert_array_equal(cand[owner == i], p.neighbours(raw, r))


def test_a_categorical_value_with_a_nul_character_is_refused():
    from bayestune.exceptions import SpaceError
    from bayestune.space import Categorical

    with pytest.raises(SpaceError, match="contains a NUL character"):
        Categorical("c", ["a", "b\x00c"])
