"""T1 search spaces: value-list expressions, the log rule, conditions."""

from __future__ import annotations

import json

import pytest
from scenario_helpers import T1_DIR, T1_FILES, error_of

from bayestune.scenario import detect_format, load_scenario, scenario_from_dict, scenario_to_dict
from bayestune.space import Categorical, Ordinal
from bayestune.space.inference import log_scale_suits


def test_all_t1_files_are_present():
    assert len(T1_FILES) == 5, "expected the five T1 files in tests/data/t1"


@pytest.mark.parametrize("path", T1_FILES, ids=lambda p: p.stem)
def test_t1_files_build_spaces(path):
    raw = json.loads(path.read_text())
    s = load_scenario(path)
    tps = raw["ConfigurationSpace"]["TuningParameters"]
    assert detect_format(raw) == "t1"
    assert s.name == raw["General"]["BenchmarkName"]
    assert s.space.names == [tp["Name"] for tp in tps]
    assert s.objective_names == ["time"] and s.objectives[0].minimize and s.blackbox is None
    assert [c.expression for c in s.space.constraints] == [
        c["Expression"] for c in raw["ConfigurationSpace"]["Conditions"]
    ]
    for p, tp in zip(s.space.parameters, tps):
        assert isinstance(p, Ordinal)  # every T1 parameter here is a numeric list
        assert p.values == sorted(p.values)
        assert p.log == log_scale_suits(p.values)
        default = tp["Default"][0] if isinstance(tp["Default"], list) else tp["Default"]
        assert p.default == default
    back = scenario_to_dict(s)
    assert scenario_to_dict(scenario_from_dict(back)) == back


def test_t1_value_expressions_and_log_rule():
    s = load_scenario(T1_DIR / "pnpoly.json")
    # evenly spaced in linear terms: a linear scale
    assert s.space["block_size_x"].values == [32 * i for i in range(1, 32)] and not s.space["block_size_x"].log
    assert s.space["tile_size"].values == [1] + [2 * i for i in range(1, 11)] and not s.space["tile_size"].log
    assert s.space["between_method"].values == [0, 1, 2, 3] and not s.space["between_method"].log
    gemm = load_scenario(T1_DIR / "gemm_milo.json")
    assert gemm.space["GEMMK"].values == [0] and gemm.space["GEMMK"].default == 0  # constant, list default
    assert gemm.space["MWG"].values == [16, 32, 64, 128] and gemm.space["MWG"].log  # powers of two: a log scale


def test_t1_constraints_match_the_kernel_restrictions():
    """The T1 restrictions of convolution_milo admit exactly the 4362 configurations of its
    Kernel Tuner cache (README of the data set); a small space, cheap to count."""
    s = load_scenario(T1_DIR / "convolution_milo.json")
    assert s.space.count_feasible() == 4362


def test_t1_strings_floats_and_unsorted_values():
    s = scenario_from_dict(
        {
            "General": {"BenchmarkName": "k"},
            "ConfigurationSpace": {
                "TuningParameters": [
                    {"Name": "algo", "Type": "string", "Values": "['naive', 'tiled']", "Default": "tiled"},
                    {"Name": "f", "Type": "float", "Values": "[0.5, 0.25, 1.0]", "Default": [0.5]},
                    {"Name": "b", "Type": "int", "Values": [256, 1, 16], "Default": 16},
                ],
                "Conditions": ["algo == 'tiled' or b <= 16"],
            },
        }
    )
    algo, f, b = s.space.parameters
    assert isinstance(algo, Categorical) and algo.values == ["naive", "tiled"] and algo.default == "tiled"
    assert f.values == [0.25, 0.5, 1.0] and f.log and f.default == 0.5
    assert b.values == [1, 16, 256] and b.log


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "[open('/etc/passwd')]",
        "[x.real for x in [1]]",
        "[i for i in range(10 ** 9)]",
        "'a' * 10 ** 9",
        "[1, 2",
    ],
)
def test_t1_values_are_never_evaluated_unsafely(text):
    err = error_of(
        {"ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Type": "int", "Values": text}]}}, source="t1.json"
    )
    assert "t1.json: $.ConfigurationSpace.TuningParameters[0].Values: cannot read a list of values" in str(err)


@pytest.mark.parametrize(
    "tps, conds, path, fragment",
    [
        (
            [{"Name": "a", "Type": "int", "Values": "[1, 2.5]"}],
            [],
            "$.ConfigurationSpace.TuningParameters[0].Values",
            "not an integer",
        ),
        (
            [{"Name": "a", "Type": "complex", "Values": "[1]"}],
            [],
            "$.ConfigurationSpace.TuningParameters[0].Type",
            'but got "complex"',
        ),
        (
            [{"Name": "a", "Type": "int", "Values": "[1, 2]", "Default": 3}],
            [],
            "$.ConfigurationSpace.TuningParameters[0].Default",
            "but got 3",
        ),
        (
            [{"Name": "a", "Type": "int", "Values": "[1, 2, 2]"}],
            [],
            "$.ConfigurationSpace.TuningParameters[0].Values",
            "distinct",
        ),
        (
            [{"Name": "a", "Type": "int", "Values": "[]"}],
            [],
            "$.ConfigurationSpace.TuningParameters[0].Values",
            "at least one value",
        ),
        (
            [{"Name": "a", "Values": "[1]"}, {"Name": "a", "Values": "[2]"}],
            [],
            "$.ConfigurationSpace.TuningParameters[1].Name",
            "unique",
        ),
        (
            [{"Type": "int", "Values": "[1]"}],
            [],
            "$.ConfigurationSpace.TuningParameters[0]",
            "missing required key 'Name'",
        ),
        (
            [{"Name": "a", "Values": "[1, 2]"}],
            [{"Expression": "a < b", "Parameters": ["a"]}],
            "$.ConfigurationSpace.Conditions[0].Expression",
            "unknown name 'b'",
        ),
        (
            [{"Name": "a", "Values": "[1, 2]"}],
            [{"Expression": "a < 2", "Parameters": ["b"]}],
            "$.ConfigurationSpace.Conditions[0].Parameters[0]",
            'unknown parameter "b"',
        ),
        (
            [{"Name": "a", "Values": "[1, 2]"}],
            [{"Parameters": ["a"]}],
            "$.ConfigurationSpace.Conditions[0]",
            "Expression",
        ),
        ([], [], "$.ConfigurationSpace.TuningParameters", "non-empty list"),
    ],
)
def test_t1_errors(tps, conds, path, fragment):
    data = {"General": {"BenchmarkName": "k"}, "ConfigurationSpace": {"TuningParameters": tps, "Conditions": conds}}
    msg = str(error_of(data, source="t1.json"))
    assert msg.startswith(f"t1.json: {path}: "), msg
    assert fragment in msg, msg
