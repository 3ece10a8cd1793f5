"""The export, compare and dashboard commands: what they write, and bad input as one error line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.dashboard import DashboardServer
from tests.export import conftest as export_fixtures
from tests.export.conftest import config, write_journal

device_journals = export_fixtures.device_journals  # the fixture tests/export defines, shared here


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def assert_one_line_error(result, *fragments):
    assert result.exit_code == 2, (result.output, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture
def journal(tmp_path):
    rows = [(config(4, 0.5), {"runtime": 2.0}), (config(8, 0.25), {"runtime": 1.0}), (config(2, 0.0), None)]
    return str(write_journal(tmp_path / "run.db", rows))


def test_export_json_to_stdout_and_c_header_to_a_file(runner, journal, tmp_path):
    result = runner.invoke(cli, ["export", journal, "--format", "json", "--top", "2"])
    assert result.exit_code == 0, result.stderr
    assert [e["trial"] for e in json.loads(result.stdout)["entries"]] == [2, 1]
    result = runner.invoke(cli, ["export", journal, "--format", "c-header", "-o", "tuned.h", "--name", "conv"])
    assert result.exit_code == 0, result.stderr
    assert "#define CONV_GR__E 8LL" in (tmp_path / "tuned.h").read_text()


def test_export_lookup_table_keyed_per_journal(runner, device_journals, tmp_path):
    args = ["export", "--format", "python", "-o", "table.py"]
    for device, path in device_journals.items():
        args += ["--key", f"device={device}", str(path)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    namespace: dict = {}
    exec((tmp_path / "table.py").read_text(), namespace)  # noqa: S102 - the module we just generated
    assert namespace["lookup"](device="MI250X")["größe"] == 8 and namespace["KEY_FIELDS"] == ("device",)


def test_export_hypermapper_keeps_its_two_argument_form(runner, journal, tmp_path):
    result = runner.invoke(cli, ["export", journal, "all.csv"])
    assert result.exit_code == 0 and (tmp_path / "all.csv").read_text().count("\n") == 4
    result = runner.invoke(cli, ["export", journal, journal, "x.csv"])
    assert result.exit_code == 2 and "JOURNAL OUT.csv" in result.stderr


def test_export_errors_are_one_line(runner, journal, tmp_path):
    assert_one_line_error(runner.invoke(cli, ["export", "nope.db", "--format", "json"]), "nope.db", "does not exist")
    (tmp_path / "bad.db").write_text("garbage")
    assert_one_line_error(runner.invoke(cli, ["export", "bad.db", "--format", "csv"]), "bad.db")
    assert_one_line_error(runner.invoke(cli, ["export", journal, journal, "--format", "csv"]), "no keys")
    assert_one_line_error(
        runner.invoke(cli, ["export", journal, "--format", "c-header", "--name", "1x"]), "C identifier"
    )
    result = runner.invoke(cli, ["export", journal, "--format", "yaml"])
    assert result.exit_code == 2 and "'yaml' is not one of" in result.stderr
    result = runner.invoke(cli, ["export", journal])  # the default format writes a file: its name is missing
    assert result.exit_code == 2 and "missing OUT.csv" in result.stderr and "--format json" in result.stderr


def test_compare_prints_the_table_and_writes_the_figure(runner, journal, tmp_path):
    pytest.importorskip("matplotlib")
    other = write_journal(
        tmp_path / "other.db", [(config(1, 0.0), {"runtime": 1.5}), (config(3, 0.0), {"runtime": 0.9})]
    )
    result = runner.invoke(cli, ["compare", journal, str(other), "-o", "cmp.svg"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "evaluations to within 5% of the best" in lines[0]
    assert "confirmed" in lines[0]
    assert lines[2].split()[:7] == ["other", "(random)", "2", "0", "0.9", "-", "2"]  # ranked by the best
    assert lines[3].split()[:7] == ["run", "(random)", "3", "1", "1", "-", "-"]
    assert (tmp_path / "cmp.svg").read_text().count("<svg") == 1
    assert_one_line_error(
        runner.invoke(cli, ["compare", journal, "--objective", "energy", "--no-plot"]), "no objective 'energy'"
    )


def test_dashboard_announces_its_address_and_warns_off_loopback(runner, journal, monkeypatch):
    def stop(self, poll_interval=0.5):
        raise KeyboardInterrupt

    monkeypatch.setattr(DashboardServer, "serve_forever", stop)
    result = runner.invoke(cli, ["dashboard", journal, "--port", "0"])
    assert result.exit_code == 0 and "http://127.0.0.1:" in result.stderr and "warning" not in result.stderr
    result = runner.invoke(cli, ["dashboard", journal, "--port", "0", "--host", "0.0.0.0"])
    assert result.exit_code == 0 and "warning: listening on 0.0.0.0, not loopback" in result.stderr
    assert_one_line_error(runner.invoke(cli, ["dashboard", "nope.db"]), "nope.db", "does not exist")
