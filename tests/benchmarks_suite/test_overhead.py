"""The overhead benchmark: the default training cap against the uncapped model."""

from __future__ import annotations

import argparse

import pytest

from benchmarks import overhead


def test_cap_parsing_names_the_default_and_the_uncapped_model():
    assert overhead.parse_cap("250") == 250
    assert overhead.parse_cap("None") is None
    assert overhead.parse_cap("default") == overhead.DEFAULT
    with pytest.raises(argparse.ArgumentTypeError, match="'lots'"):
        overhead.parse_cap("lots")


def test_warm_optimizer_runs_the_cap_asked_for():
    caps = {
        cap: overhead.warm_optimizer(12, cap, 0, failures=0.2)[0].strategy.surrogates.options.max_training_points
        for cap in (overhead.DEFAULT, None, 40)
    }
    assert caps == {overhead.DEFAULT: 500, None: None, 40: 40}
    opt, _ = overhead.warm_optimizer(12, None, 0, failures=0.5)
    assert opt.n_evaluated == 12 and 0 < opt.n_failed < 12


def test_the_table_measures_the_uncapped_model_only_up_to_its_limit(capsys):
    args = argparse.Namespace(cap=15, uncapped_to=12, repeats=1, seed=0, failures=0.0, problem=None)
    overhead.table(args, [12, 20])
    lines = capsys.readouterr().out.splitlines()
    assert "cap 15: wall s" in lines[1]
    row12, row20 = lines[3].split(" | "), lines[4].split(" | ")
    assert len(row12) == len(row20) == 10 and "–" not in lines[3]
    assert row20[4:7] == ["–", "–", "–"] and float(row20[1]) > 0 and float(row20[9].rstrip(" |")) > 0
