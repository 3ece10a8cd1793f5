"""Log summarisation: constants dropped, groups by dotted prefix reduced by factor analysis,
the mapping back to the original names, protected metrics kept, and recursion when wide."""

from __future__ import annotations

import numpy as np
import pytest

from bayestune.bograph.summarise import SummarySettings, summarise
from bayestune.exceptions import BayestuneError


def _logs(n: int = 20, seed: int = 0) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    return {"cpu.l1.miss": a + 0.05 * rng.normal(size=n), "cpu.l1.hit": -a + 0.05 * rng.normal(size=n),
            "cpu.l2.miss": rng.normal(size=n), "const": np.full(n, 3.0), "power": np.exp(a)}, a


def test_groups_share_one_factor_and_constants_are_dropped():
    logs, a = _logs()
    s = summarise(logs)
    assert s.dropped == ["const"]
    assert s.sources()["cpu.l1"] == ["cpu.l1.miss", "cpu.l1.hit"]
    Z = s.transform(logs)
    factor = Z[:, s.names.index("cpu.l1")]
    assert abs(np.corrcoef(factor, a)[0, 1]) > 0.99
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
