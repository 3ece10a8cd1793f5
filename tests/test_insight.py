"""Feature importance per objective (RF importances, GP length-scales) and reading runs back."""

from __future__ import annotations

import numpy as np
import pytest

from bayestune.exceptions import BayestuneError
from bayestune.insight import FEASIBILITY, feature_importance, infer_space, load_run, run_importance
from bayestune.objectives import Objective
from bayestune.space import Categorical, Integer, Permutation, Real, Space


def synthetic(n=80, seed=0):
    space = Space([Real("x", 0.0, 1.0), Integer("k", 0, 9), Categorical("c", ["a", "b", "c"]), Permutation("p", 3)])
    rng = np.random.default_rng(seed)
    X = space.sample(n, rng)
    cols = space.columns(X)
    c_effect = np.select([cols["c"] == "a", cols["c"] == "b"], [0.0, 3.0], 6.0)
    Y = np.column_stack([1.0 + 5 * cols["x"] ** 2, 10.0 - c_effect])  # y0 <- x only; y1 <- c only
    feasible = cols["k"] <= 6  # failures depend on k only
    return space, X, Y, feasible


@pytest.mark.parametrize("method", ["rf", "gp"])
def test_importance_finds_the_parameter_each_objective_depends_on(method):
    space, X, Y, feasible = synthetic()
    objectives = [Objective("time"), Objective("score", "maximize")]
    imp = feature_importance(space, X, Y, objectives, feasible, method=method)
    assert max(imp["time"], key=imp["time"].get) == "x"
    assert max(imp["score"], key=imp["score"].get) == "c"
    for target in ("time", "score"):
        assert set(imp[target]) == {"x", "k", "c", "p"}  # the permutation's columns summed into one entry
        assert sum(imp[target].values()) == pytest.approx(1.0)
    assert max(imp[FEASIBILITY], key=imp[FEASIBILITY].get) == "k"


def test_importance_skips_objectives_without_enough_data_and_rejects_unknown_methods():
    space, X, Y, _ = synthetic(n=2)
    assert feature_importance(space, X, Y, [Objective("a"), Objective("b")]) == {}
    with pytest.raises(BayestuneError, match="allowed"):
        feature_importance(space, X, Y, [Objective("a"), Objective("b")], method="shap")


def test_infer_space_holds_every_configuration():
    configs = [
        {"n": 1, "t": 0.5, "s": "fast", "b": True, "p": [2, 0, 1], "o": 64},
        {"n": 20, "t": 0.25, "s": "slow", "b": False, "p": [0, 1, 2], "o": 8},
        {"n": 7, "t": 0.75, "s": "fast", "b": True, "p": [1, 0, 2], "o": 1024},
    ]
    space = infer_space(configs)
    kinds = {p.name: p.kind for p in space.parameters}
    assert kinds == {
        "n": "ordinal",
        "t": "ordinal",
        "s": "categorical",
        "b": "categorical",
        "p": "permutation",
        "o": "ordinal",
    }
    for cfg in configs:
        space.validate_config(cfg)
    wide = infer_space([{"n": v} for v in range(0, 100, 3)])  # many integers: a range
    assert wide["n"].kind == "integer" and wide["n"].low == 0 and wide["n"].high == 99


def test_load_run_reads_objectives_space_and_trials(mo_journal):
    run = load_run(str(mo_journal))
    assert [(o.name, o.direction) for o in run.objectives] == [("cycles", "minimize"), ("util", "minimize")]
    assert run.space.names == ["tile", "par", "pipe", "clock", "order"]  # from the journal's metadata
    assert len(run.trials) == 24
    assert all(isinstance(t.config["order"], tuple) for t in run.trials)
    X, Y, feasible = run.matrix()
    assert X.shape == (24, run.space.width) and Y.shape == (24, 2)
    assert (~feasible).sum() >= 1  # the output constraint util <= 90 made some infeasible
    imp = run_importance(run)
    assert set(imp) >= {"cycles", "util"}
    assert max(imp["util"], key=imp["util"].get) == "par"
