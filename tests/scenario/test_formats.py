"""Telling the three formats apart."""

from __future__ import annotations

import pytest
from scenario_helpers import NATIVE, error_of

from bayestune.exceptions import ScenarioError
from bayestune.scenario import detect_format, load_scenario


def test_unknown_format_and_non_mapping(tmp_path):
    assert "unknown scenario format" in str(error_of({"tuning": {}}))
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(ScenarioError, match=r"list\.yaml: \$: a scenario must be an object"):
        load_scenario(tmp_path / "list.yaml")


def test_detect_format():
    assert detect_format(NATIVE) == "native"
    assert detect_format({"application_name": "a", "input_parameters": {}}) == "hypermapper"
    assert detect_format({"optimization_objectives": ["v"]}) == "hypermapper"
    assert detect_format({"General": {}, "ConfigurationSpace": {}}) == "t1"
    assert detect_format({"foo": 1}) is None and detect_format([1]) is None
