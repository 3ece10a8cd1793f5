"""Every plot writes a non-empty PNG from a real journal."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from bayestune import plot  # noqa: E402
from bayestune.exceptions import BayestuneError  # noqa: E402
from bayestune.run import load_run  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(path):
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 5_000


def test_each_plot_of_a_multi_objective_run(mo_journal, tmp_path):
    run = load_run(str(mo_journal))
    assert_png(plot.plot_convergence(run, tmp_path / "c.png"))
    assert_png(plot.plot_pareto(run, tmp_path / "p.png"))
    assert_png(plot.plot_pareto(run, tmp_path / "p2.png", x="util", y="cycles"))
    assert_png(plot.plot_importance({"cycles": {"a": 0.7, "b": 0.3}, "util": {"a": 0.1, "b": 0.9}}, tmp_path / "i.png"))
    assert_png(plot.plot_parallel(run, tmp_path / "pc.png", color_by="util"))


def test_plot_run_writes_all_kinds(mo_journal, so_journal, tmp_path):
    files = plot.plot_run(load_run(str(mo_journal)), tmp_path / "mo")
    assert sorted(files) == ["convergence", "importance", "parallel", "pareto"]
    for paths in files.values():
        for p in paths:
            assert_png(p)
    files = plot.plot_run(load_run(str(so_journal)), tmp_path / "so")
    assert "pareto" not in files and len(files) == 3


def test_plot_errors_are_clear(so_journal, mo_journal, tmp_path):
    with pytest.raises(BayestuneError, match="two objectives"):
        plot.plot_pareto(load_run(str(so_journal)), tmp_path / "x.png")
    with pytest.raises(BayestuneError, match="unknown objective"):
        plot.plot_pareto(load_run(str(mo_journal)), tmp_path / "x.png", x="area")
    with pytest.raises(BayestuneError, match="allowed"):
        plot.plot_run(load_run(str(mo_journal)), tmp_path, ["histogram"])
    assert_png(plot.plot_importance({}, tmp_path / "empty.png"))


def test_parallel_plot_of_a_perfect_tile_space(tmp_path):
    """A tiling is one axis (its distinct tilings in order), like a permutation."""
    from bayestune.objectives import Objective
    from bayestune.optimizer import Optimizer
    from bayestune.space import Integer, PerfectTile, Space
    from bayestune.storage import Journal

    path = tmp_path / "tile.db"
    with Journal(path) as journal:
        opt = Optimizer(
            Space([PerfectTile("tile", 64, 2), Integer("unroll", 1, 8)]),
            objectives=[Objective("t")],
            strategy="random",
            seed=0,
            journal=journal,
        )
        opt.optimize(lambda cfg: {"t": abs(cfg["tile"][1] - 8) + cfg["unroll"]}, 12)
    run = load_run(str(path))
    assert_png(plot.plot_parallel(run, tmp_path / "pc.png"))
    X, _, _ = run.matrix()
    labels, cols, ticks = plot._axis_values(run, X)
    assert labels == ["tile", "unroll"] and all(len(c) == len(X) for c in cols)
    assert ticks[1] == [(0.0, "1"), (1.0, "8")]
