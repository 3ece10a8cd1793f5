"""Known constraints: every operator and function is checked against Python itself,
evaluated row by row on random data; hostile input must be refused with a clear message."""

from __future__ import annotations

import math
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayestune.exceptions import ConstraintError
from bayestune.space.constraints import MAX_EXPRESSION_LENGTH, Constraint, parse_constraints
from bayestune.space.parameters import Categorical, Integer, Ordinal, Parameter, Permutation, Real

# Evaluation must never warn (division by zero, string/number comparisons, ...).
pytestmark = pytest.mark.filterwarnings("error")


def _space() -> dict[str, Parameter]:
    params = [
        Integer("a", -6, 6),
        Integer("b", -6, 6),
        Integer("c", -6, 6),
        Real("x", 0.0, 20.0),
        Real("y", -5.0, 5.0),
        Ordinal("tile", [1, 2, 4, 8, 16, 32]),
        Categorical("layout", ["NCHW", "NHWC", "CHWN"]),
        Categorical("nc", [1, 2, 4]),
        Categorical("flag", [True, False]),
        Categorical("mixed", ["a", 1, 2.5]),
        Permutation("order", 4),
    ]
    return {p.name: p for p in params}


SPACE = _space()


def _sample(n: int, seed: int) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
    """Columns for the constraint and the same configurations as plain Python rows."""
    rng = np.random.default_rng(seed)
    raws = {name: p.sample(rng, n) for name, p in SPACE.items()}
    columns = {name: SPACE[name].columns(raw) for name, raw in raws.items()}
    values = {name: SPACE[name].values_from_raw(raw) for name, raw in raws.items()}
    rows = [{name: values[name][i] for name in SPACE} for i in range(n)]
    return columns, rows


# The oracle: plain Python semantics per row (test code evaluating fixed, trusted strings).
_ORACLE_FUNCTIONS = {
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
    "int": int,
    "float": float,
    "pow": pow,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "floor": math.floor,
    "ceil": math.ceil,
    "pos": lambda p, e: p[e],
    "at": lambda p, k: p.index(k % len(p)),
}


def _oracle(expression: str, row: dict[str, Any]) -> bool:
    """Python's verdict; any row where Python raises (or overflows) is infeasible."""
    try:
        value = eval(expression, {"__builtins__": {}, **_ORACLE_FUNCTIONS}, dict(row))  # noqa: S307
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return False
    if isinstance(value, complex):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return bool(value)


def _check_against_oracle(
    expression: str, columns: dict[str, np.ndarray], rows: list[dict[str, Any]], python_expression: str | None = None
) -> np.ndarray:
    got = Constraint(expression, SPACE).evaluate(columns)
    expected = np.array([_oracle(python_expression or expression, r) for r in rows])
    assert got.dtype == bool and got.shape == (len(rows),)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, f"{expression!r} differs from Python on {[rows[i] for i in bad[:3]]}"
    return got


COLUMNS, ROWS = _sample(400, seed=1)

