"""The measurement-policy benchmark: judging the arms, the table, and (slow) one live repetition."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmarks.jsonl import load_records
from benchmarks.measurement_policy import judge, main, parse_seeds
from benchmarks.measurement_policy_table import markdown, sign_test, truth_stability


def arm(declared: str | None, seconds: float, evaluations: int) -> dict:
    return {
        "declared": declared,
        "declared_value": 1.0,
        "winner_interval": None,
        "evaluations": evaluations,
        "runs_per_schedule": [1],
        "seconds": seconds,
        "time_breakdown": {"compile": 1.0, "run": seconds - 1.0},
    }


def test_judge_names_the_true_best_its_regret_and_near_misses() -> None:
    truth = {"a": 1.0, "b": 1.01, "c": 1.5}
    assert judge(arm("a", 5, 5), truth)["is_best"] and judge(arm("a", 5, 5), truth)["regret"] == 0.0
    near = judge(arm("b", 5, 5), truth)
    assert not near["is_best"] and near["near_best"] and near["regret"] == pytest.approx(0.01)
    far = judge(arm("c", 5, 5), truth)
    assert not far["near_best"] and far["regret"] == pytest.approx(0.5)
    assert math.isnan(judge(arm(None, 5, 5), truth)["true_median"])


def test_the_table_counts_hits_and_the_cost_ratio(tmp_path: Path) -> None:
    truth = {"a": 1.0, "b": 1.1}
    records = [
        {
            "pipeline": "p",
            "seed": s,
            "pool": ["a", "b"],
            "truth_rounds": 30,
            "truth_median": truth,
            "true_best": "a",
            "load_average": [2.0 + s, 1.0, 1.0],
            "plain": judge(arm("b", 10, 5), truth),
            "policy": judge(arm("a", 30, 20), truth),
        }
        for s in (0, 1)
    ]
    records[1]["load_average_start"] = [5.0, 1.0, 1.0]
    text = markdown(records)
    assert "| p | 2 | 0/2 | 2/2 | 0/2 | 2/2 | 10.0 % | 0.0 % | 10 | 30 | 3.0x | 5 | 20 | 2 x 30 | 2-5 |" in text
    assert (
        "true best in 2/2 with the policy vs 0/2 without" in text
        and "sign test p = 0.50" in text
        and "(3.0x the wall-clock time" in text
    )
    assert "| p | 1 | no | yes | 10.0 % | 0.0 % | 10 | 30 | - | 1 | - | 5.0 / 3.0 |" in text
    assert "- plain: compile 2, run 18" in text
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(records[0]) + "\n{torn")
    assert load_records(path) == [records[0]]


def test_truth_stability_is_the_bootstrap_share_in_which_the_true_best_stays_best() -> None:
    clear = {"truth_samples": {"a": [1.0, 1.1, 0.9] * 10, "b": [2.0, 2.1, 1.9] * 10}, "true_best": "a"}
    assert truth_stability(clear, 200) == 1.0
    tie = {"truth_samples": {"a": [1.0, 2.0] * 15, "b": [1.0, 2.0] * 15}, "true_best": "a"}
    assert 0.2 < truth_stability(tie, 200) < 0.8
    assert truth_stability({"true_best": "a"}) is None


def test_sign_test() -> None:
    assert sign_test(0, 0) == 1.0 and sign_test(3, 3) == 1.0
    assert sign_test(5, 0) == pytest.approx(2 / 32) and sign_test(0, 5) == pytest.approx(2 / 32)


def test_seed_ranges() -> None:
    assert parse_seeds("0-2,5") == [0, 1, 2, 5]


@pytest.mark.slow
def test_one_live_repetition(tmp_path: Path) -> None:
    pytest.importorskip("halide")
    out = tmp_path / "mp.jsonl"
    main(["--pipelines", "halide_matmul", "--seeds", "0", "--pool", "2", "--truth-rounds", "3", "--out", str(out)])
    (record,) = load_records(out)
    assert set(record["truth_median"]) == set(record["pool"]) and record["true_best"] in record["pool"]
    assert record["plain"]["evaluations"] == 2 and record["policy"]["evaluations"] >= 2 * 3 + 2 * 5
    assert "| halide_matmul | 1 |" in out.with_suffix(".md").read_text()
