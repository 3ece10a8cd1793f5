"""The design spaces' decisions as one bayestune space (no TVM needed: decisions are records)."""

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
