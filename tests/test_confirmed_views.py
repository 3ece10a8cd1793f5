"""Every view ranks by the confirmed value where there is one and shows both numbers: show,
report, export and the dashboard's best panel, on a run whose best sample was a fluke."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.measurement.remeasure import summarise_rounds
from bayestune.objectives import Objective
from bayestune.run import describe_run, record_confirmation
from bayestune.scenario.records import DesignSpec
from bayestune.space import Integer, Space
from bayestune.storage import Journal
from bayestune.trial import Result

SEARCHED = {1: 0.912345678901234, 2: 1.1, 3: 3.0, 4: 1.2}  # trial 1: the search's luckiest sample
REMEASURED = {1: 2.0, 2: 1.05, 3: 3.1}  # the best 2 and the baseline (trial 3), re-measured


@pytest.fixture
def lucky_run(tmp_path) -> Path:
    path = tmp_path / "lucky.db"
    objective = Objective("runtime")
    with Journal(path) as journal:
        describe_run(
            journal,
            objectives=[objective],
            space=Space([Integer("tile", 1, 64)]),
            strategy="random",
            strategy_options=None,
            seed=0,
            design=DesignSpec(),
        )
        for trial_id, value in SEARCHED.items():
            journal.record({"tile": 8 * trial_id}, Result({"runtime": value}))
        for round_number in range(1, 7):
            for trial_id, value in REMEASURED.items():
                result = Result({"runtime": value * (1 + 0.01 * round_number)})
                journal.record_remeasurement(trial_id, round_number, result)
        record_confirmation(
            journal, summarise_rounds(journal.remeasurements(), journal.trials(), objective, baseline_id=3)
        )
    return path


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output + result.stderr
    return result.stdout


def test_show_puts_the_confirmed_winner_first_and_shows_both_numbers(lucky_run):
    out = _run("show", str(lucky_run))
    rows = [line.split() for line in out.splitlines() if re.match(r"^\s+\d+\s+\d+\s", line)][:4]
    assert [r[1] for r in rows] == ["2", "4", "1", "3"]  # winner; then by the confirmed value where there is one
    assert rows[0][2:4] == ["1.1", "1.08675"] and rows[2][2:4] == ["0.912346", "2.07"]
    assert "confirmed runtime" in out


def test_report_ranks_by_the_confirmed_value(lucky_run, tmp_path):
    _run("report", str(lucky_run), "-o", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text()
    best = re.sub(r"<[^>]+>", " ", page[page.index("Best configurations") :])
    assert "confirmed runtime" in best
    assert best.split()[best.split().index("tile") + 1 : best.split().index("tile") + 4] == ["2", "1.1", "1.08675"]


def test_export_writes_the_confirmed_value_and_the_searched_one(lucky_run):
    doc = json.loads(_run("export", str(lucky_run), "--format", "json"))
    entry = doc["entries"][0]
    assert entry["trial"] == 2 and entry["values"] == {"runtime": 1.08675} and entry["searched"] == {"runtime": 1.1}
    csv = _run("export", str(lucky_run), "--format", "csv", "--top", "2").splitlines()
    assert csv[0].endswith("runtime,searched runtime") and csv[1].endswith("1.08675,1.1")


def test_dashboard_best_panel_carries_the_speedup(lucky_run):
    from bayestune.dashboard.snapshot import RunView

    best = RunView(str(lucky_run)).snapshot()["best"]
    assert best["trial"] == 2 and best["confirmed"]["value"] == pytest.approx(1.08675)
    assert best["speedup"]["baseline"] == 3 and best["speedup"]["value"] > 2.9
    page = (Path(__file__).parents[1] / "src/bayestune/dashboard/page.html").read_text()
    panel = page[page.index("function renderBest") : page.index("function renderImportance")]
    assert "${c.value}" not in panel and "${best.value}" not in panel  # numbers are rounded by fmt()


def test_report_without_matplotlib_writes_its_text_and_tables(lucky_run, tmp_path, monkeypatch):
    from bayestune import report

    monkeypatch.setattr(report, "have_matplotlib", lambda: False)
    page = report.build_report(lucky_run, tmp_path / "r.html").read_text()
    assert "no plots: matplotlib is not installed" in page and "Best configurations" in page and "<img" not in page
