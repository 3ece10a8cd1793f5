"""The Hamming-ball trust region: which configurations it may propose, and how its radius moves."""

import numpy as np
import pytest

from bayestune.exceptions import BayestuneError
from bayestune.search.trust_region import (
    HammingTrustRegion,
    TrustRegionSettings,
    coverage_allowance,
    parameters_changed,
)
from bayestune.space import Categorical, Ordinal, Real, Space


def space_():
    return Space(
        [
            Ordinal("bx", [16, 32, 48, 64, 80, 96]),
            Ordinal("by", [1, 2, 4, 8], log=True),
            Categorical("c", ["x", "y", "z"]),
        ],
        ["bx * by <= 256"],
    )


def needle(space):
    """Higher is better: a needle at bx = 32, by = 4, c = 'z', poor everywhere else."""

    def score(X):
        cols = space.columns(X)
        return (
            np.where(cols["bx"] == 32, 5.0, 0.0)
            + np.where(cols["by"] == 4, 1.0, 0.0)
            + np.where(cols["c"] == "z", 1.0, 0.0)
        )

    return score


def test_parameters_changed_counts_whole_parameters():
    space = space_()
    X = space.to_matrix([{"bx": 16, "by": 1, "c": "x"}, {"bx": 96, "by": 1, "c": "x"}, {"bx": 96, "by": 2, "c": "z"}])
    assert parameters_changed(space, X, X[0]).tolist() == [0, 1, 3]


def test_radius_one_proposes_any_value_of_one_parameter_and_the_best_scored():
    space = space_()
    incumbent = space.to_matrix([{"bx": 96, "by": 2, "c": "z"}])[0]
    region = HammingTrustRegion()
    row = region.propose(
        space,
        needle(space),
        incumbent,
        np.random.default_rng(0),
        seen=set(space.row_keys(incumbent.reshape(1, -1))),
        candidates=space.enumerate(),
    )
    # bx jumps straight from 96 to 32 (not to an adjacent value): one parameter changed
    assert space.to_config(row) == {"bx": 32, "by": 2, "c": "z"}


def test_an_exhausted_ball_grows_and_everything_seen_gives_none():
    space = space_()
    X = space.enumerate()
    incumbent = X[0]
    distance = parameters_changed(space, X, incumbent)
    seen = set(space.row_keys(X[distance <= 1]))
    region = HammingTrustRegion()
    row = region.propose(
        space, needle(space), incumbent, np.random.default_rng(0), seen=seen, candidates=X[distance > 1]
    )
    assert region.radius == 2 and parameters_changed(space, row.reshape(1, -1), incumbent)[0] == 2
    assert (
        region.propose(
            space, needle(space), incumbent, np.random.default_rng(0), seen=set(space.row_keys(X)), candidates=X[:0]
        )
        is None
    )


def test_failures_grow_the_radius_and_an_improvement_resets_it():
    region = HammingTrustRegion(fail_tolerance=2)
    region.update(5.0)
    assert region.radius == 1
    region.update(5.0)
    region.update(5.0)
    assert region.radius == 2
    region.update(5.0)
    region.update(5.0)
    assert region.radius == 3
    region.update(4.0)
    assert region.radius == 1


def test_sampled_ball_of_a_large_space_stays_feasible_unseen_and_within_the_radius():
    space = Space([Real("a", 0.0, 1.0), Real("b", 0.0, 1.0), Ordinal("n", [1, 2, 4, 8], log=True)], ["a + b <= 1.5"])
    incumbent = space.to_matrix([{"a": 0.5, "b": 0.5, "n": 2}])[0]

    def score(X):
        return -np.abs(space.columns(X)["a"] - 0.1)

    region = HammingTrustRegion(n_samples=300)
    seen = set(space.row_keys(incumbent.reshape(1, -1)))
    row = region.propose(space, score, incumbent, np.random.default_rng(3), seen=seen)
    assert space.is_feasible(row.reshape(1, -1))[0]
    assert parameters_changed(space, row.reshape(1, -1), incumbent)[0] == 1
    assert abs(space.to_config(row)["a"] - 0.1) < 0.05  # the best of many one-parameter moves of `a`


@pytest.mark.parametrize("kwargs", [{"fail_tolerance": 0}, {"radius": 0}])
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(BayestuneError, match=">= 1"):
        HammingTrustRegion(**kwargs)


@pytest.mark.parametrize(("n", "allowance"), [(0, 1), (5, 5), (24, 24), (96, 48), (2400, 240)])
def test_coverage_allowance_is_the_ball_up_to_the_cap_then_a_square_root_share(n, allowance):
    assert coverage_allowance(n, 24) == allowance


def test_coverage_growth_proposes_every_unseen_neighbour_before_the_ball_grows():
    space = space_()
    X = space.enumerate()
    incumbent = X[0]
    near = parameters_changed(space, X, incumbent) == 1
    region = HammingTrustRegion(coverage_cap=24)
    seen = set(space.row_keys(incumbent.reshape(1, -1)))
    proposals = []
    for _ in range(int(near.sum())):
        pool = np.array([x for x, k in zip(X, space.row_keys(X)) if k not in seen])
        row = region.pick(space, needle(space), incumbent, 1.0, np.random.default_rng(0), seen=seen, candidates=pool)
        proposals.append(row[0])
        seen |= set(space.row_keys(row))
        assert not region.confirms(1.0)
    assert (parameters_changed(space, np.array(proposals), incumbent) == 1).all()  # the whole neighbourhood first
    region.update(1.0)
    assert region.radius == 2 and region.confirms(1.0)
    assert not region.confirms(0.5)  # a better best than the confirmed incumbent's


def test_coverage_growth_is_chosen_by_the_fail_tolerance_option():
    assert TrustRegionSettings.from_options("bo", {"fail_tolerance": "coverage"}).region().coverage_cap == 24
    assert TrustRegionSettings().region().coverage_cap is None
    for bad in ("sometimes", 0):
        with pytest.raises(BayestuneError, match="fail_tolerance"):
            TrustRegionSettings.from_options("bo", {"fail_tolerance": bad})
