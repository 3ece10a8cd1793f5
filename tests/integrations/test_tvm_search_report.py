"""The TVM benchmark's report (benchmarks/tvm_search.py) on made-up records; needs no TVM."""

from __future__ import annotations

from benchmarks.tvm_search import checkpoint_to_reach, report, trials_to_reach


def _record(workload, variant, seed, remeasured_ms, trajectory_ms):
    at = {str(c): min(trajectory_ms[:c]) * 1e-3 for c in (16, 32, 64, 128)}
    return {
        "workload": workload,
        "variant": variant,
        "seed": seed,
        "trials": 128,
        "per_iter": 16,
        "wall_seconds": 60.0,
        "failed": 0,
        "refused_before_build": 0,
        "reused": 0,
        "best_at": at,
        "remeasured_at": {str(c): v * 1e-3 for c, v in zip((16, 32, 64, 128), remeasured_ms)},
        "trajectory": [t * 1e-3 for t in trajectory_ms],
        "load_start": 1.0,
        "load_end": 1.5,
    }


def test_reach_helpers():
    assert trials_to_reach([3.0, None, 2.0, 1.0], 2.0) == 3
    assert trials_to_reach([3.0, None], 2.0) is None
    assert checkpoint_to_reach({"16": 3.0, "32": 2.0, "64": 1.0, "128": 1.0}, 1.5) == 64
    assert checkpoint_to_reach({"16": 3.0, "32": None, "64": 3.0, "128": 2.0}, 1.5) is None


def test_report_shows_median_range_and_where_bo_reaches_evolutionary():
    flat = [5.0] * 128
    records = [
        _record("matmul", "evolutionary", 0, [3.0, 2.5, 2.2, 2.0], [3.0] * 100 + [2.0] * 28),
        _record("matmul", "bo", 0, [2.8, 1.9, 1.9, 1.9], [2.8] * 20 + [1.9] * 108),
        _record("matmul", "random", 0, [4.0, 4.0, 4.0, 4.0], flat),
        _record("matmul", "evolutionary", 1, [3.0, 2.5, 2.2, 2.1], [3.0] * 100 + [2.1] * 28),
        _record("matmul", "bo", 1, [3.0, 3.0, 3.0, 3.0], flat),
    ]
    text = report(records)
    assert "| matmul | bo | 2 | 2.900 (2.800–3.000) |" in text
    assert "| matmul | 0 | 2.000 | 32 | >128 | 2.000 | 21 | >128 |" in text
    assert "| matmul | 1 | 2.100 | >128 | – | 2.100 | >128 | – |" in text
    # two seeds: 32 and >128 -> the upper median, >128; the median curve (2.9, 2.45, ...) never reaches 2.05
    assert "| matmul | 2 | >128 | >128 | >128 | >128 | >128 | >128 |" in text
    assert "load average" in text


def test_report_uses_the_interleaved_remeasurement_when_there_is_one(tmp_path):
    import json

    from benchmarks.tvm_search import main

    runs = [
        _record("matmul", "evolutionary", 0, [3.0, 2.5, 2.2, 2.0], [2.0] * 128),
        _record("matmul", "bo", 0, [2.8, 1.9, 1.9, 1.9], [2.0] * 128),
    ]
    final = [
        {
            "workload": "matmul",
            "variant": v,
            "seed": 0,
            "final_at": {str(c): x * 1e-3 for c, x in zip((16, 32, 64, 128), xs)},
            "final_median_at": {},
            "rounds": 15,
            "number": 10,
        }
        for v, xs in (("evolutionary", [1.5, 1.5, 1.5, 1.4]), ("bo", [1.6, 1.6, 1.3, 1.3]))
    ]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (tmp_path / "final.jsonl").write_text("".join(json.dumps(r) + "\n" for r in final))
    main(["report", str(tmp_path / "runs.jsonl"), str(tmp_path / "final.jsonl"), "--out", str(tmp_path / "r.md")])
    text = (tmp_path / "r.md").read_text()
    assert "| matmul | bo | 1 | 1.600 | 1.600 | 1.300 | 1.300 |" in text
    assert "| matmul | 0 | 1.400 | 64 | – |" in text