OPERATOR_EXPRESSIONS = [
    # arithmetic
    "a + b > c",
    "a - b <= c",
    "a * b >= c",
    "a / b > 0.5",
    "a // b == c",
    "a % b == 0",
    "a % 3 == 1",
    "(x + 0.5) % 2 > 1",
    "y % 1.5 < 0.7",
    "y // 2 == -1",
    "b ** 2 < 10",
    "a ** b > 1",
    "x ** 0.5 > 3",
    "-a < +b",
    "-(a - b) == b - a",
    # comparisons, chained
    "a == b",
    "a != b",
    "a < b",
    "a <= b",
    "a > b",
    "a >= b",
    "a < b < c",
    "1 <= a < b <= 5",
    "a < b > c",
    "a == b == c",
    "x > y",
    # boolean logic with Python's value semantics and short-circuits
    "a > 0 and b > 0",
    "a > 0 or b > 0",
    "not a > 0",
    "not a",
    "a and b",
    "a or b",
    "(a or b) > 1",
    "(a and b) == 0",
    "a > 0 and b > 0 and c > 0",
    "a < 0 or b < 0 or c < 0",
    "b == 0 or a / b > 1",
    "b != 0 and a % b == 0",
    "a / b > 1 or True",
    "not (a / b > 1)",
    # conditional expression
    "(a / b if b != 0 else 0) > 1",
    "(a if a > b else b) == max(a, b)",
    "(1 if a > 0 else -1) * b > 0",
    # membership
    "a in (1, 2, -3)",
    "a not in [0, 4]",
    "a in ()",
    "a in (1.0, True)",
    "a + b in (0, 1)",
    # bitwise on integers, logical on conditions
    "a & b",
    "(a | b) > 2",
    "(a ^ b) < 0",
    "~a > 0",
    "a << 2 > 5",
    "a >> 1 == -1",
    "a << b > 4",
    "(a > 0) & (b > 0)",
    "(a > 0) | (b > 0)",
    "(a > 0) ^ (b > 0)",
    # functions
    "abs(a) > 2",
    "min(a, b) < 0",
    "max(a, b, c) >= 2",
    "min(x, y, a) > -2",
    "log2(x) > 1",
    "log(x) > 1",
    "log(x, 2) > 1.5",
    "log10(x) < 1",
    "log2(a) >= 1",
    "log(a, b) > 0",
    "sqrt(x) > 2",
    "sqrt(a) > 1",
    "exp(a) > 2",
    "exp(y) < 1",
    "floor(x) == 3",
    "ceil(x) == 4",
    "floor(y) < -1",
    "round(x) % 2 == 0",
    "round(x, 1) > 2.5",
    "int(x) == 2",
    "int(y) == -1",
    "float(a) / 2 > 1",
    "pow(a, 2) > 9",
    "pow(x, 0.5) < 2",
    # non-boolean results count by truthiness
    "a + b",
    "a - a",
    "x",
    "a / b",
    # numbers of other parameter types
    "tile * a >= 8",
    "tile in (4, 32)",
    "nc * 2 > 3",
    "nc in (1, 4)",
]


@pytest.mark.parametrize("expression", OPERATOR_EXPRESSIONS)
def test_operators_and_functions_match_python(expression: str) -> None:
    _check_against_oracle(expression, COLUMNS, ROWS)


@pytest.mark.parametrize(
    "expression",
    [
        "order[0] < order[1]",
        "order[-1] == 0",
        "order[3] > order[-4]",
        "pos(order, 2) == 3",
        "pos(order, -1) < 2",
        "at(order, 0) == 1",
        "at(order, -1) == 2",
        "at(order, 0) < at(order, 1) and order[2] != 0",
        "order[0] + order[1] == 3",
    ],
)
def test_permutation_indexing_matches_python(expression: str) -> None:
    _check_against_oracle(expression, COLUMNS, ROWS)


def test_permutation_convention_is_position_of_element() -> None:
    """BaCO: value[i] is the position of element i, so (1, 3, 2, 0) puts element 3 first."""
    columns = {"order": np.array([[1, 3, 2, 0]])}
    assert Constraint("order[3] == 0", SPACE).evaluate(columns).tolist() == [True]
    assert Constraint("pos(order, 0) == 1", SPACE).evaluate(columns).tolist() == [True]
    assert Constraint("at(order, 0) == 3 and at(order, 3) == 1", SPACE).evaluate(columns).tolist() == [True]


