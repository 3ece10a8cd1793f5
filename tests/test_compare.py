"""compare: best-so-far traces, evaluations to within 5 % of the overall best, the overlay figure."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bayestune.compare import evaluations_to_reach, load_traces, overall_best, plot_comparison, summary_rows
from bayestune.exceptions import BayestuneError
from bayestune.objectives import Objective
from tests.export.conftest import config, write_journal


@pytest.fixture
def two_runs(tmp_path):
    slow = write_journal(
        tmp_path / "slow.db",
        [
            (config(1, 0.0), None),
            (config(2, 0.0), {"runtime": 10.0}),
            (config(3, 0.0), {"runtime": 4.0}),
            (config(4, 0.0), {"runtime": 1.02}),
        ],
    )
    fast = write_journal(tmp_path / "fast.db", [(config(1, 0.0), {"runtime": 1.0}), (config(2, 0.0), {"runtime": 3.0})])
    return str(slow), str(fast)


def test_traces_and_the_table(two_runs):
    objective, traces = load_traces(two_runs)
    assert objective.name == "runtime"
    np.testing.assert_array_equal(traces[0].best_so_far, [np.nan, 10.0, 4.0, 1.02])
    assert traces[0].n_failed == 1 and traces[0].label == "slow (random)"
    assert overall_best(objective, traces) == 1.0
    rows = summary_rows(objective, traces)
    # ranked: by the confirmed value where a run has one, else by the best
    assert [(r["best"], r["to_within"], r["evaluations"]) for r in rows] == [(1.0, 1, 2), (1.02, 4, 4)]


def test_confirmed_values_rank_before_the_searchs_best(two_runs):
    """A run whose best was a lucky sample ranks by what its confirmation re-measured."""
    from bayestune import run as run_meta
    from bayestune.storage.journal import Journal

    slow, fast = two_runs
    for path, value in ((slow, 1.05), (fast, 2.5)):
        with Journal(path) as journal:
            journal.set_meta(
                run_meta.META_CONFIRMATION,
                {
                    "objective": "runtime",
                    "winner": {"trial_id": 1, "value": value, "low": None, "high": None, "rounds": 6},
                },
            )
    objective, traces = load_traces([slow, fast])
    rows = summary_rows(objective, traces)
    assert [(r["run"], r["confirmed"]) for r in rows] == [("slow (random)", 1.05), ("fast (random)", 2.5)]


def test_maximised_objective_and_unreachable_target():
    from bayestune.compare import Trace

    trace = Trace("t", "t.db", np.array([np.nan, 5.0, 9.6]), 1)
    assert evaluations_to_reach(trace, Objective("x", "maximize"), 10.0) == 3
    assert evaluations_to_reach(trace, Objective("x", "maximize"), 20.0) is None
    assert evaluations_to_reach(trace, Objective("x"), math.nan) is None


def test_unknown_objective_is_named(two_runs):
    with pytest.raises(BayestuneError, match="no objective 'energy'"):
        load_traces(two_runs, "energy")


def test_figure_png_and_svg(two_runs, tmp_path):
    pytest.importorskip("matplotlib")
    objective, traces = load_traces(two_runs)
    png = plot_comparison(objective, traces, tmp_path / "c.png")
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 5_000
    svg = plot_comparison(objective, traces, tmp_path / "c.svg")
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "slow (random)" in text
    with pytest.raises(BayestuneError, match=r"\.png or \.svg"):
        plot_comparison(objective, traces, tmp_path / "c.pdf")
