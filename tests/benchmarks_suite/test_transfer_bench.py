import argparse
import json

import numpy as np

from benchmarks import transfer


def test_table_reports_medians_and_weights(tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    lines = [
        {
            "target": "dedispersion_W6600",
            "source": "dedispersion_A100",
            "method": m,
            "seed": s,
            "budget": 40,
            "ratio": [2.0] * 5 + [1.5] * 15 + [1.0] * 20,
            "optimum": 1.0,
            "wall_s": 1.0,
            "weights": [[0.0, 0.1], [0.5, 0.3]] if m != "cold" else [],
        }
        for m in ("cold", "model")
        for s in range(3)
    ]
    out.write_text("".join(json.dumps(r) + "\n" for r in lines))
    transfer.table(argparse.Namespace(results=str(out)))
    text = capsys.readouterr().out
    assert "| dedispersion_W6600 ← A100 | 5 | 2.00 [2.00, 2.00] n=3 |" in text
    assert "0.25 (ever > 0 in 3/3)" in text


def test_the_unrelated_source_keeps_the_values_but_not_their_places():
    from bayestune.transfer.runs import PriorRun

    y = np.arange(200.0)
    y[5] = np.nan
    run = PriorRun("a", np.arange(200.0).reshape(-1, 1), y)
    other = transfer.shuffled(run)
    assert np.isnan(other.y[5]) and np.array_equal(np.sort(other.y[run.feasible]), np.sort(y[run.feasible]))
    assert np.mean(other.y[run.feasible] == y[run.feasible]) < 0.05


def _record(method, seed, ratio, target="blur_2048", source="blur_1024", **extra):
    return {
        "target": target,
        "source": source,
        "method": method,
        "seed": seed,
        "budget": len(ratio),
        "ratio": ratio,
        "optimum": 1.0,
        "wall_s": 1.0,
        "weights": [],
        **extra,
    }


def test_summary_reports_evaluations_to_the_thresholds_and_the_unrelated_cost(tmp_path, capsys):
    out = tmp_path / "s.jsonl"
    cold = [2.0] * 10 + [1.08] * 10 + [1.04] * 20  # 1.10x at 11, 1.05x at 21
    auto = [1.2] + [1.02] * 39  # both at 2
    unrelated = [2.0] * 10 + [1.2] * 30  # 1.05x never
    lines = [_record("cold", s, cold) for s in range(3)]
    lines += [_record("auto", s, auto, gate={"open": True, "picks": 5, "closed_at": None}) for s in range(3)]
    lines += [
        _record("auto_unrelated", s, unrelated, gate={"open": False, "picks": 1, "closed_at": 2}) for s in range(3)
    ]
    out.write_text("".join(json.dumps(r) + "\n" for r in lines))
    transfer.summary(argparse.Namespace(results=str(out)))
    text = capsys.readouterr().out
    assert "| blur_2048 ← blur_1024 | 21 (3/3) / 11 (3/3) | 2 (3/3) / 2 (3/3) | >40 (0/3) / >40 (0/3) |" in text
    assert "| auto | 3 / 0 / 0 | 3 / 0 / 0 | 3 / 0 / 0 | 3 / 0 / 0 |" in text
    assert "| geometric mean | 40 | **1.154** |" in text  # 1.2 / 1.04
    assert "open 3/3, picks 5 [5, 5] | open 0/3, picks 1 [1, 1] |" in text


def test_the_sibling_spaces_replay_and_serve_as_each_others_prior_runs():
    from bayestune.transfer.runs import load_prior_run
    from benchmarks.transfer_siblings import DATA_DIR, _spell, _unspell, build_sibling_problem

    assert _unspell({"order": _spell((3, 2, 1, 0))})["order"] == (3, 2, 1, 0)
    problem = build_sibling_problem("blur_1024")
    run = load_prior_run(DATA_DIR / "blur_2048.json.gz", problem.space, problem.objective)
    assert run.n_feasible > 200 and problem.optimum > 0
    best = run.X[np.nanargmin(run.y)]
    assert problem.evaluate(problem.space.to_config(best)).feasible


def test_a_per_seed_unrelated_source_is_another_permutation():
    from bayestune.transfer.runs import PriorRun

    run = PriorRun("a", np.arange(100.0).reshape(-1, 1), np.arange(100.0))
    assert not np.array_equal(transfer.shuffled(run, 1).y, transfer.shuffled(run, 2).y)
    assert np.array_equal(transfer.shuffled(run).y, transfer.shuffled(run, transfer.SHUFFLE_SEED).y)