@pytest.mark.parametrize(
    "expression",
    [
        "layout == 'NHWC'",
        "'NHWC' == layout",
        'layout != "NCHW" and a > 0',
        "layout in ('NHWC', 'CHWN')",
        "layout not in ['NHWC']",
        "layout < 'NHWC'",
        "layout >= 'NCHW'",
        "layout == layout",
        "layout in ('NHWC', 3)",
        # text against numbers never crashes: never equal, and never ordered
        "layout == 3",
        "layout != 3",
        "layout < 3",
        "3 <= layout",
        "layout in (1, 2)",
        "flag",
        "not flag",
        "flag and a > 0",
        "flag == True",
        "flag + 1 > 1",
        "mixed == 1",
        "mixed == 'a'",
        "mixed != 2.5",
        "mixed in ('a', 2.5)",
        "mixed == a",
        "mixed != x",
    ],
)
def test_categorical_comparisons_match_python(expression: str) -> None:
    _check_against_oracle(expression, COLUMNS, ROWS)


def test_string_comparisons_do_select_rows() -> None:
    got = Constraint("layout == 'NHWC'", SPACE).evaluate(COLUMNS)
    assert got.any() and not got.all()
    np.testing.assert_array_equal(got, COLUMNS["layout"] == "NHWC")


@pytest.mark.parametrize(
    ("c_style", "python"),
    [
        ("a > 0 && b > 0", "a > 0 and b > 0"),
        ("a > 0 || !(b > 0)", "a > 0 or not (b > 0)"),
        ("!a", "not a"),
        ("!a == b", "(not a) == b"),
        ("!!a", "not not a"),
        ("! a && b", "(not a) and b"),
        ("!min(a, b) || c > 0", "(not min(a, b)) or c > 0"),
        ("!order[0] && a != b", "(not order[0]) and a != b"),
        ("!(a > 0 && b > 0)", "not (a > 0 and b > 0)"),
        ("!-a", "not -a"),
        ("layout == '!&&' || a > 0", "layout == '!&&' or a > 0"),
        ('layout != "||" &&\na > 0', "layout != '||' and a > 0"),
    ],
)
def test_c_style_operators(c_style: str, python: str) -> None:
    _check_against_oracle(c_style, COLUMNS, ROWS, python_expression=python)


def test_t1_and_kernel_tuner_style() -> None:
    params = {
        p.name: p
        for p in [
            Ordinal("block_size_x", [16, 32, 64, 128]),
            Ordinal("block_size_y", [1, 2, 4, 8, 16]),
            Ordinal("KWG", [16, 32]),
            Ordinal("KWI", [2, 8, 12]),
        ]
    }
    rng = np.random.default_rng(3)
    cols = {n: p.columns(p.sample(rng, 300)) for n, p in params.items()}
    got = Constraint("block_size_x*block_size_y<=1024", params).evaluate(cols)
    np.testing.assert_array_equal(got, cols["block_size_x"] * cols["block_size_y"] <= 1024)
    got = Constraint("KWG % KWI == 0", params).evaluate(cols)
    np.testing.assert_array_equal(got, np.mod(cols["KWG"], cols["KWI"]) == 0)
    got = Constraint("KWG%KWI==0 && block_size_x>=block_size_y", params).evaluate(cols)
    np.testing.assert_array_equal(
        got, (np.mod(cols["KWG"], cols["KWI"]) == 0) & (cols["block_size_x"] >= cols["block_size_y"])
    )


def test_division_by_zero_makes_the_row_infeasible_without_warnings() -> None:
    b_zero = COLUMNS["b"] == 0
    assert b_zero.any()
    for expression in (
        "a / b > -100",
        "a % b == 0",
        "a // b >= -100",
        "not (a / b > 1)",
        "a / b != 3",
        "(a / b) * 0 == 0",
        "-(a % b) <= 0",
    ):
        got = Constraint(expression, SPACE).evaluate(COLUMNS)
        assert not got[b_zero].any(), expression
    assert not Constraint("0 ** b > -1", SPACE).evaluate(COLUMNS)[COLUMNS["b"] < 0].any()
    # ... but Python's short-circuit still protects a guarded division.
    assert Constraint("b == 0 or a / b > 100", SPACE).evaluate(COLUMNS)[b_zero].all()
    assert Constraint("(a / b if b else 1) == 1", SPACE).evaluate(COLUMNS)[b_zero].all()


