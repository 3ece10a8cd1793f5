import itertools
import math

import numpy as np
import pytest

from bayestune import PerfectTile, Space
from bayestune.exceptions import ScenarioError, SpaceError
from bayestune.models.encoding import FeatureEncoder
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.scenario import load_scenario
from bayestune.space import Categorical
from bayestune.space.spec import space_from_spec
from bayestune.strategies import available_strategies
from bayestune.strategies.base import _REGISTRY


def brute_force(extent: int, levels: int, cap: int | None) -> list[tuple[int, ...]]:
    divisors = [d for d in range(1, extent + 1) if extent % d == 0]
    return sorted(
        c
        for c in itertools.product(divisors, repeat=levels)
        if math.prod(c) == extent and (cap is None or c[-1] <= cap)
    )


@pytest.mark.parametrize("extent,levels,cap", [(256, 4, 64), (360, 3, None), (1, 3, None), (97, 2, 10), (64, 1, 64)])
def test_table_is_every_valid_tiling_in_order(extent, levels, cap):
    t = PerfectTile("t", extent, levels, max_innermost=cap)
    expected = brute_force(extent, levels, cap)
    assert [tuple(r) for r in t.table.tolist()] == expected
    assert t.cardinality == len(expected)
    assert t.index_of(t.grid()).tolist() == list(range(len(expected)))


def test_sampling_is_uniform_over_tilings():
    t = PerfectTile("t", 16, 3, max_innermost=4)
    draws = t.index_of(t.sample(np.random.default_rng(0), 12_000))
    counts = np.bincount(draws, minlength=int(t.cardinality))
    assert counts.min() > 0.8 * counts.mean() and counts.max() < 1.2 * counts.mean()


def test_neighbours_move_one_prime_between_levels():
    t = PerfectTile("t", 12, 3, max_innermost=4)
    start = np.array([[3.0, 4.0, 1.0]])
    got = {tuple(int(v) for v in r) for r in t.neighbours(start, np.random.default_rng(0))}
    # 3 moves to level 1 or 2; a 2 moves from level 1 to level 0 or 2
    assert got == {(1, 12, 1), (1, 4, 3), (6, 2, 1), (3, 2, 2)}
    assert t.in_domain(np.array(sorted(got), dtype=float)).all()


def test_cap_excludes_neighbours_and_values():
    t = PerfectTile("t", 8, 2, max_innermost=2)
    nb = t.neighbours(np.array([[4.0, 2.0]]), np.random.default_rng(0))
    assert [tuple(r) for r in nb.astype(int).tolist()] == [(8, 1)]
    assert not t.in_domain(np.array([[2.0, 4.0], [3.0, 3.0], [8.0, np.nan]])).any()
    assert t.index_of(np.array([[2.0, 4.0]])).tolist() == [-1]


@pytest.mark.parametrize(
    "bad,message",
    [
        ((2, 2, 2, 2), "multiply to 16"),
        ((1, 1, 1, 256), "exceeds max_innermost=64"),
        ((256, 1, 1), "expected 4 positive integer"),
        ((256, 1, 1, 0.5), "expected 4 positive integer"),
        ("x,y", "cannot read tile sizes"),
    ],
)
def test_invalid_values_name_the_problem(bad, message):
    with pytest.raises(SpaceError, match=message):
        PerfectTile("t", 256, 4, max_innermost=64).validate(bad)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"extent": 0, "levels": 2}, "extent >= 1"),
        ({"extent": 8, "levels": 2.5}, "levels >= 1"),
        ({"extent": 8, "levels": 2, "max_innermost": 0}, "max_innermost"),
        ({"extent": 2**40, "levels": 12}, "too many to enumerate"),
    ],
)
def test_bad_definitions_are_refused(kwargs, message):
    with pytest.raises(SpaceError, match=message):
        PerfectTile("t", **kwargs)


def test_text_values_and_default():
    t = PerfectTile("t", 64, 3, max_innermost=16)
    assert t.validate("(4, 2, 8)") == (4, 2, 8)
    assert t.default == (64, 1, 1)
    assert PerfectTile("t", 64, 3, default=[8, 8, 1]).default == (8, 8, 1)


def test_unit_features_are_log2_shares_of_the_extent():
    t = PerfectTile("t", 256, 4)
    assert np.allclose(t.unit(np.array([[16.0, 4.0, 2.0, 2.0]])), [[0.5, 0.25, 0.125, 0.125]])
    enc = FeatureEncoder(Space([t, Categorical("c", [0, 16])]))
    assert [b.name for b in enc.blocks] == ["t[0]", "t[1]", "t[2]", "t[3]", "c"]
    F = enc.transform(np.array([[16.0, 4.0, 2.0, 2.0, 1.0]]))
    assert np.allclose(F, [[0.5, 0.25, 0.125, 0.125, 1.0]])


def test_constraints_index_the_factors_and_chain_of_trees_counts_exactly():
    t = PerfectTile("t", 256, 4, max_innermost=64)
    space = Space([t, Categorical("c", [0, 1])], ["t[2] * t[3] <= 16"])
    expected = sum(1 for r in brute_force(256, 4, 64) if r[2] * r[3] <= 16) * 2
    assert space.count_feasible() == expected
    X = space.sample(200, np.random.default_rng(1))
    assert space.is_feasible(X).all()
    assert len(space.enumerate()) == expected


def test_spec_round_trip_and_scenario_syntax(tmp_path):
    t = PerfectTile("t", 256, 4, max_innermost=64, default=(4, 4, 4, 4))
    space = Space([t])
    assert space_from_spec(space.to_spec()["parameters"])["t"] == t
    path = tmp_path / "s.json"
    path.write_text(
        '{"parameters": {"t": {"type": "perfect_tile", "extent": 256, "levels": 4, "max_innermost": 64}},'
        ' "objectives": ["time"]}'
    )
    assert load_scenario(path).space["t"] == PerfectTile("t", 256, 4, max_innermost=64)
    path.write_text(
        '{"parameters": {"t": {"type": "perfect_tile", "extent": 256, "levels": 4, "default": [2, 2]}},'
        ' "objectives": ["time"]}'
    )
    with pytest.raises(ScenarioError, match=r"parameters\.t\.default.*expected 4 positive"):
        load_scenario(path)
    path.write_text('{"parameters": {"t": {"type": "perfect_tile", "extent": 256}}, "objectives": ["time"]}')
    with pytest.raises(ScenarioError, match="levels"):
        load_scenario(path)


@pytest.mark.parametrize("strategy", available_strategies())
def test_every_strategy_runs_on_a_tile_space(strategy):
    space = Space(
        [PerfectTile("i", 64, 3, max_innermost=16), PerfectTile("k", 32, 2), Categorical("unroll", [0, 16, 64])]
    )
    multi = _REGISTRY[strategy].multi_objective
    objectives = [Objective("f1"), Objective("f2")] if multi else [Objective("f1")]
    options = {"rf": {"trees": 10}} if strategy == "pareto_rf" else {}

    def blackbox(c):
        f1 = abs(math.log2(c["i"][2]) - 2) + abs(math.log2(c["k"][1]) - 3) + c["unroll"] / 64 + 1.0
        return {"f1": f1, "f2": 10.0 - f1} if multi else f1

    opt = Optimizer(space, objectives=objectives, strategy=strategy, strategy_options=options, seed=0)
    opt.optimize(blackbox, 14)
    trials = [t for t in opt.trials if t.feasible]
    assert len(trials) == 14
    assert all(space.is_feasible(space.to_matrix([t.config])).all() for t in trials)
