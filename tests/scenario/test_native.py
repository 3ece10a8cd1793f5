"""The native format: its JSON Schema, round trips through dicts, and errors naming the JSON path."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from scenario_helpers import DATA, NATIVE, T1_FILES, error_of, native

from bayestune.exceptions import ConstraintError, ScenarioError
from bayestune.scenario import load_scenario, load_schema, scenario_from_dict, scenario_to_dict
from bayestune.scenario.native import DESIGN_METHODS, NATIVE_KEYS
from bayestune.scenario.records import DEFAULT_STRATEGY, BlackBoxSpec, Scenario
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real, Space


def test_native_dict_round_trip():
    s1 = scenario_from_dict(native())
    d1 = scenario_to_dict(s1)
    s2 = scenario_from_dict(d1)
    assert scenario_to_dict(s2) == d1
    assert s2.space.parameters == s1.space.parameters
    assert [c.expression for c in s2.space.constraints] == NATIVE["constraints"]
    assert s2.objectives == s1.objectives and s2.objectives[1].direction == "maximize"
    assert (s2.budget, s2.design, s2.strategy, s2.seed, s2.journal, s2.feasible_output) == (
        40,
        s1.design,
        "random",
        3,
        "runs/blur.db",
        "valid",
    )
    assert s2.design.method == "maximin" and s2.design.size == 7 and not s2.design.include_default
    assert s2.blackbox == BlackBoxSpec("python", "bench.py:run", timeout=12.5, options={"x": 1})
    assert s2.strategy_options == {"note": [1, 2]}
    json.dumps(d1)  # JSON-ready


def test_native_types_and_values():
    s = scenario_from_dict(native())
    p = {q.name: q for q in s.space.parameters}
    assert isinstance(p["tile_x"], Ordinal) and p["tile_x"].log and p["tile_x"].default == 8
    assert isinstance(p["tile_y"], Integer) and (p["tile_y"].low, p["tile_y"].high) == (1, 64)
    assert isinstance(p["alpha"], Real) and p["alpha"].prior.alpha == 2
    assert isinstance(p["mode"], Categorical) and p["mode"].values == ["a", "b", 3, True]
    assert isinstance(p["order"], Permutation) and p["order"].metric == "hamming"
    assert p["order"].default == (3, 2, 1, 0)


def test_native_minimal_uses_defaults():
    s = scenario_from_dict({"parameters": [{"name": "x", "type": "real", "bounds": [0, 1]}], "objectives": ["y"]})
    assert s.name == "scenario" and s.budget == 50 and s.strategy == DEFAULT_STRATEGY
    assert s.blackbox is None and s.seed is None and s.journal is None and s.space.constraints == []
    assert s.design.method == "cot" and s.design.size == 10 and s.design.include_default
    back = scenario_to_dict(s)
    assert scenario_to_dict(scenario_from_dict(back)) == back


def test_parameters_as_mapping_equal_list():
    listed = scenario_from_dict(native())
    mapping = native(parameters={p["name"]: {k: v for k, v in p.items() if k != "name"} for p in NATIVE["parameters"]})
    assert scenario_to_dict(scenario_from_dict(mapping)) == scenario_to_dict(listed)


@pytest.mark.parametrize("name", ["native_full.json", "native_full.yaml"])
def test_native_fixture_files(name):
    s = load_scenario(DATA / name)
    assert s.source == str(DATA / name)
    assert s.name == "blur_tiling" and len(s.space) == 5 and s.budget == 60
    assert s.journal == "runs/blur.db"  # kept as written: relative to the file's directory
    assert s.blackbox.kind == "command" and s.blackbox.workdir == "build" and s.blackbox.timeout == 30
    assert s.space["order"].metric == "kendall"


def test_json_and_yaml_fixtures_agree():
    assert scenario_to_dict(load_scenario(DATA / "native_full.json")) == scenario_to_dict(
        load_scenario(DATA / "native_full.yaml")
    )


def test_python_built_scenario_round_trips():
    space = Space([Integer("n", 1, 8), Permutation("p", 3, default=(2, 0, 1))], ["p[0] != n"])
    s = Scenario("py", space, blackbox=BlackBoxSpec("command", "run {n}"))
    d = scenario_to_dict(s)
    assert d["parameters"][1]["default"] == [2, 0, 1]
    assert scenario_to_dict(scenario_from_dict(d)) == d


def test_schema_is_valid_and_matches_the_loader():
    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(NATIVE_KEYS)
    assert schema["$defs"]["initial_design"]["properties"]["method"]["enum"] == list(DESIGN_METHODS)
    validator = Draft202012Validator(schema)
    assert not list(validator.iter_errors(NATIVE))
    assert not list(validator.iter_errors(json.loads((DATA / "native_full.json").read_text())))
    assert not list(validator.iter_errors(scenario_to_dict(scenario_from_dict(native()))))


def test_written_scenarios_validate_against_the_schema():
    validator = Draft202012Validator(load_schema())
    for path in [DATA / "hypermapper_branin4.json", DATA / "baco_taco_sddmm.json", *T1_FILES]:
        assert not list(validator.iter_errors(scenario_to_dict(load_scenario(path)))), path


def test_bad_bounds_message_names_file_path_rule_and_value():
    with pytest.raises(ScenarioError) as info:
        load_scenario(DATA / "broken_bounds.json")
    assert (
        str(info.value)
        == f"{DATA / 'broken_bounds.json'}: $.parameters[1].bounds: `low < high` must hold, but got [5, 2]"
    )


def test_unknown_key_lists_allowed_keys():
    msg = str(error_of(native(budgett=3)))
    assert msg.startswith("x.json: $: unknown key 'budgett' (did you mean 'budget'?); allowed keys: [")
    for key in ("budget", "objectives", "parameters", "initial_design"):
        assert repr(key) in msg
    msg = str(error_of(native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1], "values": [1]}])))
    assert (
        "$.parameters[0]: unknown key 'values'; allowed keys: ['bounds', 'default', 'log', 'name', 'prior', 'sampling', 'type']"
        in msg
    )


@pytest.mark.parametrize(
    "data, path, fragment",
    [
        (
            native(parameters=[{"name": "x", "type": "float", "bounds": [0, 1]}]),
            "$.parameters[0].type",
            'must be one of ["real", "integer", "ordinal", "categorical", "permutation", "perfect_tile"], but got "float"',
        ),
        (
            native(parameters=[{"name": "x", "type": "integer", "bounds": [4, 4]}]),
            "$.parameters[0].bounds",
            "`low < high` must hold, but got [4, 4]",
        ),
        (
            native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1], "log": True}]),
            "$.parameters[0].bounds",
            "a log-scale parameter needs `low > 0`",
        ),
        (
            native(parameters=[{"name": "x", "type": "integer", "bounds": [0, 1.5]}]),
            "$.parameters[0].bounds[1]",
            "expected an integer, but got 1.5",
        ),
        (
            native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1, 2]}]),
            "$.parameters[0].bounds",
            "must have at most 2 item(s)",
        ),
        (
            native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1], "prior": "gausian"}]),
            "$.parameters[0].prior",
            'but got "gausian"',
        ),
        (
            native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1], "prior": [0, 2]}]),
            "$.parameters[0].prior",
            "but got [0, 2]",
        ),
        (
            native(parameters=[{"name": "c", "type": "categorical", "values": ["a", "b"], "prior": [1]}]),
            "$.parameters[0].prior",
            "a list of 2 probabilities",
        ),
        (
            native(parameters=[{"name": "x", "type": "ordinal", "values": [1, 4, 2]}]),
            "$.parameters[0].values",
            "strictly increasing",
        ),
        (
            native(parameters=[{"name": "x", "type": "ordinal", "values": [1, 2, 4], "default": 3}]),
            "$.parameters[0].default",
            "value must be one of [1, 2, 4], but got 3",
        ),
        (
            native(parameters=[{"name": "p", "type": "permutation", "n": 3, "default": [0, 0, 1]}]),
            "$.parameters[0].default",
            "expected a permutation of 0..2",
        ),
        (
            native(parameters=[{"name": "p", "type": "permutation", "n": 3, "metric": "ulam"}]),
            "$.parameters[0].metric",
            'but got "ulam"',
        ),
        (
            native(parameters=[{"name": "tile-x", "type": "real", "bounds": [0, 1]}]),
            "$.parameters[0].name",
            "Python identifier",
        ),
        (
            native(parameters={"tile-x": {"type": "real", "bounds": [0, 1]}}),
            '$.parameters["tile-x"]',
            "a parameter name must be a Python identifier",
        ),
        (
            native(parameters={"a": {"name": "b", "type": "real", "bounds": [0, 1]}}),
            "$.parameters.a.name",
            "must match the key 'a'",
        ),
        (
            native(
                parameters=[
                    {"name": "x", "type": "real", "bounds": [0, 1]},
                    {"name": "x", "type": "integer", "bounds": [0, 3]},
                ]
            ),
            "$.parameters[1].name",
            "parameter names must be unique, but 'x' also names $.parameters[0]",
        ),
        (native(parameters=[]), "$.parameters", "must have at least 1 item(s)"),
        ({k: v for k, v in NATIVE.items() if k != "objectives"}, "$", "missing required key 'objectives'"),
        (native(objectives=[]), "$.objectives", "must have at least 1 item(s), but got []"),
        (
            native(objectives=["t", {"name": "t", "direction": "maximize"}]),
            "$.objectives[1]",
            "objective names must be unique, but 't' also appears at $.objectives[0]",
        ),
        (native(objectives=["tile_x"]), "$.objectives[0]", "has the name of a parameter"),
        (
            native(objectives=[{"name": "t", "direction": "up"}]),
            "$.objectives[0]",
            'but got {"name": "t", "direction": "up"}',
        ),
        (native(budget=0), "$.budget", "`value >= 1` must hold, but got 0"),
        (native(budget=2.5), "$.budget", "expected an integer or null, but got 2.5"),
        (native(initial_design={"method": "sobol"}), "$.initial_design.method", 'but got "sobol"'),
        (native(seed=-1), "$.seed", "`value >= 0` must hold"),
        (native(feasible_output="time"), "$.feasible_output", "must not be an objective"),
        (
            native(blackbox={"timeout": 3}),
            "$.blackbox",
            "exactly one of ['python', 'command', 'external', 'replay', 'table'] must be given, but got none",
        ),
        (native(blackbox={"python": "m:f", "command": "run"}), "$.blackbox", "but got ['python', 'command']"),
        (native(blackbox={"python": "bench.run"}), "$.blackbox.python", 'expected "module:function"'),
        (
            native(blackbox={"shell": "run"}),
            "$.blackbox",
            "unknown key 'shell'; allowed keys: ['build', 'command', 'external', 'options', 'python', 'replay', 'table', 'timeout', 'workdir']",
        ),
        (native(blackbox={"command": "run", "timeout": 0}), "$.blackbox.timeout", "`value > 0` must hold, but got 0"),
        (native(blackbox="run.sh"), "$.blackbox", 'expected an object or null, but got "run.sh"'),
    ],
)
def test_native_errors(data, path, fragment):
    msg = str(error_of(data))
    assert msg.startswith(f"x.json: {path}: "), msg
    assert fragment in msg, msg


def test_bad_constraint_is_wrapped_with_its_path():
    with pytest.raises(ScenarioError) as info:
        load_scenario(DATA / "broken_constraint.yaml")
    assert str(info.value).startswith(f"{DATA / 'broken_constraint.yaml'}: $.constraints[1]: ")
    assert "unknown name 'c'" in str(info.value)
    assert isinstance(info.value.__cause__, ConstraintError)
    err = error_of(native(constraints=["tile_x <= 8", "tile_x +* 2"]))
    assert str(err).startswith("x.json: $.constraints[1]: ") and isinstance(err.__cause__, ConstraintError)


def test_documented_native_example_loads(tmp_path):
    """The full example of docs/scenario.md stays a valid scenario."""
    doc = (Path(__file__).parents[2] / "docs" / "scenario.md").read_text()
    section = doc[doc.index("## Native format") :]
    example = section[section.index("```yaml") + len("```yaml") :]
    example = example[: example.index("```")]
    (tmp_path / "example.yaml").write_text(example)
    s = load_scenario(tmp_path / "example.yaml")
    assert s.name == "blur_tiling" and len(s.space) == 5 and len(s.space.constraints) == 2
    assert scenario_to_dict(s)["parameters"] == scenario_to_dict(load_scenario(DATA / "native_full.yaml"))["parameters"]


def test_python_shaped_input_is_accepted():
    data = native(
        parameters=[
            {"name": "n", "type": "integer", "bounds": (np.int64(1), np.int64(8))},
            {"name": "v", "type": "ordinal", "values": np.array([1.0, 2.0, 4.0])},
        ],
        constraints=("n * v <= 16",),
    )
    s = scenario_from_dict(data)
    assert (s.space["n"].low, s.space["n"].high) == (1, 8) and s.space["v"].values == [1.0, 2.0, 4.0]
    json.dumps(scenario_to_dict(s))


def test_every_problem_at_once_and_a_did_you_mean_for_keys_strategies_and_options(tmp_path):
    """Issue 42: scenario errors came one at a time, and misspelt names got no suggestion."""
    from bayestune.exceptions import BayestuneError
    from bayestune.strategies.base import make_strategy

    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "name": "s",
                "parameters": [{"name": "t", "type": "ordinal", "values": [1, 2]}],
                "objectivs": ["t"],
                "budgt": 5,
            }
        )
    )
    with pytest.raises(BayestuneError) as info:
        load_scenario(path)
    message = str(info.value)
    assert "'budgt' (did you mean 'budget'?)" in message and "'objectivs' (did you mean 'objectives'?)" in message
    assert "; also $: missing required key 'objectives'" in message and "\n" not in message
    space = Space([Ordinal("t", [1, 2])])
    with pytest.raises(BayestuneError, match=r"unknown strategy 'bbo' \(did you mean 'bo'\?\)"):
        make_strategy("bbo", space, [], np.random.default_rng(0))
    with pytest.raises(BayestuneError, match=r"\['kapa'\] for strategy 'bo' \(did you mean 'kappa'\?\)"):
        make_strategy("bo", space, [], np.random.default_rng(0), {"kapa": 2})
