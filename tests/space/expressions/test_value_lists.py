"""The T1 value-list interpreter: plain Python lists, evaluated without eval and within limits."""

from __future__ import annotations

import pytest

from bayestune.space.expressions import MAX_EXPRESSION_LENGTH, MAX_NESTING_DEPTH
from bayestune.space.expressions.value_lists import T1_MAX_VALUES, evaluate_value_list


@pytest.mark.parametrize(
    "text, values",
    [
        ("[32 * i for i in range(1, 5)]", [32, 64, 96, 128]),
        ("[1] + [2 * i for i in range(1, 4)]", [1, 2, 4, 6]),
        ("[2 ** k for k in range(4) if k != 2]", [1, 2, 8]),
        ("['a', 'b'] * 2", ["a", "b", "a", "b"]),
        ("list(range(3))", [0, 1, 2]),
        ("sorted([3, 1, 2])", [1, 2, 3]),
        ("[x for x in [1, 2, 3] if x % 2 == 1 and x > 1]", [3]),
        ("[1 if True else 2, -3, 4.5]", [1, -3, 4.5]),
    ],
)
def test_value_lists(text, values):
    assert evaluate_value_list(text) == values


@pytest.mark.parametrize(
    "text, error",
    [
        ("__import__('os').system('true')", ValueError),
        ("[open('/etc/passwd')]", ValueError),
        ("[x.real for x in [1]]", ValueError),
        ("[i for i in range(10 ** 9)]", ValueError),
        ("'a' * 10 ** 9", ValueError),
        ("[0] * (T1 + 1)".replace("T1", str(T1_MAX_VALUES)), ValueError),
        ("2 ** 1000", ValueError),
        ("[1, 2", SyntaxError),
        ("3", ValueError),
        ("[" * (MAX_NESTING_DEPTH + 5) + "1" + "]" * (MAX_NESTING_DEPTH + 5), ValueError),
        ("[" + "1, " * MAX_EXPRESSION_LENGTH + "1]", ValueError),
        ("[" * 100_000, ValueError),
    ],
)
def test_anything_else_is_refused(text, error):
    with pytest.raises(error):
        evaluate_value_list(text)
