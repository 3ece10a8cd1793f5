"""Scenario files: JSON/YAML parsing, duplicate keys, relative paths on save, atomic writes."""

from __future__ import annotations

import json
import os

import pytest
from scenario_helpers import DATA, native

from bayestune.exceptions import ScenarioError
from bayestune.scenario import load_scenario, save_scenario, scenario_from_dict, scenario_to_dict
from bayestune.space import Real


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_file_round_trip(tmp_path, suffix):
    s1 = load_scenario(DATA / "native_full.json")
    out = tmp_path / f"copy{suffix}"
    save_scenario(s1, out)
    s2 = load_scenario(out)
    d1, d2 = scenario_to_dict(s1), scenario_to_dict(s2)
    # Relative paths were rebased so that they still name the same files.
    for key_path in (("journal",), ("blackbox", "workdir")):
        a, b = d1, d2
        for k in key_path:
            a, b = a[k], b[k]
        assert os.path.normpath(tmp_path / b) == os.path.normpath(DATA / a)
        assert not os.path.isabs(b)
    d1.pop("journal"), d2.pop("journal"), d1["blackbox"].pop("workdir"), d2["blackbox"].pop("workdir")
    assert d1 == d2
    if suffix == ".json":
        json.loads(out.read_text())


def test_save_in_same_directory_keeps_paths(tmp_path):
    src = tmp_path / "a.json"
    src.write_text(json.dumps(native()))
    save_scenario(load_scenario(src), tmp_path / "b.yaml")
    again = load_scenario(tmp_path / "b.yaml")
    assert again.journal == "runs/blur.db" and again.blackbox.target == "bench.py:run"


def test_save_rebases_python_file_target(tmp_path):
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    (src_dir / "s.json").write_text(json.dumps(native()))
    save_scenario(load_scenario(src_dir / "s.json"), tmp_path / "out.json")
    out = load_scenario(tmp_path / "out.json")
    assert out.blackbox.target == "src/bench.py:run" and out.journal == "src/runs/blur.db"


def test_yaml_exponent_floats(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("parameters:\n  lr: {type: real, bounds: [1e-5, 1e-1], log: true}\nobjectives: [loss]\n")
    p = load_scenario(f).space["lr"]
    assert (p.low, p.high) == (1e-5, 1e-1)


def test_invalid_json_reports_line_and_column():
    with pytest.raises(ScenarioError, match=r"broken_syntax\.json: invalid JSON at line 5, column 3"):
        load_scenario(DATA / "broken_syntax.json")


def test_invalid_yaml_reports_line_and_column():
    with pytest.raises(ScenarioError, match=r"broken_syntax\.yaml: invalid YAML at line 4, column 1"):
        load_scenario(DATA / "broken_syntax.yaml")


def test_empty_and_unreadable_files(tmp_path):
    with pytest.raises(ScenarioError, match="empty"):
        load_scenario(DATA / "empty.yaml")
    (tmp_path / "blank.json").write_text("  \n")
    with pytest.raises(ScenarioError, match=r"blank\.json: the file is empty"):
        load_scenario(tmp_path / "blank.json")
    with pytest.raises(ScenarioError, match=r"missing\.json: cannot read the scenario file: no such file"):
        load_scenario(tmp_path / "missing.json")
    with pytest.raises(ScenarioError, match="it is a directory"):
        load_scenario(tmp_path)
    (tmp_path / "latin1.json").write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_scenario(tmp_path / "latin1.json")


def test_duplicate_json_keys_keep_the_last_value_with_a_warning(tmp_path, caplog):
    # As Python's json, HyperMapper and BaCO read it: the second budget wins.
    (tmp_path / "d.json").write_text(
        '{"application_name": "a", "optimization_objectives": ["t"], "optimization_iterations": 8,'
        ' "input_parameters": {"x": {"parameter_type": "integer", "values": [0, 3]},'
        ' "x": {"parameter_type": "real", "values": [0, 1]}}, "optimization_iterations": 20}'
    )
    with caplog.at_level("WARNING", logger="bayestune.scenario"):
        s = load_scenario(tmp_path / "d.json")
    assert s.budget == 10 + 20 and isinstance(s.space["x"], Real)
    assert "duplicate key 'optimization_iterations'" in caplog.text and "duplicate key 'x'" in caplog.text


def test_duplicate_yaml_keys_are_errors(tmp_path):
    (tmp_path / "d.yaml").write_text(
        "parameters:\n  a: {type: real, bounds: [0, 1]}\n  a: {type: integer, bounds: [0, 3]}\nobjectives: [t]\n"
    )
    with pytest.raises(ScenarioError, match=r"invalid YAML at line 3, column 3: found duplicate key 'a'"):
        load_scenario(tmp_path / "d.yaml")


def test_save_into_missing_directory_fails_clearly(tmp_path):
    s = scenario_from_dict(native())
    with pytest.raises(ScenarioError, match="cannot write the scenario file"):
        save_scenario(s, tmp_path / "nope" / "s.json")


# ---- inputs without limits get a clear error -----------------------------------------------------
def test_a_yaml_alias_bomb_is_refused_before_it_is_built(tmp_path):
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ScenarioError, match="expands to more than 1,000,000 values"):
        load_scenario(path)


@pytest.mark.parametrize(
    "suffix, text",
    [(".json", "[" * 5000 + "]" * 5000), (".json", "[" * 100 + "]" * 100), (".yaml", "[" * 5000 + "]" * 5000)],
)
def test_deeply_nested_files_are_refused_by_name(tmp_path, suffix, text):
    path = tmp_path / f"deep{suffix}"
    path.write_text(text)
    with pytest.raises(ScenarioError, match="nested more than 64 levels deep"):
        load_scenario(path)


def test_a_t1_value_list_that_builds_too_many_values_is_refused(tmp_path):
    path = tmp_path / "t1.json"
    path.write_text(
        json.dumps(
            {
                "General": {"BenchmarkName": "t"},
                "ConfigurationSpace": {
                    "TuningParameters": [
                        {"Name": "x", "Type": "int", "Values": "sum([[1]*999999 for i in range(500)], [])"}
                    ],
                    "Conditions": [],
                },
            }
        )
    )
    with pytest.raises(ScenarioError, match="more than 1,000,000 values"):
        load_scenario(path)
