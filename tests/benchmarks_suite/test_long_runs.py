"""The long-run replay summary: best/optimum at the budgets, where capped and uncapped runs part."""

from __future__ import annotations

import gzip
import json

import pytest

from benchmarks import long_runs


def record(problem, strategy, seed, values, configs=None, optimum=1.0):
    r = {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "budget": len(values),
        "optimum": optimum,
        "objectives": ["time"],
        "values": values,
        "ask_s": [0.01] * len(values),
        "error": None,
    }
    if configs is not None:
        r["configs"] = configs
    return r


def test_first_difference_reads_configurations_when_both_have_them():
    a = record("p", "bo", 0, [3.0, 2.0, 1.0], configs=[{"x": 1}, {"x": 2}, {"x": 3}])
    b = record("p", long_runs.UNCAPPED, 0, [3.0, 2.0, 1.0], configs=[{"x": 1}, {"x": 5}, {"x": 3}])
    assert long_runs.first_difference(a, b) == 2
    del b["configs"]
    assert long_runs.first_difference(a, b) is None  # values only: identical
    assert long_runs.first_difference(a, record("p", "bo", 1, [3.0, 2.0, 1.5])) == 3


def test_summary_geo_means_spaces_and_reports_the_parting_point():
    records = [
        record("p", "bo", 0, [4.0, 2.0, 1.0, 1.0], configs=list("abcd")),
        record("p", long_runs.UNCAPPED, 0, [4.0, 2.0, 1.5, 1.0], configs=list("abed")),
        record("q", "bo", 0, [None, 9.0, 4.0, 4.0], optimum=2.0),
        record("q", "bo", 1, [8.0, 8.0, 2.0, 2.0], optimum=2.0),
        record("p", "random", 0, [4.0, 4.0, 4.0, 2.0]),
    ]
    text = long_runs.summary(records, [2, 4], cap=1)
    lines = text.splitlines()
    bo = next(line for line in lines if line.startswith("| bo |"))
    # @2: p 2.0, q mean(4.5, 4.0) = 4.25 -> sqrt(8.5); @4: p 1.0, q mean(2.0, 1.0) = 1.5
    assert bo.split(" | ")[3:5] == [f"{8.5**0.5:.4f} (2)", f"{1.5**0.5:.4f} (2) |"]
    assert lines.index(bo) < lines.index(next(line for line in lines if line.startswith(f"| {long_runs.UNCAPPED} |")))
    assert "| p | 0 | 3 | 2.0000 / 2.0000 | 1.0000 / 1.0000 |" in lines  # they part at evaluation 3
    assert "1 part within the first 2 evaluations" not in text and "0 part within the first 2" in text
    assert "| q | bo | 2 | 4.2500 | 1.5000 | 3 (1/2) |" in lines


def test_compact_runs_drop_configurations_and_load_back(tmp_path):
    path = tmp_path / "runs.jsonl.gz"
    long_runs.compact([record("p", "bo", 0, [2.0, 1.0], configs=[{"x": 1}, {"x": 2}])], path)
    with gzip.open(path, "rt") as fh:
        assert "configs" not in json.loads(fh.readline())
    (loaded,) = long_runs.load([path])
    assert loaded["values"] == [2.0, 1.0]


def test_bad_input_is_refused_clearly(tmp_path, capsys):
    with pytest.raises(SystemExit):
        long_runs.main([str(tmp_path / "missing.jsonl")])
    assert "no results file" in capsys.readouterr().err
    (tmp_path / "empty.jsonl").write_text(json.dumps({"error": "boom", "values": None}) + "\n")
    with pytest.raises(SystemExit):
        long_runs.main([str(tmp_path / "empty.jsonl")])
    assert "no error-free" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        long_runs.main([str(tmp_path / "empty.jsonl"), "--budgets", "0"])


def test_suggestion_seconds_by_window_around_the_cap():
    r = record("p", "bo", 0, [1.0] * 400)
    r["ask_s"] = [0.1] * 100 + [0.3] * 100 + [0.5] * 200
    lines = long_runs.summary([r, record("p", "random", 0, [1.0] * 400)], [100], cap=200).splitlines()
    assert "| strategy | runs | 1–100 | 101–200 | 201–300 | 301–400 |" in lines
    assert "| bo | 1 | 0.100 | 0.300 | 0.500 | 0.500 |" in lines
    assert not any(line.startswith("| random | 1 | 0.0") for line in lines)  # no model, no row


def test_main_writes_the_tables_and_one_compact_run_per_cell(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(
        "".join(json.dumps(r) + "\n" for r in (record("p", "bo", 0, [3.0, 2.0]), record("p", "random", 0, [3.0, 3.0])))
    )
    second.write_text(json.dumps(record("p", "bo", 0, [3.0, 2.0, 1.0])) + "\n")  # the same cell, run longer
    out, packed = tmp_path / "summary.md", tmp_path / "runs.jsonl.gz"
    args = [str(first), str(second), "--budgets", "2,3", "--out", str(out), "--compact", str(packed)]
    assert long_runs.main(args) == 0
    assert "| p | bo | 1 | 2.0000 | 1.0000 | 3 (1/1) |" in out.read_text().splitlines()
    assert sorted((r["strategy"], len(r["values"])) for r in long_runs.load([packed])) == [("bo", 3), ("random", 2)]
