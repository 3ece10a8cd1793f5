"""The one rule that turns a list of values into a parameter (T1 files, replayed caches, journals)."""

from __future__ import annotations

import json

import pytest

from bayestune.evaluators.replay import load_kernel_tuner_cache
from bayestune.scenario import scenario_from_dict
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real
from bayestune.space.inference import declared_domain, infer_space, log_scale_suits, parameter_for_values


@pytest.mark.parametrize(
    "values, log",
    [
        ([1, 2, 4, 8, 16], True),  # powers of two: even in log terms
        ([16, 32, 48, 64, 80], False),  # multiples of 16: even in linear terms
        ([0.25, 0.5, 1.0], True),
        ([1, 2, 3], False),  # equal linear gaps beat shrinking log gaps
        ([2, 4], False),  # two values: nothing to compare
        ([7], False),
        ([0, 1, 2, 4, 8], False),  # zero has no logarithm
        ([-8, -4, -2, -1], False),  # negative values neither
        ([8, 1, 4, 2, 2], True),  # order and repeats do not matter
    ],
)
def test_log_scale_rule(values, log):
    assert log_scale_suits(values) is log


def test_declared_numbers_become_a_sorted_ordinal():
    p = parameter_for_values("p", [64, 8, 16, 32])
    assert isinstance(p, Ordinal) and p.values == [8, 16, 32, 64] and p.log
    assert declared_domain([3, 1, 2]) == ("ordinal", [1, 2, 3], False)


def test_declared_single_value_is_a_constant_ordinal():
    p = parameter_for_values("p", [5])
    assert isinstance(p, Ordinal) and p.values == [5] and not p.log


def test_declared_negative_and_float_values():
    p = parameter_for_values("p", [-1.5, 0.0, 2.5])
    assert isinstance(p, Ordinal) and p.values == [-1.5, 0.0, 2.5] and not p.log


@pytest.mark.parametrize("values", [["row", "col"], [True, False], [1, "auto", 2.5]])
def test_declared_text_booleans_and_mixed_values_are_categorical(values):
    p = parameter_for_values("p", values)
    assert isinstance(p, Categorical) and p.values == values
    assert declared_domain(values) == ("categorical", values, False)


def test_no_values_is_an_error():
    with pytest.raises(ValueError, match="no values"):
        parameter_for_values("p", [])


def test_observed_values_may_be_ranges_or_permutations():
    assert isinstance(parameter_for_values("n", list(range(0, 100, 3)), observed=True), Integer)
    contiguous = parameter_for_values("n", [3, 1, 2, 2], observed=True)
    assert isinstance(contiguous, Integer) and (contiguous.low, contiguous.high) == (1, 3)
    real = parameter_for_values("x", [i / 7 for i in range(20)], observed=True)
    assert isinstance(real, Real) and real.high == pytest.approx(19 / 7)
    perm = parameter_for_values("p", [(2, 0, 1), [0, 1, 2]], observed=True)
    assert isinstance(perm, Permutation) and perm.n == 3
    mixed = parameter_for_values("m", ["a", 1, "1", "a", 1.0, True], observed=True)
    assert isinstance(mixed, Categorical) and mixed.values == ["a", 1, "1"]  # 1 == 1.0 == True, as in Python
    one = parameter_for_values("c", [4.0, 4.0], observed=True)
    assert isinstance(one, Ordinal) and one.values == [4]


def _t1_parameter(values):
    s = scenario_from_dict(
        {
            "General": {"BenchmarkName": "k"},
            "ConfigurationSpace": {
                "TuningParameters": [{"Name": "p", "Values": values}, {"Name": "q", "Values": [0, 1]}]
            },
        }
    )
    return s.space["p"]


def _replay_parameter(values, tmp_path):
    cache = {
        "tune_params_keys": ["p", "q"],
        "tune_params": {"p": values, "q": [0, 1]},
        "cache": {f"{v},{q}": {"p": v, "q": q, "time": 1.0} for v in values for q in (0, 1)},
    }
    path = tmp_path / "k.json"
    path.write_text(json.dumps(cache))
    return load_kernel_tuner_cache(path).space["p"]


@pytest.mark.parametrize(
    "values",
    [
        [1, 2, 4, 8, 16, 32],
        [32, 64, 96, 128, 256],
        [0.5, 0.25, 1.0],
        [-3, 5, 40],
        ["naive", "tiled", "vectorised"],
    ],
)
def test_t1_replay_and_insight_agree_on_the_same_value_list(values, tmp_path):
    t1 = _t1_parameter(values)
    replay = _replay_parameter(values, tmp_path)
    insight = infer_space([{"p": v} for v in values])["p"]
    assert t1 == replay == insight == parameter_for_values("p", values)
