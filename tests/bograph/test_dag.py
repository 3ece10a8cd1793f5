"""The expert API and DAG helpers: formulas compiled safely, names checked, effective dimension."""

from __future__ import annotations

import numpy as np
import pytest

from bayestune.bograph.dag import Expert, Formula, effective_dimension, modelled_nodes, new_dag
from bayestune.exceptions import BayestuneError


def test_formula_is_compiled_and_evaluated_on_arrays():
    f = Formula("edp", "power * latency**2")
    assert f.inputs == ("latency", "power")
    out = f({"power": np.array([2.0, 3.0]), "latency": np.array([[1.0], [2.0]])})
    assert out.shape == (2, 2) and out[1, 0] == 8.0


def test_formula_refuses_what_is_not_arithmetic():
    with pytest.raises(BayestuneError, match="edp"):
        Formula("edp", "__import__('os')")
    with pytest.raises(BayestuneError, match="non-empty"):
        Formula("edp", "")


def test_expert_checks_names_and_contradictions():
    nodes = {"a": "parameter", "m": "metric", "y": "objective"}
    Expert.from_options(known_edges=[["a", "m"]]).check(nodes)
    with pytest.raises(BayestuneError, match=r"unknown node\(s\) \['q'\]"):
        Expert.from_options(known_edges=[["a", "q"]]).check(nodes)
    with pytest.raises(BayestuneError, match="both known and forbidden"):
        Expert.from_options(known_edges=[["a", "m"]], forbidden_edges=[["a", "m"]]).check(nodes)
    with pytest.raises(BayestuneError, match="pair"):
        Expert.from_options(known_edges=[["a", "m", "y"]])
    with pytest.raises(BayestuneError, match="a parameter is set"):
        Expert.from_options(formulas={"a": "m * 2"}).check(nodes)


def test_effective_dimension_is_the_largest_in_degree_on_the_way_to_the_target():
    roles = {"a": "parameter", "b": "parameter", "c": "parameter", "m": "metric", "z": "metric", "y": "objective"}
    g = new_dag(roles, [("a", "m"), ("b", "m"), ("c", "m"), ("m", "y"), ("a", "z"), ("b", "z"), ("c", "z")])
    assert modelled_nodes(g, "y") == ["m", "y"]
    assert effective_dimension(g, "y") == 3
    with pytest.raises(BayestuneError, match="role"):
        new_dag({"a": "knob"})
