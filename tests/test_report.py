"""`bayestune report` and `bayestune plot` write non-empty files from real journals."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

pytest.importorskip("matplotlib")

from bayestune.cli import cli  # noqa: E402
from bayestune.report import build_report  # noqa: E402


def test_report_of_a_multi_objective_run_is_self_contained(mo_journal, tmp_path):
    out = build_report(mo_journal, tmp_path / "r.html")
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert "Pareto set" in text and "Best configuration per objective" in text
    assert len(re.findall(r'src="data:image/png;base64,[A-Za-z0-9+/=]{1000,}"', text)) >= 4
    assert "http" not in text.replace("http-equiv", "")  # nothing fetched from elsewhere
    for name in ("tile", "par", "pipe", "clock", "order", "cycles", "util", "output_constraint"):
        assert name in text


def test_report_of_a_single_objective_run(so_journal, tmp_path):
    text = build_report(so_journal, tmp_path / "s.html", importance_method="gp").read_text()
    assert "Best configurations by throughput (maximize)" in text
    assert "Failures" in text and "timing closure failed" in text


def test_cli_report_and_plot(mo_journal, tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["report", str(mo_journal), "-o", str(tmp_path / "rep.html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "rep.html").stat().st_size > 20_000
    result = runner.invoke(
        cli, ["plot", str(mo_journal), "-o", str(tmp_path / "png"), "--kind", "pareto", "--kind", "convergence"]
    )
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in (tmp_path / "png").iterdir())
    assert written == ["convergence.png", "pareto_cycles_util.png"]
    assert all(p.stat().st_size > 5_000 for p in (tmp_path / "png").iterdir())


def test_cli_plot_and_report_errors(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["report", str(tmp_path / "missing.db")])
    assert result.exit_code == 2 and "error:" in result.output
    result = runner.invoke(cli, ["plot", str(tmp_path / "missing.db")])
    assert result.exit_code == 2 and "error:" in result.output


def test_optimize_a_multi_objective_scenario_then_report(tmp_path):
    import json
    import textwrap

    (tmp_path / "bb.py").write_text(
        textwrap.dedent("""
        def run(cfg):
            return {"cycles": 1000.0 / cfg["par"], "logic": 15.0 * cfg["par"] + cfg["tile"] / 8}
    """)
    )
    scenario = {
        "name": "fpga",
        "budget": 10,
        "seed": 0,
        "strategy": "pareto_rf",
        "strategy_options": {"rf": {"trees": 20}},
        "parameters": [
            {"name": "par", "type": "integer", "bounds": [1, 10]},
            {"name": "tile", "type": "ordinal", "values": [8, 16, 32, 64]},
        ],
        "objectives": ["cycles", {"name": "logic", "direction": "minimize"}],
        "output_constraints": ["logic <= 100"],
        "initial_design": {"size": 5},
        "blackbox": {"python": "bb.py:run"},
    }
    (tmp_path / "fpga.json").write_text(json.dumps(scenario))
    runner = CliRunner()
    journal = tmp_path / "fpga.db"
    result = runner.invoke(cli, ["optimize", str(tmp_path / "fpga.json"), "--journal", str(journal), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "Pareto front:" in result.output
    result = runner.invoke(cli, ["report", str(journal), "-o", str(tmp_path / "fpga.html")])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "fpga.html").read_text()
    assert "Pareto set" in text and "fpga" in text


def test_report_shows_the_time_breakdown_and_remeasurement_rounds(so_journal, tmp_path):
    import shutil

    from bayestune.storage import Journal
    from bayestune.trial import Result

    path = tmp_path / "copy.db"
    shutil.copy(so_journal, path)
    with Journal.open(path) as journal:
        top = journal.best("throughput", minimize=False, k=2)
        for round_number in (1, 2):
            for t in top:
                journal.record_remeasurement(t.trial_id, round_number, Result(values={"throughput": 1.0 + t.trial_id}))
    text = build_report(path, tmp_path / "r.html").read_text()
    assert "<td>time</td><td>optimizer " in text  # the loop measured the suggestions
    assert "Re-measured in 2 interleaved rounds (throughput, 95% interval)" in text
    assert f"winner: trial {max(t.trial_id for t in top)}" in text


def test_report_of_a_run_with_logged_metrics_shows_its_dag(tmp_path):
    from bayestune import Real
    from bayestune.optimizer import Optimizer
    from bayestune.space import Space
    from bayestune.storage import Journal

    def box(c):  # comp.lat is a function of y: set aside, and the report says so
        y = (3 * c["a"]) ** 2 + c["b"]
        return {"y": y, "comp.m": 3 * c["a"], "comp.lat": 1.0 / (1.0 + y)}

    with Journal(tmp_path / "run.db") as journal:
        Optimizer(
            Space([Real("a", 0, 1), Real("b", 0, 1)]), objectives=["y"], strategy="random", seed=0, journal=journal
        ).optimize(box, 12)
    text = build_report(tmp_path / "run.db", tmp_path / "r.html").read_text()
    assert "DAG of logged metrics (BoGraph)" in text and "effective dimension" in text
    assert "Logged metrics (2)" in text and "comp.m" in text
    assert "Set aside: never parents of y" in text
    assert "<td>comp.lat</td><td>a function of y (rank correlation -1.0000)" in text


def test_report_of_a_perfect_tile_space(tmp_path):
    """A tiling parameter takes one axis of the parallel plot (this report used to raise AttributeError)."""
    from bayestune.optimizer import Optimizer
    from bayestune.space import Integer, PerfectTile, Space
    from bayestune.storage import Journal

    with Journal(tmp_path / "tile.db") as journal:
        Optimizer(
            Space([PerfectTile("tile", 64, 2), Integer("unroll", 1, 8)]),
            objectives=["t"],
            strategy="random",
            seed=0,
            journal=journal,
        ).optimize(lambda c: {"t": abs(c["tile"][1] - 8) + c["unroll"]}, 12)
    text = build_report(tmp_path / "tile.db", tmp_path / "r.html").read_text()
    assert "<img" in text and "tile" in text
