import numpy as np
import pytest

from bayestune.exceptions import SpaceError
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real, Space


def mixed_space():
    return Space(
        [
            Real("alpha", 0.1, 10.0, log=True),
            Integer("threads", 1, 8),
            Ordinal("tile", [8, 16, 32, 64], log=True),
            Categorical("layout", ["row", "col"]),
            Permutation("order", 3),
        ],
        ["tile * threads <= 256", "layout == 'row' or order[0] != 0"],
    )


def test_config_matrix_round_trip():
    space = mixed_space()
    X = space.sample(50, np.random.default_rng(0))
    configs = space.to_configs(X)
    np.testing.assert_allclose(space.to_matrix(configs), X)
    assert all(space.validate_config(c) == c for c in configs)
    assert space.is_feasible(space.to_matrix(configs)).all()


def test_validate_config_errors_name_the_problem():
    space = mixed_space()
    good = space.to_configs(space.sample(1, np.random.default_rng(0)))[0]
    with pytest.raises(SpaceError, match="unknown parameter"):
        space.validate_config({**good, "bogus": 1})
    missing = dict(good)
    del missing["tile"]
    with pytest.raises(SpaceError, match="lacks parameter"):
        space.validate_config(missing)
    assert not space.is_feasible(space.to_matrix([{**good, "tile": 64, "threads": 8}]))[0]


def test_duplicate_names_rejected():
    with pytest.raises(SpaceError, match="unique"):
        Space([Integer("a", 0, 1), Integer("a", 0, 2)])


def test_is_feasible_rejects_corrupt_rows():
    space = mixed_space()
    X = space.sample(5, np.random.default_rng(0))
    X[0, 1] = 3.5  # non-integer thread count
    X[1, 2] = 7  # ordinal index out of range
    X[2, -3:] = [0, 0, 1]  # not a permutation
    ok = space.is_feasible(X)
    assert not ok[:3].any() and ok[3:].all()


def test_uniform_and_cot_sampling_agree_in_distribution():
    space = Space([Ordinal("a", [1, 2, 4, 8]), Ordinal("b", [1, 2, 4, 8])], ["a * b <= 8"])
    r = np.random.default_rng(0)
    cot = space.sample(8000, r, method="cot")
    uni = space.sample(8000, r, method="uniform")
    assert abs(cot[:, 0].mean() - uni[:, 0].mean()) < 0.1


def test_enumerate_small_space():
    space = mixed_space()
    assert space.enumerate() is None  # a real parameter: not enumerable
    small = Space([Integer("a", 0, 3), Categorical("c", ["x", "y"]), Permutation("p", 3)], ["a != 2"])
    X = small.enumerate()
    assert len(X) == 3 * 2 * 6 == small.count_feasible()
    assert len(set(small.row_keys(X))) == len(X)


def test_default_config_and_prior_weight():
    space = Space([Integer("a", 1, 9, default=3), Real("x", 0, 1, prior="gaussian")])
    assert space.default_config() == {"a": 3, "x": 0.5}
    w = space.prior_weight(space.to_matrix([{"a": 3, "x": 0.5}, {"a": 3, "x": 0.02}]))
    assert w[0] > w[1]
