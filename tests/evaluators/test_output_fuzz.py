"""The output parser on fuzzed stdout: always a Result (values finite, or a failure with an error
text), never an exception, for the default forms, a regex rule and a JSON rule."""

from __future__ import annotations

import math
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from bayestune.evaluators.base import evaluate_safely
from bayestune.evaluators.command import CommandEvaluator
from bayestune.evaluators.output import OutputRule, parse_output

_BITS = st.sampled_from(
    [
        "runtime",
        ": ",
        "=",
        " ",
        "\n",
        "\r",
        "1.5",
        "-3",
        "1e999",
        "nan",
        "inf",
        "{",
        "}",
        "[",
        "]",
        '"runtime"',
        '"logs"',
        ",",
        "feasible",
        "true",
        "false",
        "0x10",
        "1,000",
        "\x00",
        "é",
        "\t",
        "energy",
        '{"runtime": ',
        "9" * 400,
        "#",
    ]
)
_STDOUT = st.one_of(st.text(max_size=300), st.lists(_BITS, max_size=60).map("".join))
RULES = [
    None,
    OutputRule(regex=r"runtime[:=]\s*(\S+)"),
    OutputRule(json_fields={"runtime": "runtime"}),
    OutputRule(json_fields={"runtime": "logs.runtime"}),
]


def _check(result) -> None:
    if result.error is None and result.feasible:
        assert result.values and all(math.isfinite(v) for k, v in result.values.items() if k == "runtime")
    elif result.error is not None:
        assert isinstance(result.error, str) and result.error


@settings(max_examples=300, deadline=None)
@given(stdout=_STDOUT, rule=st.sampled_from(RULES), feasible_key=st.sampled_from([None, "feasible"]))
def test_fuzzed_stdout_gives_a_result(stdout, rule, feasible_key):
    _check(parse_output(stdout, ["runtime"], feasible_key, rule))


def test_a_long_line_of_digits_is_parsed_quickly():
    start = time.monotonic()
    for text in ("9" * 100_000, "runtime: " + "1" * 100_000, "{" * 50_000):
        _check(parse_output(text, ["runtime"]))
    assert time.monotonic() - start < 10


def test_deeply_nested_json_output_is_a_parse_failure(tmp_path):
    """JSON nested past what the reader can follow is output it cannot read: a parse failure
    quoting the line, not a RecursionError traceback in the error text."""
    deep = '{"runtime": ' + "[" * 50_000 + "]" * 50_000 + "}"
    (tmp_path / "deep.txt").write_text(deep)
    ev = CommandEvaluator("cat deep.txt #{x}", ["runtime"], workdir=tmp_path, output_json="runtime")
    result = evaluate_safely(ev, {"x": 1})
    _check(result)
    assert result.kind == "parse" and "Traceback" not in (result.error or "") and "Recursion" not in result.error
    direct = parse_output(deep, ["runtime"])
    assert direct.kind == "parse" and "Recursion" not in direct.error
