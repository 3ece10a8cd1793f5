"""The Halide re-timing picks each run's reported best per budget and compares strategies on the
re-timed medians, paired by seed (the timing itself needs Halide and is run by hand)."""

import math

import pytest

from benchmarks.halide_retime import compare, main, reported_bests, schedule_key


def run(strategy, seed, values, problem="halide_blur"):
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "values": values,
        "configs": [{"tile": i} for i in range(len(values))],
    }


def test_the_reported_best_within_each_budget_is_picked_failures_last():
    runs = [run("bo", 0, [3.0, None, 2.0, 1.0]), run("other", 0, [1.0, 1.0, 1.0, 1.0])]
    picks = reported_bests(runs, ["bo"], [2, 3, 4, 5])
    assert picks == {
        ("halide_blur", "bo", 0, 2): {"tile": 0},
        ("halide_blur", "bo", 0, 3): {"tile": 2},
        ("halide_blur", "bo", 0, 4): {"tile": 3},
    }  # the other strategy is left out, and budget 5 is longer than the run
    assert reported_bests([run("bo", 0, [None, math.nan])], ["bo"], [2]) == {}  # nothing feasible


def test_strategies_are_compared_on_the_re_timed_values_not_the_recorded_ones():
    # the variant recorded a faster best, but re-timed its pick is the slower schedule
    runs = [run("bo", s, [2.0, 1.0]) for s in range(3)] + [run("new", s, [0.5, 9.0]) for s in range(3)]
    picks = reported_bests(runs, ["bo", "new"], [2])
    medians = {"halide_blur": {schedule_key({"tile": 1}): 1.0, schedule_key({"tile": 0}): 1.5}}
    text = "\n".join(compare(picks, medians, ["bo", "new"]))
    assert "| halide_blur | 2 | `bo` | 1.000 | 3 |" in text
    assert "| halide_blur | 2 | `new` | 1.500 | 3 |" in text
    assert "| halide_blur | 2 | `new` | 1.500 | 0 / 3 |" in text


def test_runs_without_a_matching_strategy_are_a_clear_error(tmp_path, capsys):
    path = tmp_path / "runs.jsonl"
    path.write_text("")
    with pytest.raises(SystemExit):
        main([str(path), "--strategies", "bo"])
    assert "no Halide run" in capsys.readouterr().err
