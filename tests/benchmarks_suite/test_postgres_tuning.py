"""The PostgreSQL benchmark's arithmetic: confirmed / default with its interval, and the table."""

from __future__ import annotations

import math

from benchmarks.postgres_tuning import mean_interval, ratio_interval, summarise


def test_the_ratio_interval_is_welch_on_log_tps():
    ratio, low, high = ratio_interval([300.0, 320.0, 310.0], [100.0, 120.0, 90.0, 110.0])
    assert math.isclose(ratio, 310.0 / 105.0)
    assert 1.0 < low < ratio < high  # three times the default, clearly apart
    _, low, high = ratio_interval([100.0, 130.0, 80.0], [100.0, 120.0, 90.0, 110.0])
    assert low < 1.0 < high  # within the noise: the interval holds 1
    assert all(math.isnan(v) for v in ratio_interval([300.0], [100.0, 110.0]))
    assert all(math.isclose(v, 2.0) for v in ratio_interval([200.0, 200.0], [100.0, 100.0]))  # no spread


def test_the_mean_over_seeds_has_a_t_interval():
    mean, low, high = mean_interval([1.1, 1.3, 1.2, float("nan")])
    assert math.isclose(mean, 1.2) and low < 1.2 < high
    assert math.isnan(mean_interval([1.5])[1]) and math.isnan(mean_interval([])[0])


def test_the_summary_names_the_durability_knobs_a_pick_turned_off():
    default = {"shared_buffers": 128, "synchronous_commit": "on"}
    pick = {"shared_buffers": 512, "synchronous_commit": "off"}
    trials = [{"id": 1, "origin": "default", "status": "ok", "tps": 100.0, "load": 1.0, "eval_s": 10.0}]
    updates = [
        {
            "n_rows": 16,
            "seconds": 1.25,
            "cut_short": False,
            "effective_dimension": 3,
            "summary_columns": 9,
            "stand_ins": ["Database.xact_commit", "latency_ms"],
        }
    ]
    records = [
        {
            "kind": "search",
            "strategy": "bo",
            "seed": 0,
            "budget": 1,
            "trials": trials,
            "wall_s": 12.0,
            "strategy_s": 2.0,
            "best_config": pick,
            "best_tps": 300.0,
            "structure_updates": updates,
        }
    ]
    records += [{"kind": "measure", "label": "default", "tps": v, "status": "ok", "load": 1.0} for v in (100, 110, 90)]
    records += [{"kind": "measure", "label": "bo/0", "tps": v, "status": "ok", "load": 1.0} for v in (300, 310, 290)]
    header = {
        "date": "today",
        "machine": "m",
        "server_version": 150000,
        "workload": "w",
        "knobs": "2",
        "budget": 1,
        "default_config": default,
        "durability_knobs": ["synchronous_commit"],
    }
    text = summarise(records, header)
    assert "| bo | 0 | 0/1 | 300 | 300 ± 10 (3) | 3.00 [" in text and "| synchronous_commit=off | 2 / 12 |" in text
    assert "| bo | 3.00 [nan, nan] | 1/1 |" in text
    assert "| bo/0 | 16 (1.2) | 0/1 | 9 | 2: Database.xact_commit, latency_ms |" in text