def test_invert_is_logical_not_on_conditions_and_bitwise_on_integers() -> None:
    a = COLUMNS["a"]
    np.testing.assert_array_equal(Constraint("~(a > 0)", SPACE).evaluate(COLUMNS), ~(a > 0))
    np.testing.assert_array_equal(Constraint("~a == -a - 1", SPACE).evaluate(COLUMNS), np.ones(len(a), bool))


def test_constant_and_non_boolean_results_broadcast() -> None:
    n = len(COLUMNS["a"])
    for expression, expected in [("True", True), ("1 > 2", False), ("3", True), ("0", False), ("'x' == 'x'", True)]:
        got = Constraint(expression, SPACE).evaluate(COLUMNS)
        assert got.dtype == bool and got.shape == (n,)
        assert (got == expected).all(), expression
    assert not Constraint("a - a", SPACE).evaluate(COLUMNS).any()


def test_interface_variables_repr_equality_and_pickle() -> None:
    c = Constraint("order[0] < a and min(a, 1) > 0", SPACE)
    assert c.variables == frozenset({"order", "a"})
    assert c.expression == "order[0] < a and min(a, 1) > 0"
    assert repr(c) == "Constraint('order[0] < a and min(a, 1) > 0')"
    assert c == Constraint("order[0] < a and min(a, 1) > 0", SPACE) and c != Constraint("a > 0", SPACE)
    assert len({c, Constraint("order[0] < a and min(a, 1) > 0", SPACE)}) == 1
    clone = pickle.loads(pickle.dumps(c))
    assert clone == c and clone.variables == c.variables
    np.testing.assert_array_equal(clone.evaluate(COLUMNS), c.evaluate(COLUMNS))
    parsed = parse_constraints(["a > 0", "layout == 'NHWC'"], SPACE)
    assert [p.expression for p in parsed] == ["a > 0", "layout == 'NHWC'"]
    with pytest.raises(ConstraintError, match="list of expressions"):
        parse_constraints("a > 0", SPACE)  # type: ignore[arg-type]


def test_evaluate_checks_its_columns() -> None:
    c = Constraint("a < b and order[0] == 1", SPACE)
    with pytest.raises(ConstraintError, match="'b'") as info:
        c.evaluate({"a": COLUMNS["a"], "order": COLUMNS["order"]})
    assert "a < b" in str(info.value)
    with pytest.raises(ConstraintError, match="shape"):
        c.evaluate({"a": COLUMNS["a"], "b": COLUMNS["b"][:-1], "order": COLUMNS["order"]})
    with pytest.raises(ConstraintError, match="shape"):
        c.evaluate({"a": COLUMNS["a"], "b": COLUMNS["b"], "order": COLUMNS["order"][:, :3]})
    with pytest.raises(ConstraintError, match="empty"):
        Constraint("True", SPACE).evaluate({})


def test_unknown_names_are_reported_with_the_known_ones() -> None:
    with pytest.raises(ConstraintError) as info:
        Constraint("aa < 1 and b > 0", SPACE)
    message = str(info.value)
    assert "'aa < 1 and b > 0'" in message and "'aa'" in message
    assert "'layout'" in message and "did you mean" in message
    with pytest.raises(ConstraintError, match="'pi'"):
        Constraint("pi > 3", SPACE)  # no math constants, only parameter names
    with pytest.raises(ConstraintError, match="must be called"):
        Constraint("min > 1", SPACE)


