"""Reading a space from its JSON description (the inverse of Space.to_spec)."""

from __future__ import annotations

import pytest

from bayestune.exceptions import ScenarioError
from bayestune.space import Space
from bayestune.space.spec import space_from_spec

PARAMETERS = [
    {"name": "tile_x", "type": "ordinal", "values": [1, 2, 4, 8, 16, 32], "log": True, "default": 8, "prior": "decay"},
    {"name": "tile_y", "type": "integer", "bounds": [1, 64], "log": True, "default": 4, "prior": [2.0, 3.0]},
    {"name": "alpha", "type": "real", "bounds": [0.001, 1.0], "log": True, "prior": {"alpha": 2, "beta": 2}},
    {"name": "mode", "type": "categorical", "values": ["a", "b", 3, True], "default": "b", "prior": [1, 2, 3, 4]},
    {"name": "order", "type": "permutation", "n": 4, "metric": "hamming", "default": [3, 2, 1, 0]},
]
CONSTRAINTS = ["tile_x * tile_y <= 256", "order[0] < order[1] or mode == 'a'"]


def test_space_from_spec():
    space = space_from_spec(PARAMETERS, CONSTRAINTS)
    assert isinstance(space, Space) and space.names == [p["name"] for p in PARAMETERS]
    again = space_from_spec(space.to_spec()["parameters"], space.to_spec()["constraints"])
    assert again.parameters == space.parameters
    mapped = space_from_spec({"a": {"type": "integer", "bounds": [0, 3]}}, ["a != 2"])
    assert mapped.names == ["a"] and mapped.count_feasible() == 3
    with pytest.raises(ScenarioError, match=r"\$\.parameters\.a\.bounds: `low < high` must hold, but got \[3, 0\]"):
        space_from_spec({"a": {"type": "integer", "bounds": [3, 0]}}, [])


def test_a_parameter_may_share_a_name_with_what_a_scenario_would_need():
    """No scenario is made up around the description: any parameter name is fine."""
    space = space_from_spec([{"name": "_", "type": "integer", "bounds": [0, 3]}])
    assert space.names == ["_"]


@pytest.mark.parametrize(
    "params, constraints, fragment",
    [
        ("nope", [], r"\$\.parameters: expected a list or an object of parameters"),
        ([3], [], r"\$\.parameters\[0\]: a parameter must be an object, but got 3"),
        ([{"name": "a", "type": "float", "bounds": [0, 1]}], [], r"\$\.parameters\[0\]\.type: must be one of"),
        ([{"name": "a", "type": "real"}], [], r"\$\.parameters\[0\]: missing required key 'bounds'"),
        (
            [{"type": "real", "bounds": [0, 1]}],
            [],
            r"\$\.parameters\[0\]\.name: a parameter name must be a Python identifier",
        ),
        (
            [{"name": "a", "type": "real", "bounds": [0, 1]}, {"name": "a", "type": "real", "bounds": [0, 1]}],
            [],
            r"\$\.parameters\[1\]\.name: parameter names must be unique",
        ),
        ({"a": {"name": "b", "type": "real", "bounds": [0, 1]}}, [], r"\$\.parameters\.a\.name: the name must match"),
        ([{"name": "a", "type": "real", "bounds": [0, 1]}], "a < 1", r"\$\.constraints: expected a list of expression"),
        (
            [{"name": "a", "type": "real", "bounds": [0, 1]}],
            ["a < 1", "b < 1"],
            r"\$\.constraints\[1\]: .*unknown name 'b'",
        ),
    ],
)
def test_errors_name_the_json_path(params, constraints, fragment):
    with pytest.raises(ScenarioError, match=r"^journal\.db: " + fragment):
        space_from_spec(params, constraints, source="journal.db")
