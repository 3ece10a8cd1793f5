"""The echo check: an objective that echoes a substituted value, or never varies across repeats,
stops the run with one line; a scenario can say its objective really is constant; the black-box
page's examples of the one-number form are what the parser does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.evaluators.output import parse_output
from bayestune.measurement.echo_check import MIN_EVALUATIONS, EchoCheck, EchoError
from bayestune.trial import FailureKind, TrialStatus

DOCS = Path(__file__).resolve().parents[2] / "docs" / "blackboxes.md"


def _trial(tile, value, repeats=(), status=TrialStatus.OK):
    return SimpleNamespace(
        status=status, config={"tile": tile, "mode": "fast"}, values={"t": value}, repeats={"t": tuple(repeats)}
    )


def test_an_echo_of_a_substituted_value_stops_from_the_third_evaluation():
    check = EchoCheck(["t"], ["tile", "mode"])
    check.observe(_trial(4, 4.0))
    check.observe(_trial(8, 8.0))
    check.observe(_trial(2, None, status=TrialStatus.FAILED))  # failures say nothing
    with pytest.raises(EchoError, match=r"t equalled \{tile\}, a value substituted into the command, in each of the 3"):
        check.observe(_trial(16, 16.0))


def test_a_measurement_that_once_differs_from_every_input_is_never_stopped():
    check = EchoCheck(["t"], ["tile"])
    for tile, value in [(4, 4.0), (8, 8.0), (2, 2.7), (16, 16.0), (32, 32.0)]:
        check.observe(_trial(tile, value, repeats=(value, value * 1.01)))


def test_repeats_that_never_vary_stop_the_run():
    check = EchoCheck(["t"], [])
    for n in range(1, MIN_EVALUATIONS):
        check.observe(_trial(n, 1.0, repeats=(1.0, 1.0, 1.0)))
        check.observe(_trial(n, 2.0))  # measured once: says nothing about variation
    with pytest.raises(EchoError, match="never varied across the repeats of 3 evaluations"):
        check.observe(_trial(9, 1.0, repeats=(1.0, 1.0)))


def _scenario(tmp_path, command, measurement=None):
    scenario = {
        "name": "echo",
        "parameters": [{"name": "tile", "type": "ordinal", "values": [1, 2, 4, 8, 16]}],
        "objectives": [{"name": "runtime_ms"}],
        "blackbox": {"command": command},
        "budget": 6,
        "journal": "echo.journal.db",
    }
    if measurement is not None:
        scenario["measurement"] = measurement
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(scenario))
    return path


def test_optimize_on_echo_stops_with_one_line(tmp_path):
    result = CliRunner().invoke(cli, ["optimize", str(_scenario(tmp_path, "echo {tile}")), "--no-progress"])
    assert result.exit_code != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "the command prints its arguments, it does not measure" in errors[0]
    assert '"measurement": {"echo_check": false}' in errors[0] and "Traceback" not in result.output


def test_a_scenario_that_really_returns_an_input_says_so(tmp_path):
    measurement = {"echo_check": False, "remeasure_top": 0}
    path = _scenario(tmp_path, "echo {tile}", measurement)
    result = CliRunner().invoke(cli, ["optimize", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output + result.stderr


def test_the_docs_one_number_examples_are_what_the_parser_does():
    """docs/blackboxes.md, rule 3: the accepted examples parse, the refused ones are parse failures."""
    text = DOCS.read_text()
    rule = text[text.index("3. with one objective") : text.index("A command that prints its arguments")]
    accepted_part, refused_part = rule.split("are `parse`")[0].split("(", 1)
    accepted = re.findall(r"`([^`]+)`", accepted_part)
    refused = re.findall(r"`([^`]+)`", refused_part)
    assert accepted == ["1.25", "1.25 ms"] and "took 1.25 ms" in refused
    for line in accepted:
        assert parse_output(f"{line}\n", ["runtime_ms"]).values == {"runtime_ms": 1.25}
    for line in refused:
        assert parse_output(f"{line}\n", ["runtime_ms"]).kind == FailureKind.PARSE, line
