"""The benchmark's "evaluations to 1.10x" metric: censored seeds are never imputed."""

from __future__ import annotations

from benchmarks.bograph_compare import reach, reach_cell, reach_list


def _run(seed, values, budget):
    return {"seed": seed, "true_values": values, "optimum": 1.0, "budget": budget}


def test_reach_is_the_first_evaluation_within_ten_percent():
    assert reach(_run(0, [3.0, 1.2, 1.1, 1.0], 4)) == 3
    assert reach(_run(0, [3.0, 1.2, 1.11], 3)) is None


def test_censored_seeds_count_as_later_than_any_evaluation():
    reached = [_run(0, [2.0] * 4 + [1.05], 10), _run(1, [1.0], 10)]
    never = [_run(s, [2.0] * 10, 10) for s in (2, 3)]
    # 5, 1, >10, >10: the median lies between 5 and a censored seed, so it is censored too
    assert reach_cell(reached + never) == ">10; 2/4"
    assert reach_cell(reached + never[:1]) == "5; 2/3"
    assert reach_list(never[:1] + reached) == "5, 1, >10"
