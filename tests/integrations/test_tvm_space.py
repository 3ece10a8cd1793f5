"""The design spaces' decisions as one bayestune space (no TVM needed: decisions are records)."""

import math

import pytest

from bayestune.integrations.tvm.space import DESIGN, Decision, DesignSpaces
from bayestune.space import Categorical, PerfectTile

TILE_I = Decision("tile", "i", [1, 1, 64, 4], extent=256, levels=4, max_innermost=64)
TILE_K = Decision("tile", "k", [8, 32], extent=256, levels=2, max_innermost=64)
UNROLL = Decision("categorical", "categorical", 2, choices=(0, 16, 64, 512))
LOC = Decision("compute_location", "pad", -1, choices=(-2, -1, 0, 3))


def test_identical_design_spaces_share_every_decision():
    spaces = DesignSpaces([[TILE_I, TILE_I, TILE_K, UNROLL]] * 3)
    space = spaces.space
    assert space.names == [DESIGN, "tile_i", "tile_i_1", "tile_k", "categorical"]
    assert isinstance(space["tile_i"], PerfectTile) and space["tile_i"].max_innermost == 64
    assert space["tile_i"].default == (1, 1, 64, 4)
    assert space["categorical"].default == 64 and space[DESIGN].values == [0, 1, 2]
    config = {DESIGN: 2, "tile_i": (4, 4, 4, 4), "tile_i_1": (256, 1, 1, 1), "tile_k": (1, 256), "categorical": 512}
    assert spaces.decisions(config) == [[4, 4, 4, 4], [256, 1, 1, 1], [1, 256], 3]


def test_a_decision_one_design_lacks_is_inactive_there():
    spaces = DesignSpaces([[TILE_I, LOC], [TILE_I]])
    assert spaces.space.names == [DESIGN, "tile_i", "loc_pad"]
    assert isinstance(spaces.space["loc_pad"], Categorical) and spaces.space["loc_pad"].values == [-2, -1, 0, 3]
    a = {DESIGN: 1, "tile_i": (4, 4, 4, 4), "loc_pad": 0}
    b = dict(a, loc_pad=3)
    assert spaces.decisions(a) == spaces.decisions(b) == [[4, 4, 4, 4]]  # same program: measured once
    assert spaces.decisions(dict(a, **{DESIGN: 0})) == [[4, 4, 4, 4], 0]
    assert spaces.decisions(dict(b, **{DESIGN: 0})) == [[4, 4, 4, 4], 3]


def test_one_design_space_needs_no_design_parameter_and_an_invalid_default_is_dropped():
    odd = Decision("tile", "j", [3, 3], extent=16, levels=2, max_innermost=None)
    spaces = DesignSpaces([[odd]])
    assert spaces.space.names == ["tile_j"]
    assert spaces.space["tile_j"].default == (16, 1)
    assert spaces.design_of({"tile_j": (4, 4)}) == 0


def test_no_design_space_is_a_clear_error():
    with pytest.raises(ValueError, match="no design space"):
        DesignSpaces([])


def test_the_decision_space_depends_on_the_operator_not_on_the_sampled_trace():
    """Issue 42: the same operator and seed gave other compute locations and defaults each run,
    because they came from the design space's own (randomly sampled) decisions."""
    from bayestune.integrations.tvm.space import balanced_tiling, canonical_decisions, canonical_defaults

    assert balanced_tiling(256, 4) == [4, 4, 4, 4] and balanced_tiling(56, 4) == [7, 2, 2, 2]
    assert balanced_tiling(64, 2, max_innermost=4) == [16, 4] and balanced_tiling(7, 3) == [7, 1, 1]
    for extent, levels, cap in [(256, 4, 64), (58, 4, None), (3, 2, 1), (1, 4, None)]:
        tiles = balanced_tiling(extent, levels, cap)
        assert len(tiles) == levels and math.prod(tiles) == extent and (cap is None or tiles[-1] <= cap)
    one_run = [TILE_I, TILE_K, UNROLL, LOC]
    other_run = [
        Decision("tile", "i", [64, 1, 1, 4], extent=256, levels=4, max_innermost=64),
        Decision("tile", "k", [256, 1], extent=256, levels=2, max_innermost=64),
        Decision("categorical", "categorical", 3, choices=(0, 16, 64, 512)),
        Decision("compute_location", "pad", 3, choices=(-2, -1, 0, 3)),
    ]
    assert canonical_decisions(one_run)[:3] == canonical_decisions(other_run)[:3] == [[4, 4, 4, 4], [16, 16], 0]
    a, b = (DesignSpaces([canonical_defaults(run)]).space for run in (one_run, other_run))
    assert (
        a.default_config()
        == b.default_config()
        == {
            "tile_i": (4, 4, 4, 4),
            "tile_k": (16, 16),
            "categorical": 0,
            "loc_pad": -1,
        }
    )
