import argparse
import json

import numpy as np
from benchmarks import transfer


def test_table_reports_medians_and_weights(tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    lines = [{"target": "dedispersion_W6600", "source": "dedispersion_A100", "method": m, "seed": s, "budget": 40,
              "ratio": [2.0] * 5 + [1.5] * 15 + [1.0] * 20, "optimum": 1.0, "wall_s": 1.0,
              "weights": [[0.0, 0.1], [0.5, 0.3]] if m != "cold" else []}
             for m in ("cold", "model") for s in range(3)]
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
