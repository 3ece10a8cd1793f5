"""Values reach the shell only as literal words: a template whose placeholder could be read by the
shell (quotes, a backslash, backquotes, a here-document) is refused, arithmetic takes numbers only,
and for every accepted template no value runs a command (fuzzed)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayestune.evaluators.command import CommandEvaluator, template_fields
from bayestune.exceptions import EvaluationError

PAYLOADS = [
    "$(touch X)",
    "`touch X`",
    "a'$(touch X)'",
    "x ; touch X ; #",
    "'\n touch X\n'",
    '"; touch X; "',
    "\\",
    "$((1))",
    "a[$(touch X)]",
    "EOF\ntouch X\nEOF",
]


@pytest.mark.parametrize(
    "template, where",
    [
        ("cat <<EOF\n{c}\nEOF", "here-document"),
        ("python3 - <<EOF\nprint({c!r})\nEOF", "here-document"),
        ("python3 - <<'EOF'\nprint({c!r})\nEOF\necho 1", "here-document"),
        ("cat <<-X\n\t{c}\n\tX", "here-document"),
        ("echo \\{c}", "after a backslash"),
        ("echo `echo {c}`", "command substitution"),
        ('echo "$(echo `echo {c}`)"', "command substitution"),
        ("echo '{c}'", "'...' quotes"),
        ('echo "x{c}"', '"..." quotes'),
        ("eval echo {c}", "eval, sh -c"),
        ("sh -c {c}", "eval, sh -c"),
        ("true && X=1 eval echo {c}", "eval, sh -c"),
        ("if true; then bash -c {c}; fi", "eval, sh -c"),
    ],
)
def test_templates_where_a_value_could_be_interpreted_are_refused(template, where):
    with pytest.raises(EvaluationError, match="shell injection") as info:
        template_fields(template)
    assert where in str(info.value)


@pytest.mark.parametrize(
    "template",
    [
        "echo {c}",
        "cat <<EOF\nliteral\nEOF\necho {c}",
        "echo 1 #{c}",
        "cat <<< {c}",
        "echo $(echo {c})",
        'echo "$(echo {c})"',
        "x=$(( {n} + 1 )); echo $x {c}",
        "./bench --mode eval {c}",
        "python train.py eval {c}",
        "(( {n} > 0 )) && echo {c}",
        "echo \\\\{c}",
    ],
)
def test_safe_templates_are_accepted(template):
    assert "c" in template_fields(template) or "n" in template_fields(template)


def test_arithmetic_takes_numbers_only(tmp_path):
    ev = CommandEvaluator("echo runtime: $(( {n} + 1 ))", ["runtime"], workdir=tmp_path)
    assert ev.evaluate({"n": 4}).values == {"runtime": 5.0}
    failed = ev.evaluate({"n": "a[$(touch X)]"})
    assert failed.error and "only a number" in failed.error and not (tmp_path / "X").exists()


_PIECES = st.sampled_from(
    [
        "'",
        '"',
        "`",
        "<<E",
        "E",
        "$((",
        "))",
        "echo ",
        "{c}",
        " ",
        ";",
        "\n",
        "$(",
        ")",
        "cat <<< ",
        "x=",
        "|",
        "(",
        "printf %s ",
        ">/dev/null",
        "#",
        "\\\\",
        "&&",
        "{{",
        "}}",
        "true ",
    ]
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(_PIECES, min_size=1, max_size=12), payload=st.sampled_from(PAYLOADS))
def test_no_value_runs_a_command_in_an_accepted_template(pieces, payload):
    with tempfile.TemporaryDirectory() as tmp:
        _run_if_accepted("".join(pieces) + " {c}", payload, Path(tmp))


def _run_if_accepted(template: str, payload: str, tmp_path: Path) -> None:
    try:
        ev = CommandEvaluator(template, ["y"], workdir=tmp_path, timeout=5)
    except EvaluationError:
        return
    try:
        cmd = ev.render({"c": payload})
    except ValueError:
        return  # a non-number in arithmetic: the evaluation fails by name, nothing runs
    subprocess.run(["/bin/sh", "-c", cmd], cwd=tmp_path, capture_output=True, timeout=10)
    assert not (tmp_path / "X").exists(), cmd
