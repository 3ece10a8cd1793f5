"""Raw rows to model features: one block per informative parameter."""

import numpy as np
import pytest

from bayestune.models.encoding import FeatureEncoder
from bayestune.space import Categorical, Ordinal, Permutation, Real, Space


def space_():
    return Space(
        [
            Ordinal("t", [1, 2, 4, 8], log=True),
            Real("r", 2.0, 4.0),
            Categorical("c", ["a", "b", "c"]),
            Permutation("p", 3),
            Ordinal("fixed", [5]),
        ]
    )


def test_blocks_describe_the_features_and_single_values_are_dropped():
    encoder = FeatureEncoder(space_())
    assert [(b.name, b.kind, b.start, b.width, b.metric) for b in encoder.blocks] == [
        ("t", "numeric", 0, 1, "euclidean"),
        ("r", "numeric", 1, 1, "euclidean"),
        ("c", "categorical", 2, 1, "hamming"),
        ("p", "permutation", 3, 3, "spearman"),
    ]
    assert encoder.width == 6


def test_numbers_become_unit_values_categoricals_indices_permutations_positions():
    space = space_()
    X = space.to_matrix([{"t": 4, "r": 3.0, "c": "c", "p": (2, 0, 1), "fixed": 5}])
    F = FeatureEncoder(space).transform(X)
    assert F.shape == (1, 6)
    assert F[0, 0] == pytest.approx(2 / 3)  # log scale: 4 is two thirds of the way from 1 to 8
    assert F[0, 1] == pytest.approx(0.5)
    assert F[0, 2] == 2
    assert np.array_equal(F[0, 3:], space["p"].unit(X[:, space.slices["p"]])[0])


def test_permutation_metric_override_and_a_flat_row_is_accepted():
    space = space_()
    encoder = FeatureEncoder(space, permutation_metric="kendall")
    assert encoder.blocks[-1].metric == "kendall"
    X = space.sample(4, np.random.default_rng(0))
    assert np.array_equal(encoder.transform(X[0]), encoder.transform(X[:1]))


@pytest.mark.parametrize("scale, expected", [("log", 2 / 3), ("linear", 3 / 7), ("index", 2 / 3), (None, 2 / 3)])
def test_ordinal_scale_overrides_the_parameters_own_rule(scale, expected):
    space = space_()
    X = space.to_matrix([{"t": 4, "r": 3.0, "c": "c", "p": (2, 0, 1), "fixed": 5}])
    F = FeatureEncoder(space, ordinal_scale=scale).transform(X)
    assert F[0, 0] == pytest.approx(expected)
    assert F[0, 1] == pytest.approx(0.5)  # reals keep their own scale


def test_log_scale_of_an_ordinal_with_zero_falls_back_to_linear_and_bad_scales_are_refused():
    space = Space([Ordinal("z", [0, 1, 3])])
    F = FeatureEncoder(space, ordinal_scale="log").transform(space.to_matrix([{"z": 1}]))
    assert F[0, 0] == pytest.approx(1 / 3)
    with pytest.raises(Exception, match="ordinal_scale"):
        FeatureEncoder(space, ordinal_scale="sqrt")


def test_distinct_ordinal_scales_drops_warpings_that_change_no_feature():
    from bayestune.models.encoding import distinct_ordinal_scales

    pow2 = Space([Ordinal("t", [1, 2, 4, 8], log=True)])
    assert distinct_ordinal_scales(pow2, [None, "log", "linear", "index"]) == [None, "linear"]
    even = Space([Ordinal("e", [0, 2, 4, 6])])  # linear rule, equally spaced, log impossible
    assert distinct_ordinal_scales(even, [None, "log", "linear", "index"]) == [None]
    assert distinct_ordinal_scales(Space([Categorical("c", ["a", "b"])]), [None, "log"]) == [None]
