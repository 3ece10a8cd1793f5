"""The simulated confirmation benchmark: its black boxes, the paired table, and the command (also as
``measurement_policy simulated``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from benchmarks import confirmation
from benchmarks.confirmation import PROBLEMS, NoisyBox, Problem, mean_interval, paired, table, true_time
from benchmarks.measurement_policy import main as policy_main


def test_the_black_boxes_have_the_stated_noise_and_crash_share() -> None:
    config = {"a": 6, "b": 3, "c": 5}
    for sigma, crash in ((0.3, 0.0), (0.15, 0.07)):
        box = NoisyBox(0, Problem(sigma, crash))
        values, crashes = [], 0
        for _ in range(4000):
            try:
                values.append(box(config))
            except RuntimeError:
                crashes += 1
        logs = np.log(values) - math.log(true_time(config))
        assert abs(np.std(logs) - sigma) < 0.02 * sigma / 0.15 and abs(np.median(logs)) < 0.02
        assert abs(crashes / 4000 - crash) < 0.015 and box.calls == 4000
    assert PROBLEMS["noisy_low"].sigma < PROBLEMS["noisy"].sigma and PROBLEMS["flaky_low"].crash == 0.07


def record(problem: str, arm: str, seed: int, regret: float, **extra: object) -> dict:
    return {"problem": problem, "arm": arm, "seed": seed, "regret": regret, "calls": 10, **extra}


def test_the_paired_column_compares_the_same_seeds_with_the_default() -> None:
    records = [record("noisy", "default", s, 0.10) for s in range(4)]
    records += [record("noisy", "none", s, r) for s, r in enumerate((0.30, 0.10, 0.20, 0.00))]
    records.append(record("noisy", "none", 9, 5.0))  # no default run on seed 9: not paired
    mean, half = mean_interval([20.0, 0.0, 10.0, -10.0])
    assert paired(records, "noisy", "none") == f"{mean:+.1f} ± {half:.1f} (4 seeds) | 1 / 1 / 2"
    assert paired(records, "noisy", "default") == "- | -"
    assert paired(records, "flaky", "none") == "- | -"
    assert math.isnan(mean_interval([1.0])[1]) and mean_interval([1.0, 3.0])[0] == 2.0


def test_the_table_has_a_row_per_problem_and_arm_with_its_coverage() -> None:
    records = [
        record("noisy_low", "default", 0, 0.1, covered=True, speedup_covered=False, best_evaluated_regret=0.0),
        record("noisy_low", "default", 1, 0.3, covered=False, best_evaluated_regret=0.1),
        record("noisy_low", "none", 0, None),  # no winner: left out
    ]
    text = table(records)
    assert "| noisy_low | 0.15 | 0% | default | 2 | 20.0% ±" in text
    assert "| 5.0% | 50.0% of 2 | 0.0% of 1 | 10 |" in text
    assert "| none |" not in text and "| noisy |" not in text


def test_the_command_runs_as_measurement_policy_simulated(tmp_path: Path) -> None:
    out = tmp_path / "sim.jsonl"
    policy_main(["simulated", "--seeds", "0", "--problems", "noisy_low", "--arms", "none", "--out", str(out)])
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["problem"] == "noisy_low" and row["sigma"] == 0.15 and row["calls"] == 30 and row["regret"] >= 0
    text = out.with_suffix(".md").read_text()
    assert "python -m benchmarks.measurement_policy simulated --seeds 0" in text and "| noisy_low | 0.15 |" in text
    policy_main(["simulated", "--seeds", "0", "--problems", "noisy_low", "--arms", "none", "--out", str(out)])
    assert len(out.read_text().splitlines()) == 1  # resumed: nothing run twice
    assert confirmation.table_path(Path("a/b.jsonl.gz")) == Path("a/b.md") == confirmation.table_path(Path("a/b.jsonl"))


@pytest.mark.parametrize(
    "argv", [["--problems", "loud"], ["--arms", "default,fast"], ["--seeds", "zero"], ["--problems", ","]]
)
def test_bad_names_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        confirmation.main(argv)
    assert "error:" in capsys.readouterr().err