@pytest.mark.parametrize(
    ("expression", "token"),
    [
        ("__import__('os')", "__import__"),
        ("().__class__.__bases__", "__class__"),
        ("a.real", "a.real"),
        ("lambda: 1", "lambda"),
        ("(lambda: 1)()", "lambda"),
        ("[x for x in a]", "for x in a"),
        ("open('f')", "open"),
        ("eval('1')", "eval"),
        ("getattr(a, 'real')", "getattr"),
        ("__builtins__", "__builtins__"),
        ("min.__call__(a, b)", "__call__"),
        ("a[0]", "a[0]"),
        ("layout[0] == 'N'", "layout[0]"),
        ("order[a] > 0", "order[a]"),
        ("order[0:2]", "0:2"),
        ("order[4] > 0", "4"),
        ("at(order, -5) > 0", "-5"),
        ("pos(a, 0) > 0", "pos"),
        ("max(a, b=1)", "b=1"),
        ("max(*a)", "*a"),
        ("f'{a}' == 'x'", "f'{a}'"),
        ("{1: 2}", "{1: 2}"),
        ("{1, 2}", "{1, 2}"),
        ("a in {1, 2}", "{1, 2}"),
        ("a in (b, 1)", "b"),
        ("(y := 1)", "y := 1"),
        ("b'x' == a", "b'x'"),
        ("None", "None"),
        ("a is None", "is"),
        ("order + 1 > 0", "order"),
        ("layout + 'x' == 'y'", "layout"),
        ("mixed < 2", "mixed < 2"),
        ("min(a)", "min(a)"),
        ("round(x, a) > 1", "a"),
        ("a > 1; import os", ";"),
        ("import os", "import"),
        ("a = 1", "= 1"),
        ("a >", "end of the expression"),
        ("   ", "empty"),
    ],
)
def test_hostile_or_malformed_input_is_refused(expression: str, token: str) -> None:
    with pytest.raises(ConstraintError) as info:
        Constraint(expression, SPACE)
    message = str(info.value)
    assert repr(expression) in message
    assert token in message


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param("(" * 5000 + "a" + ")" * 5000, id="parens-5000"),  # beyond the length limit
        pytest.param("(" * 3000 + "a" + ")" * 3000, id="parens-3000"),  # the parser's nesting limit
        pytest.param("-" * 5000 + "a", id="minus-5000"),  # the parser's recursion limit
        pytest.param("!" * 5000 + "a", id="c-not-5000"),  # C `!` translation
        pytest.param("not " * 2000 + "a", id="not-2000"),  # parses, but too deep for us
        pytest.param("abs(" * 1500 + "a" + ")" * 1500, id="calls-1500"),
        pytest.param("a" + " + a" * 2400, id="sum-2400"),
        pytest.param("a < 1 and " * 900 + "a < 1", id="and-900"),  # flat, so it is fine: see below
    ],
)
def test_deep_nesting_is_refused_cleanly(expression: str) -> None:
    if expression.startswith("a < 1 and"):  # a long but flat expression is accepted
        assert Constraint(expression, SPACE).evaluate(COLUMNS).tolist() == (COLUMNS["a"] < 1).tolist()
        return
    with pytest.raises(ConstraintError) as info:
        Constraint(expression, SPACE)
    message = str(info.value)
    assert repr(expression[:40])[:-1] in message  # names (the start of) the expression
    assert len(message) < 1000


def test_overlong_expression_is_refused() -> None:
    expression = "a + " * 5000 + "a"
    assert len(expression) > MAX_EXPRESSION_LENGTH
    with pytest.raises(ConstraintError, match=str(MAX_EXPRESSION_LENGTH)) as info:
        Constraint(expression, SPACE)
    assert "'a + a + a" in str(info.value) and "20001 characters" in str(info.value)


def test_non_string_expression_is_refused() -> None:
    with pytest.raises(ConstraintError, match="string"):
        Constraint(42, SPACE)  # type: ignore[arg-type]


