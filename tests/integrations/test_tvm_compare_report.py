"""The bo-vs-evolutionary comparison's picks and report (benchmarks/tvm_compare.py) on made-up
runs; needs no TVM."""

from __future__ import annotations

from benchmarks.tvm_compare import equal_wall, pick_at, report


def _run(strategy, seed, seconds, elapsed):
    best, improvements = float("inf"), {}
    for i, s in enumerate(seconds, 1):
        if s is not None and s < best:
            best, improvements[str(i)] = s, f"schedule-{strategy}-{i}"
    return {
        "operator": "softmax",
        "strategy": strategy,
        "seed": seed,
        "per_iter": 16,
        "trials": len(seconds),
        "wall_seconds": elapsed[-1],
        "seconds": seconds,
        "elapsed": elapsed,
        "failed": 0,
        "improvements": improvements,
        "load_start": 2.0,
        "load_end": 3.0,
    }


BO = _run("bo", 0, [5.0] * 15 + [3.0] + [None] * 16 + [2.0] * 32, [float(i) for i in range(1, 65)])
EVO = _run("evolutionary", 0, [4.0] * 16 + [1.0] * 48, [2.0 * i for i in range(1, 65)])


def test_picks_at_a_trial_count_and_at_a_wall_time():
    assert pick_at(BO, trials=16) == "16" and pick_at(BO, trials=32) == "16" and pick_at(BO, trials=64) == "33"
    assert pick_at(EVO, trials=16) == "1" and pick_at(EVO, trials=64) == "17"
    assert equal_wall({"bo": BO, "evolutionary": EVO}) == 64.0  # bo's complete run is the shorter
    assert pick_at(EVO, wall=64.0) == "17" and pick_at(EVO, wall=30.0) == "1"
    assert pick_at(BO, wall=0.5) is None


def test_the_report_compares_the_remeasured_picks_with_the_untuned_kernel():
    final = [
        {"key": ["softmax", "untuned"], "fastest": 2.5e-3, "rounds": 30, "number": 5, "load_min": 1.0, "load_max": 2.0},
        {"key": ["softmax", "bo", 0, "16"], "fastest": 3.1e-3},
        {"key": ["softmax", "bo", 0, "33"], "fastest": 2.1e-3},
        {"key": ["softmax", "evolutionary", 0, "1"], "fastest": 4.2e-3},
        {"key": ["softmax", "evolutionary", 0, "17"], "fastest": 1.2e-3},
    ]
    runs = [{**BO, "seconds": [s and s * 1e-3 for s in BO["seconds"]]}, EVO]
    text = report(runs, final)
    assert "| softmax | 2.500 | bo | 1 | 3.100 | 3.100 | 2.100 | 2.100 | 0.84 | 1/1 | 64 |" in text
    assert "| softmax | 2.500 | evolutionary | 1 | 4.200 | 1.200 | 1.200 | 1.200 | 0.48 | 1/1 | 128 |" in text
    assert "| softmax | 0 | 64 | 2.100 (64) | 1.200 (32) | 1.75 | 2.500 |" in text
    assert "bo faster than evolutionary at equal wall time: softmax 0/1 seeds." in text
    assert "during the re-measurement 1.0–2.0" in text


def test_stripped_runs_keep_what_the_report_needs(tmp_path):
    import json

    from benchmarks.tvm_compare import main

    (tmp_path / "runs.jsonl").write_text(json.dumps(BO) + "\n")
    main(["strip", str(tmp_path / "runs.jsonl"), "--out", str(tmp_path / "small.jsonl")])
    small = json.loads((tmp_path / "small.jsonl").read_text())
    assert small["improvements"] == ["1", "16", "33"] and small["seconds"] == BO["seconds"]
    assert pick_at(small, trials=32) == pick_at(BO, trials=32) == "16"
