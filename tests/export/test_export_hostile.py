"""Exports escape by construction: whatever the names and values (objective names, parameter
names, ``--key`` fields, journal paths), the C header has no text outside string literals and
sanitised comments, and the Python module holds only the expected literal assignments."""

from __future__ import annotations

import ast
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayestune.exceptions import BayestuneError
from bayestune.export import render
from bayestune.export.c_names import c_comment
from bayestune.export.table import Entry, TunedTable
from bayestune.objectives import Objective
from tests.export.test_c_header import CC, compile_and_run, needs_cc

HOSTILE = "t*\\\r/\r#define Q 1\r/*"
_NAMES = st.text(st.sampled_from("*/\\\r\n?#\"'`${}()x_1 \u2028\x00é"), min_size=1, max_size=12)


def _table(objective: str, parameter: str, key_field: str, source: str, value) -> TunedTable:
    config = {parameter: value}
    key = {key_field: "A100"} if key_field else {}
    entries = (Entry(key, 1, 1, config, {objective: 1.5}),)
    return TunedTable((Objective(objective),), (parameter,), (key_field,) if key_field else (), entries, (source,))


def _c_outside_literals(header: str) -> str:
    """The header with string literals replaced by ``""`` (they are escaped by :func:`c_string`)."""
    return re.sub(r'"(?:[^"\\\n]|\\[0-7]{3})*"', '""', header)


def _check_c_header(header: str, prefix: str = "tuned") -> None:
    code = _c_outside_literals(header)
    assert "\\" not in code and "\r" not in code and "??" not in code
    assert all(" " <= ch <= "~" for line in code.split("\n") for ch in line)
    for comment in re.findall(r"/\*(.*?)\*/", code, flags=re.S):
        assert "/*" not in comment and "*" not in comment.replace("\n *", "")
    directives = [line for line in code.split("\n") if line.lstrip().startswith("#")]
    for line in directives:
        assert re.fullmatch(
            rf"#(ifndef|define|endif /\*) {prefix.upper()}_\w*.*|#include <string.h>|"
            rf"#define {prefix.upper()}_\w+ .*",
            line,
        ), line


def _check_python(module: str, names: list[str]) -> None:
    tree = ast.parse(module)
    for node in tree.body:
        assert isinstance(node, (ast.Assign, ast.FunctionDef)) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ), ast.dump(node)
    scope: dict = {}
    exec(compile(tree, "<export>", "exec"), scope)  # noqa: S102 - the point is to run what was exported
    assert [o for o, _ in scope["OBJECTIVES"]] == names[:1]
    assert list(scope["PARAMETERS"]) == names[1:2]


def test_a_name_that_splices_a_comment_line_cannot_define_a_macro():
    header = render(_table(HOSTILE, HOSTILE, HOSTILE, HOSTILE + ".db", 3), "c-header")
    _check_c_header(header)
    assert not any(line.lstrip().startswith("#define Q") for line in header.splitlines())
    assert c_comment(HOSTILE) == "t___/_#define Q 1_/_"


@needs_cc
def test_the_hostile_header_compiles_without_the_injected_macro(tmp_path):
    header = render(_table(HOSTILE, "x", HOSTILE, HOSTILE, 3), "c-header")
    out = compile_and_run(tmp_path, header, '#ifdef Q\n    puts("injected");\n#else\n    puts("clean");\n#endif')
    assert out == ["clean"] and CC


def test_the_python_module_keeps_hostile_names_as_data():
    name = "x'''\"\"\"\n__import__('os').system('touch pwned')#\r\u2028"
    _check_python(render(_table(name, name, name, name, name), "python"), [name, name])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    objective=_NAMES,
    parameter=_NAMES,
    key_field=st.one_of(st.just(""), _NAMES),
    source=_NAMES,
    value=st.one_of(st.integers(-(2**70), 2**70), st.floats(), _NAMES, st.permutations([0, 1, 2]).map(tuple)),
)
def test_fuzzed_names_and_values_export_safely(objective, parameter, key_field, source, value):
    table = _table(objective, parameter, key_field, source, value)
    for fmt in ("c-header", "python", "json", "csv"):
        try:
            text = render(table, fmt)
        except BayestuneError:
            continue  # e.g. a value with no C literal (nan, inf): refused by name
        if fmt == "c-header":
            _check_c_header(text)
        elif fmt == "python":
            _check_python(text, [objective, parameter])


@pytest.mark.parametrize("fmt", ["c-header", "python", "json", "csv"])
def test_exports_of_hostile_names_do_not_raise_other_errors(fmt):
    render(_table(HOSTILE, HOSTILE, "", HOSTILE, HOSTILE), fmt)
