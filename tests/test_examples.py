"""The bundled examples stay valid and run end to end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.storage.journal import Journal

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCENARIOS = sorted(EXAMPLES.glob("*/scenario.json"))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.parent.name for s in SCENARIOS])
def test_every_example_scenario_validates(scenario):
    result = CliRunner().invoke(cli, ["validate", str(scenario)])
    assert result.exit_code == 0, result.output


def test_accelerator_example_finds_a_front_and_records_infeasible_designs(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    journal = tmp_path / "acc.db"
    runner = CliRunner()
    result = runner.invoke(
        cli,
        [
            "optimize",
            str(EXAMPLES / "accelerator" / "scenario.json"),
            "--budget",
            "14",
            "--journal",
            str(journal),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Pareto front" in result.output
    with Journal(journal) as j:
        trials = j.trials()
    assert len(trials) == 14
    assert any(not t.feasible for t in trials)  # timing / LUT limits bite
    out = runner.invoke(cli, ["report", str(journal), "-o", str(tmp_path / "r.html")])
    assert out.exit_code == 0 and (tmp_path / "r.html").stat().st_size > 10_000


def test_accelerator_model_runs_from_the_command_line():
    sys.path.insert(0, str(EXAMPLES / "accelerator"))
    try:
        import accelerator
    finally:
        sys.path.pop(0)
    out = accelerator.evaluate(
        {
            "pe_rows": 64,
            "pe_cols": 64,
            "simd": 8,
            "tile_m": 256,
            "tile_n": 256,
            "tile_k": 64,
            "buffering": "double",
            "dataflow": "output_stationary",
            "clock_mhz": 400,
        }
    )
    assert out["lut_util"] > 100 and not out["timing_met"]  # the biggest, fastest design fits nowhere
    small = accelerator.evaluate(
        {
            "pe_rows": 4,
            "pe_cols": 4,
            "simd": 1,
            "tile_m": 16,
            "tile_n": 16,
            "tile_k": 16,
            "buffering": "single",
            "dataflow": "weight_stationary",
            "clock_mhz": 100,
        }
    )
    assert small["timing_met"] and small["lut_util"] < 100 and small["latency_ms"] > out["latency_ms"]
