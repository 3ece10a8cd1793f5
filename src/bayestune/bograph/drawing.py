"""The DAG as a picture: parameters on the left, metrics by depth, the objective on the right;
each modelled node labelled with its fit quality (how well its parents explain it)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bayestune.bograph.dag import METRIC, OBJECTIVE, PARAMETER, networkx_module
from bayestune.exceptions import BayestuneError

COLOURS = {PARAMETER: "#cfe2f3", METRIC: "#fff2cc", OBJECTIVE: "#f4cccc"}
FORMATS = (".png", ".svg")


def layered_positions(g: Any) -> dict[str, tuple[float, float]]:
    """x = depth (parameters at 0, objectives last), y = spread within the layer."""
    nx = networkx_module()
    depth: dict[str, int] = {}
    for layer, nodes in enumerate(nx.topological_generations(g)):
        for n in nodes:
            depth[n] = layer
    for n, role in g.nodes(data="role"):
        if role == PARAMETER:
            depth[n] = 0
    last = max((d for n, d in depth.items() if g.nodes[n]["role"] != OBJECTIVE), default=0) + 1
    for n, role in g.nodes(data="role"):
        if role == OBJECTIVE:
            depth[n] = last
    layers: dict[int, list[str]] = {}
    for n in g.nodes:
        layers.setdefault(depth[n], []).append(n)
    pos = {}
    for x, nodes in layers.items():
        for i, n in enumerate(sorted(nodes)):
            pos[n] = (float(x), (len(nodes) - 1) / 2.0 - i)
    return pos


def draw_dag(g: Any, path: str | Path, *, quality: Mapping[str, float] | None = None, title: str = "") -> Path:
    """Write the DAG ``g`` (node attribute ``role``) to ``path`` (.png or .svg)."""
    out = Path(path)
    if out.suffix.lower() not in FORMATS:
        raise BayestuneError(f"the DAG picture must be one of {list(FORMATS)}, but got {str(out)!r}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nx = networkx_module()
    quality = quality or {}
    pos = layered_positions(g)
    tallest = max((sum(1 for p in pos.values() if p[0] == x) for x in {p[0] for p in pos.values()}), default=1)
    width = 3.0 + 2.6 * (max((p[0] for p in pos.values()), default=0) + 1)
    fig, ax = plt.subplots(figsize=(width, max(3.0, 0.55 * tallest + 1.5)))
    labels = {}
    for n in g.nodes:
        q = quality.get(n)
        labels[n] = n if q is None or not math.isfinite(q) else f"{n}\nR²={q:.2f}"
    colours = [COLOURS.get(g.nodes[n].get("role"), "#eeeeee") for n in g.nodes]
    nx.draw_networkx_edges(
        g, pos, ax=ax, arrows=True, arrowsize=12, edge_color="#777777", connectionstyle="arc3,rad=0.05", node_size=1600
    )
    nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colours, node_size=1600, edgecolors="#555555")
    nx.draw_networkx_labels(g, pos, labels=labels, ax=ax, font_size=7)
    ax.set_title(title, fontsize=10)
    ax.axis("off")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
