"""The simulated clock of benchmarks.wallclock on a small recorded cache: sequential time is the sum
of the recorded costs, a pipeline finishes sooner, early stop censors and saves device time."""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import pytest

from benchmarks import wallclock

CACHE = Path(__file__).resolve().parents[1] / "data" / "replay" / "pnpoly_576.json.gz"


@pytest.fixture
def costs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> wallclock.Costs:
    """The small cache with 12 repeats per configuration (its 3, four times) so early stop can act."""
    data = json.loads(gzip.decompress(CACHE.read_bytes()))
    for record in data["cache"].values():
        if isinstance(record.get("times"), list):
            record["times"] = record["times"] * 4
            record["benchmark_time"] = record["benchmark_time"] * 4
    (tmp_path / "pnpoly_576.json.gz").write_bytes(gzip.compress(json.dumps(data).encode()))
    monkeypatch.setenv("BAYESTUNE_DATA", str(tmp_path))
    return wallclock.Costs("pnpoly_576")


def test_the_sequential_clock_is_the_sum_of_recorded_costs_and_suggestions(costs: wallclock.Costs) -> None:
    run = wallclock.simulate(costs, wallclock.ARMS["sequential"], seed=0, budget=15)
    told = run["told"]
    assert len(told) == 15 and [e["t"] for e in told] == sorted(e["t"] for e in told)
    recorded = sum(e["build_s"] + e["device_s"] for e in told)
    assert told[-1]["t"] == pytest.approx(recorded + run["ask_s"], rel=1e-3, abs=1e-2)
    assert not any(e["censored"] for e in told)


def test_a_pipeline_is_faster_and_early_stop_censors_and_saves_device_time(costs: wallclock.Costs) -> None:
    sequential = wallclock.simulate(costs, wallclock.ARMS["sequential"], seed=1, budget=25)
    piped = wallclock.simulate(costs, wallclock.ARMS["b16d4_es"], seed=1, budget=25)
    assert len(piped["told"]) == 25
    assert piped["told"][-1]["t"] < sequential["told"][-1]["t"]
    device = sum(e["device_s"] for e in piped["told"])
    assert device <= piped["told"][-1]["t"] * 4 + 1e-6  # four devices, each one measurement at a time
    stopped = [e for e in piped["told"] if e["censored"]]
    assert stopped and all(e["value"] is None and e["device_s"] < e["device_full_s"] for e in stopped)


def test_the_table_reports_every_section(costs: wallclock.Costs, tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    for arm in ("sequential", "b8d1_es"):
        record = wallclock.simulate(costs, wallclock.ARMS[arm], seed=0, budget=20)
        record.update({"problem": "pnpoly_576", "arm": arm, "seed": 0, "budget": 20})
        with out.open("a") as f:
            f.write(json.dumps(record) + "\n")
    text = wallclock.table(argparse.Namespace(results=[str(out)]))
    for section in (
        "to 1.05x the optimum",
        "final median best/optimum",
        "fixed simulated times",
        "per evaluation",
        "Device time",
    ):
        assert section in text