def test_a_million_rows_are_evaluated_vectorised() -> None:
    params = {
        p.name: p
        for p in [
            Integer("a", 1, 64),
            Integer("b", 1, 64),
            Permutation("order", 5),
            Categorical("layout", ["NCHW", "NHWC"]),
        ]
    }
    rng = np.random.default_rng(7)
    n = 1_000_000
    cols = {name: p.columns(p.sample(rng, n)) for name, p in params.items()}
    c = Constraint("a * b <= 512 and order[0] < order[1] and (layout != 'NCHW' || a % b == 0)", params)
    got = c.evaluate(cols)
    expected = (
        (cols["a"] * cols["b"] <= 512)
        & (cols["order"][:, 0] < cols["order"][:, 1])
        & ((cols["layout"] != "NCHW") | (np.mod(cols["a"], cols["b"]) == 0))
    )
    assert got.shape == (n,) and got.dtype == bool
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------------------------------
# Property test: random expressions over random integer columns, against Python per row
# ---------------------------------------------------------------------------------------
NAMES = ("a", "b", "c")
_leaf = st.one_of(st.sampled_from(NAMES), st.integers(-4, 6).map(str))


def _wrap(fmt: str) -> Any:
    return lambda parts: fmt.format(*parts)


def _integer_expressions(children: Any) -> Any:
    """Expressions that stay integers in Python (and small enough to be exact as floats)."""
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "//", "%", "&", "|", "^"]), children)
    return st.one_of(
        binary.map(_wrap("({0} {1} {2})")),
        binary.map(_wrap("({0} {1} {2})")),  # listed twice: binary operators are what we test most
        st.tuples(st.sampled_from(["-", "abs", "~"]), children).map(_wrap("{0}({1})")),
        st.tuples(st.sampled_from(["min", "max"]), children, children).map(_wrap("{0}({1}, {2})")),
        st.tuples(children, children, children).map(_wrap("max({0}, {1}, {2})")),
        st.tuples(_leaf, st.integers(0, 3)).map(_wrap("({0} ** {1})")),
        st.tuples(_leaf, st.sampled_from(["<<", ">>"]), st.integers(0, 3)).map(_wrap("({0} {1} {2})")),
    )


_integers = st.recursive(_leaf, _integer_expressions, max_leaves=6)
_comparison_ops = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
_simple_conditions = st.tuples(_integers, _comparison_ops, _integers).map(_wrap("({0} {1} {2})"))
_numbers = st.one_of(
    _integers,
    st.tuples(_integers, _integers).map(_wrap("({0} / {1})")),
    st.tuples(_integers, _simple_conditions, _integers).map(_wrap("({0} if {1} else {2})")),
)
_atoms = st.one_of(
    st.tuples(_numbers, _comparison_ops, _numbers).map(_wrap("({0} {1} {2})")),
    st.tuples(_numbers, _comparison_ops, _numbers, _comparison_ops, _numbers).map(_wrap("({0} {1} {2} {3} {4})")),
    st.tuples(_integers, st.sampled_from(["in", "not in"]), st.lists(st.integers(-6, 6), max_size=4)).map(
        lambda t: f"({t[0]} {t[1]} ({''.join(f'{v}, ' for v in t[2])}))"
    ),
)
_conditions = st.recursive(
    _atoms,
    lambda children: st.one_of(
        st.tuples(children, st.sampled_from(["and", "or", "&", "|", "^"]), children).map(_wrap("({0} {1} {2})")),
        children.map("(not {})".format),
        st.tuples(children, children, children).map(_wrap("({0} if {1} else {2})")),
    ),
    max_leaves=4,
)
_rows = st.lists(st.tuples(*(st.integers(-6, 6) for _ in NAMES)), min_size=1, max_size=30)


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(expression=st.one_of(_conditions, _numbers), rows=_rows)
def test_random_expressions_match_python(expression: str, rows: list[tuple[int, ...]]) -> None:
    params = {name: SPACE[name] for name in NAMES}
    columns = {name: np.array([r[i] for r in rows], dtype=float) for i, name in enumerate(NAMES)}
    got = Constraint(expression, params).evaluate(columns)
    expected = [_oracle(expression, dict(zip(NAMES, r))) for r in rows]
    assert got.tolist() == expected, expression
