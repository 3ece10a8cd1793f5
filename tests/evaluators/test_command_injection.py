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
        ("eval echo {c}", "an argument of eval"),
        ("sh -c {c}", "the script of sh -c"),
        ("true && X=1 eval echo {c}", "an argument of eval"),
        ("if true; then bash -c {c}; fi", "the script of bash -c"),
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


#: The spellings hostile testing found accepted (issue 41, round four, item 2), each now refused.
RUNS_AS_CODE = [
    "/bin/sh -c {c}",
    "bash -lc {c}",
    "sh -ec {c}",
    "sh -e -c {c}",
    "env sh -c {c}",
    "timeout 5 sh -c {c}",
    "nice bash -c {c}",
    "exec sh -c {c}",
    "{{ sh -c {c}; }}",
    "find . -exec sh -c {c} \\;",
    "command eval {c}",
    "if true; then eval {c}; fi",
    "while false; do eval {c}; done",
    "trap {c} EXIT",
    "echo {c} | sh",
    "awk {c}",
    "perl -e {c}",
    "python3 -c {c}",
    "bash <<< {c}",
    "xargs sh -c {c}",
]


@pytest.mark.parametrize("template", RUNS_AS_CODE)
def test_every_way_found_to_run_a_value_as_code_is_refused(template):
    with pytest.raises(EvaluationError, match="shell injection"):
        template_fields(template)


@pytest.mark.parametrize(
    "template",
    [
        "bash -c 'echo $1' _ {x}",  # the script is the template's own; the value is $1
        "sh run.sh {x}",
        "awk '{{print $1}}' {file}",
        "echo {x} | ./read",
        "timeout 5 ./bench --n {x}",
        "python3 bench.py {x}",
        "{artefact} --size {n}",
        "cat <<< {x}",
    ],
)
def test_a_value_as_a_plain_argument_stays_allowed(template):
    template_fields(template)


WRAPPER_CHAINS = [[], ["env"], ["env", "A=1"], ["timeout", "5"], ["nice", "-n", "3"], ["exec"], ["command"], ["setsid"]]
CODE_RUNNERS = [
    ["sh", "-c"],
    ["/bin/bash", "-lc"],
    ["dash", "-ec"],
    ["eval"],
    ["python3", "-c"],
    ["perl", "-e"],
    ["awk"],
]
PREFIXES = ["", "true; ", "true && ", "if true; then ", "X=1 "]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(PREFIXES),
    st.lists(st.sampled_from(WRAPPER_CHAINS), max_size=2),
    st.sampled_from(CODE_RUNNERS),
)
def test_generated_templates_that_run_a_value_as_code_are_refused(prefix, wrappers, runner):
    """Templates built from prefixes, wrapper chains and code runners: every one is refused."""
    words = [w for chain in wrappers for w in chain] + runner + ["{c}"]
    template = prefix + " ".join(words) + ("; fi" if prefix.startswith("if") else "")
    with pytest.raises(EvaluationError, match="shell injection"):
        template_fields(template)
