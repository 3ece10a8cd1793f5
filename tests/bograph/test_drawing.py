"""The DAG picture: layered layout and the formats it writes."""

from __future__ import annotations

import pytest

from bayestune.bograph.dag import new_dag
from bayestune.bograph.drawing import draw_dag, layered_positions
from bayestune.exceptions import BayestuneError

ROLES = {"a": "parameter", "b": "parameter", "m": "metric", "y": "objective"}


def test_parameters_left_objective_right_metrics_between():
    g = new_dag(ROLES, [("a", "m"), ("m", "y"), ("b", "y")])
    pos = layered_positions(g)
    assert pos["a"][0] == pos["b"][0] == 0 and pos["m"][0] == 1 and pos["y"][0] == 2


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_writes_png_and_svg(tmp_path, suffix, magic):
    g = new_dag(ROLES, [("a", "m"), ("m", "y"), ("b", "y")])
    path = draw_dag(g, tmp_path / f"dag{suffix}", quality={"m": 0.9, "y": float("nan")}, title="t")
    assert path.read_bytes().startswith(magic)
    with pytest.raises(BayestuneError, match=r"\.png"):
        draw_dag(g, tmp_path / "dag.pdf")
