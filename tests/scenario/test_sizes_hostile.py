"""Sizes a scenario may state: refused in one line where they would crash or exhaust the machine,
handled exactly where they are merely large (issue 41, round four, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bayestune.exceptions import BayestuneError, ScenarioError
from bayestune.scenario import load_scenario, scenario_from_dict

BASE = {"name": "s", "objectives": ["t"], "budget": 3}


def test_integer_bounds_in_float_notation_are_held_to_int64() -> None:
    with pytest.raises(ScenarioError, match=r"integer bounds must lie in \[-2\*\*63, 2\*\*63 - 1\].*high=1e\+19"):
        scenario_from_dict({**BASE, "parameters": [{"name": "x", "type": "integer", "bounds": [0, 1e19]}]})
    ok = scenario_from_dict({**BASE, "parameters": [{"name": "x", "type": "integer", "bounds": [0, 1e6]}]})
    assert ok.space["x"].high == 1_000_000


def test_a_space_of_more_than_2_to_the_1024_configurations_is_counted_exactly() -> None:
    flags = [{"name": f"f{i}", "type": "categorical", "values": ["on", "off"]} for i in range(1025)]
    scenario = scenario_from_dict({**BASE, "parameters": flags})
    assert scenario.space.count_feasible() == 2**1025


def test_an_initial_design_beyond_any_run_is_refused() -> None:
    with pytest.raises(BayestuneError, match=r"\$\.initial_design\.size: initial design size must be an integer"):
        scenario_from_dict(
            {
                **BASE,
                "parameters": [{"name": "x", "type": "integer", "bounds": [0, 9]}],
                "initial_design": {"size": 10**11},
            }
        )


def test_yaml_aliases_of_a_long_string_and_huge_integers_are_refused(tmp_path: Path) -> None:
    long = "x" * 1_000_000
    aliases = ", ".join(["*a"] * 60)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(f"name: &a {long}\nlist: [{aliases}]\n")
    with pytest.raises(ScenarioError, match="expands to more than 50,000,000 characters"):
        load_scenario(bomb)
    digits = tmp_path / "digits.yaml"
    digits.write_text("name: d\nparameters:\n  - {name: x, type: integer, bounds: [0, " + "9" * 5000 + "]}\n")
    with pytest.raises(ScenarioError, match="invalid YAML: Exceeds the limit"):
        load_scenario(digits)
