"""The scenario reader under hostile input: self-referencing YAML, and fuzzed text of any shape,
always ends in a scenario or a :class:`ScenarioError`, never a hang or another exception."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayestune.exceptions import ScenarioError
from bayestune.scenario import load_scenario


@pytest.mark.parametrize("text", ["&a [*a]\n", "a: &a {b: *a}\n", "&a [1, [2, *a]]\n", "&a {k: [*a, *a]}\n"])
def test_a_self_referencing_yaml_document_is_refused(tmp_path, text):
    path = tmp_path / "cycle.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match="refers to a value that contains it"):
        load_scenario(path)


_YAML_BITS = st.sampled_from(
    [
        "&a ",
        "*a",
        "[",
        "]",
        "{",
        "}",
        ": ",
        ", ",
        "\n",
        "- ",
        "  ",
        "x",
        "1e3",
        "'",
        '"',
        "!!python/object ",
        "<<: ",
        "null",
        "name",
        "parameters",
        "objectives",
        "bounds",
        "type",
        "integer",
        "&b ",
        "*b",
        "\t",
        "#",
        "\r",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bits=st.lists(_YAML_BITS, max_size=40), suffix=st.sampled_from([".yaml", ".json", ".txt"]))
def test_fuzzed_scenario_text_gives_a_scenario_or_a_scenario_error(tmp_path, bits, suffix):
    path = tmp_path / f"s{suffix}"
    path.write_text("".join(bits))
    try:
        load_scenario(path)
    except ScenarioError:
        pass


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200))
def test_fuzzed_scenario_bytes_give_a_scenario_or_a_scenario_error(tmp_path, data):
    path = tmp_path / "s.yaml"
    path.write_bytes(data)
    try:
        load_scenario(path)
    except ScenarioError:
        pass


_KEYS = st.sampled_from(
    [
        "name",
        "parameters",
        "objectives",
        "budget",
        "blackbox",
        "type",
        "bounds",
        "values",
        "command",
        "n",
        "seed",
        "strategy",
        "constraints",
        "default",
        "journal",
        "x",
    ]
)
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["integer", "real", "categorical", "permutation", "ordinal", "echo {x}", "x > 1"]),
)
_JSON = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=5)),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=st.dictionaries(_KEYS, _JSON, max_size=8))
def test_fuzzed_scenario_documents_give_a_scenario_or_a_scenario_error(tmp_path, doc):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    try:
        load_scenario(path)
    except ScenarioError:
        pass
