"""Log summarisation: constants dropped, groups by dotted prefix reduced by factor analysis,
the mapping back to the original names, protected metrics kept, and recursion when wide."""

from __future__ import annotations

import numpy as np
import pytest

import bayestune.bograph.summarise as summarise_module
from bayestune.bograph.summarise import SummarySettings, summarise
from bayestune.exceptions import BayestuneError


def _logs(n: int = 20, seed: int = 0) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    # noise enough that no two metrics are functions of each other (the stand-in test's business)
    return {
        "cpu.l1.miss": a + 0.2 * rng.normal(size=n),
        "cpu.l1.hit": -a + 0.2 * rng.normal(size=n),
        "cpu.l2.miss": rng.normal(size=n),
        "const": np.full(n, 3.0),
        "power": np.exp(a),
    }, a


def test_groups_share_one_factor_and_constants_are_dropped():
    logs, a = _logs()
    s = summarise(logs)
    assert s.dropped == ["const"]
    assert s.sources()["cpu.l1"] == ["cpu.l1.miss", "cpu.l1.hit"]
    Z = s.transform(logs)
    factor = Z[:, s.names.index("cpu.l1")]
    assert abs(np.corrcoef(factor, a)[0, 1]) > 0.97
    assert np.allclose(Z.std(axis=0), 1.0)


def test_protected_metrics_stay_their_own_column_and_positive_spans_are_logged():
    logs, _ = _logs()
    s = summarise(logs, protected=["cpu.l1.miss", "const"])
    assert "cpu.l1.miss" in s.names and "const" in s.names and "cpu.l1.hit" in s.names
    assert "power" in s.logged and "cpu.l2.miss" not in s.logged


def test_no_grouping_keeps_every_informative_metric():
    logs, _ = _logs()
    s = summarise(logs, settings=SummarySettings(grouping=False))
    assert sorted(s.names) == ["cpu.l1.hit", "cpu.l1.miss", "cpu.l2.miss", "power"]


def test_wide_summaries_are_regrouped_one_prefix_level_up():
    rng = np.random.default_rng(1)
    n = 25
    logs = {f"sys.c{i}.m{j}": rng.normal(size=n) for i in range(5) for j in range(2)}
    flat = summarise(logs, settings=SummarySettings(max_columns=0))
    assert len(flat.names) == 5
    merged = summarise(logs, settings=SummarySettings(max_columns=3))
    assert merged.names == ["sys"] and len(merged.sources()["sys"]) == 10


def test_transform_applies_the_fitted_summary_to_new_rows():
    logs, _ = _logs()
    s = summarise(logs)
    new, _ = _logs(n=5, seed=3)
    assert s.transform(new).shape == (5, len(s.names))
    with pytest.raises(BayestuneError, match="missing"):
        s.transform({"power": np.ones(5)})


def test_bad_logs_are_named():
    with pytest.raises(BayestuneError, match=r"\['x'\] hold NaN"):
        summarise({"x": np.array([1.0, np.nan])})
    with pytest.raises(BayestuneError, match="different lengths"):
        summarise({"x": np.ones(3), "y": np.ones(4)})


# ---- stand-ins: metrics that are functions of the objective or of each other -------------
def _pgbench_like(n: int = 12, seed: int = 0) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Throughput, and logs like PostgreSQL's: latency is 4000 / tps, the commit counter follows
    tps up to a little noise, the block reads do not."""
    rng = np.random.default_rng(seed)
    tps = rng.uniform(300.0, 3000.0, n)
    return tps, {
        "latency_ms": 4000.0 / tps,
        "Database.xact_commit": 8.0 * tps + rng.normal(size=n),
        "Database.blks_read": rng.uniform(1e3, 1e5, n),
        "Bgwriter.buffers_clean": rng.uniform(0, 50, n),
    }


def test_functions_of_the_objective_are_set_aside_with_the_reason():
    tps, logs = _pgbench_like()
    s = summarise(logs, objective=tps, objective_name="tps")
    assert sorted(s.stand_ins) == ["Database.xact_commit", "latency_ms"]
    assert "a function of tps (rank correlation -1.0000)" == s.stand_ins["latency_ms"]
    assert not {m for c in s.sources().values() for m in c} & set(s.stand_ins)
    assert s.sources()["Database.blks_read"] == ["Database.blks_read"]  # its group-mate went; it stays
    assert s.transform(logs).shape == (12, len(s.names))


def test_stand_ins_are_not_looked_for_below_the_minimum_rows_or_when_off(monkeypatch):
    tps, logs = _pgbench_like(n=7)
    assert summarise(logs, objective=tps).stand_ins == {}  # 7 < STAND_IN_MIN_ROWS = 8: a perfect order is chance
    monkeypatch.setattr(summarise_module, "STAND_IN_MIN_ROWS", 5)
    assert "latency_ms" in summarise(logs, objective=tps).stand_ins
    tps, logs = _pgbench_like()
    assert summarise(logs, objective=tps, settings=SummarySettings(stand_in_threshold=None)).stand_ins == {}
    with pytest.raises(BayestuneError, match="objective has 3 values for 12 rows"):
        summarise(logs, objective=tps[:3])


def test_of_metrics_that_are_functions_of_each_other_one_is_kept():
    rng = np.random.default_rng(2)
    a = rng.uniform(1.0, 2.0, 15)
    logs = {"x.a": a, "x.a_cubed": a**3, "x.coarse": np.floor(a * 20) / 20, "y.other": rng.normal(size=15)}
    s = summarise(logs)  # no objective: only the duplicates
    # the most distinct values is kept (a, a³ tie: by name); the rounded copy has fewer
    assert s.stand_ins == {
        "x.a_cubed": "a function of x.a (rank correlation +1.0000)",
        "x.coarse": s.stand_ins["x.coarse"],
    }
    assert s.stand_ins["x.coarse"].startswith("a function of x.a (rank correlation +0.99")
    assert summarise(logs, protected=["x.a_cubed"]).stand_ins.keys() == {"x.a", "x.coarse"}


def test_a_factor_that_tracks_the_objective_is_set_aside_though_no_member_does():
    rng = np.random.default_rng(0)
    u = rng.normal(size=30)
    logs = {f"g.c{i}": u + 0.2 * rng.normal(size=30) for i in range(10)}
    logs["h.free"] = rng.normal(size=30)
    s = summarise(logs, objective=u, objective_name="y")
    assert list(s.stand_ins) == ["g"] and s.stand_ins["g"].startswith("a factor of 10 metrics that is a function of y")
    assert s.names == ["h.free"]


def test_stand_in_settings_are_checked():
    with pytest.raises(BayestuneError, match="stand_in_threshold must be in"):
        SummarySettings(stand_in_threshold=1.5)
