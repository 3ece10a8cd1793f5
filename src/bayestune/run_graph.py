"""The DAG of a finished run: what ``bayestune dag`` draws and the report shows.

Why its own module: it reads a finished run's metadata (:mod:`bayestune.run`) and builds a
``bograph`` strategy from it, so it stands above both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayestune.bograph.model import FittedGraph
from bayestune.exceptions import BayestuneError
from bayestune.history import History
from bayestune.run import META_STRATEGY, META_STRATEGY_OPTIONS
from bayestune.strategies.bograph import BoGraph


def graph_of_run(run: Any, *, seed: int = 0) -> FittedGraph:
    """The DAG and node models of a finished run (a :class:`bayestune.run.Run`), learned from all
    of its feasible evaluations with the run's own ``bograph`` options (defaults for runs of
    other strategies): what ``bayestune dag`` draws and the report shows."""
    meta = run.meta
    options = dict(meta.get(META_STRATEGY_OPTIONS) or {}) if meta.get(META_STRATEGY) == BoGraph.name else {}
    # one fit of everything: the run's update schedule does not apply
    options.pop("budget", None)
    options.pop("relearn_every", None)
    if isinstance(options.get("relearn"), dict):
        options["relearn"] = {k: v for k, v in options["relearn"].items() if k not in ("budget", "every")}
    X, Y, feasible = run.matrix()
    if int(feasible.sum()) < 3:
        raise BayestuneError(f"a DAG needs at least 3 feasible evaluations, but the run has {int(feasible.sum())}")
    history = History(
        run.space,
        run.objectives,
        X,
        Y,
        feasible,
        np.empty((0, run.space.width)),
        metrics=[t.values for t in run.trials],
    )
    strategy = BoGraph(run.space, run.objectives[:1], np.random.default_rng(seed), **options)
    return strategy.fit_graph(history)
