"""The paired judge of a search change: hits, stuck runs and sign tests on hand-made runs."""

from __future__ import annotations

from bayestune.space import Ordinal, Space
from bayestune.trial import Result
from benchmarks.paired import Landscape, mark_stuck, read_runs, render, summary_rows
from benchmarks.problem import Problem

SPACE = Space([Ordinal("a", [1, 2, 3]), Ordinal("b", [1, 2, 3])])
#: two minima: the optimum (3, 3) = 1.0 and a local one (1, 1) = 1.5 (all its neighbours are worse)
TABLE = {
    (1, 1): 1.5,
    (1, 2): 2.0,
    (2, 1): 2.0,
    (1, 3): 3.0,
    (3, 1): 3.0,
    (2, 2): 2.5,
    (2, 3): 1.2,
    (3, 2): 1.2,
    (3, 3): 1.0,
}


def problem():
    return Problem(
        "two_basins",
        "synthetic",
        SPACE,
        ["t"],
        lambda c: Result({"t": TABLE[int(c["a"]), int(c["b"])]}),
        optimum=1.0,
        optimum_config={"a": 3, "b": 3},
    )


def record(strategy, seed, path):
    configs = [{"a": a, "b": b} for a, b in path]
    return {
        "problem": "two_basins",
        "strategy": strategy,
        "seed": seed,
        "optimum": 1.0,
        "kind": "synthetic",
        "values": [TABLE[p] for p in path],
        "feasible": [True] * len(path),
        "configs": configs,
    }


def test_a_local_minimum_is_told_from_a_point_with_a_better_neighbour():
    land = Landscape(problem())
    assert land.is_local_minimum({"a": 1, "b": 1}, 1.5) is True
    assert land.is_local_minimum({"a": 2, "b": 2}, 2.5) is False


def test_hits_stuck_runs_and_paired_gains_are_counted_per_seed():
    stuck = [(2, 2), (1, 2), (1, 1)]  # ends at the local minimum
    found = [(2, 2), (2, 3), (3, 3)]
    records = [
        record("base", 0, stuck),
        record("base", 1, found),
        record("new", 0, found),
        record("new", 1, found),
    ]
    runs = read_runs(records, [2, 3])
    mark_stuck(runs, 3, 0.01, lambda name: problem())
    assert runs["two_basins"]["base"][0].stuck and not runs["two_basins"]["base"][1].stuck
    rows = summary_rows(runs, "base", ["new"], [2, 3], 0.01)
    base, new = rows
    assert base[0] == "base" and new[0] == "new"
    assert "+1 / −0" in new[-2]  # one hit gained on seed 0, none lost
    assert base[-4] == "50.0 %" and new[-4] == "0.0 %"  # stuck share at the largest budget
    text = render(runs, "base", ["new"], [2, 3], 0.01)
    assert "| two_basins | 1/2 (stuck 1, failed 0 %) | 2/2 (stuck 0, failed 0 %) |" in text
