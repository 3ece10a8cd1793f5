"""Conditions over named numeric variables, without a search space (output constraints)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from bayestune.exceptions import ConstraintError, ScenarioError
from bayestune.objectives import OutputConstraint
from bayestune.space.expressions import MAX_EXPRESSION_LENGTH, numeric_condition


def test_every_free_name_is_a_numeric_variable():
    c = numeric_condition("logic <= 100 && log(cycles) < 7")
    assert c.variables == {"logic", "cycles"}
    ok = c.evaluate({"logic": np.array([90.0, 101.0, 5.0]), "cycles": np.array([10.0, 10.0, 5000.0])})
    assert ok.tolist() == [True, False, False]


def test_same_row_semantics_as_known_constraints():
    c = numeric_condition("b == 0 or a / b > 2")
    ok = c.evaluate({"a": np.array([1.0, 5.0, 1.0]), "b": np.array([0.0, 2.0, 2.0])})
    assert ok.tolist() == [True, True, False]


def test_a_constant_condition_takes_the_row_count_from_any_column():
    assert numeric_condition("1 < 2").evaluate({"_": np.zeros(3)}).tolist() == [True] * 3


def test_a_condition_pickles_by_its_text():
    c = pickle.loads(pickle.dumps(numeric_condition("x * 2 < y")))
    assert c.evaluate({"x": np.array([1.0, 3.0]), "y": np.array([3.0, 3.0])}).tolist() == [True, False]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("__import__('os').system('true')", "only named functions"),
        ("__import__('os') == 1", "dunder"),
        ("x.__class__ < 1", "attribute access"),
        ("open('/etc/passwd') == 1", "function 'open' is not allowed"),
        ("[y for y in x] == 1", "comprehension"),
        ("(lambda: 1)() == 1", "lambda"),
        ("x[0] < 1", "only permutation parameters can be indexed"),
        ("x == 'text' + 1", "text can only be compared"),
        ("(x := 3) > 1", "assignment expression"),
        ("x <", "invalid syntax"),
        ("x in (1, 2) == 3", "container after `in` is not a value"),
        ("", "empty"),
        ("-" * 200 + "x < 1", "nested"),
        ("x < " + "1 + " * MAX_EXPRESSION_LENGTH + "1", "character limit"),
    ],
)
def test_hostile_input_is_rejected_when_read(text, fragment):
    with pytest.raises(ConstraintError, match=fragment):
        numeric_condition(text)
    with pytest.raises(ScenarioError, match=fragment if text else "non-empty"):
        OutputConstraint(text)


def test_a_membership_test_may_end_a_chain_or_be_parenthesised():
    x = {"x": np.array([0.0, 1.0, 2.0, 3.0])}
    assert numeric_condition("0 < x in (1, 3)").evaluate(x).tolist() == [False, True, False, True]
    assert numeric_condition("(x in (1, 2)) == 0").evaluate(x).tolist() == [True, False, False, True]


def test_output_constraint_names_its_outputs_and_checks_them():
    c = OutputConstraint("utilisation <= 100 and not (bram > 3)")
    assert c.outputs == ("bram", "utilisation")
    assert c.holds({"utilisation": 99.0, "bram": 3.0}) and not c.holds({"utilisation": 101.0, "bram": 1.0})
    with pytest.raises(KeyError, match="bram"):
        c.holds({"utilisation": 1.0})
    assert OutputConstraint("1 < 2").holds({})
