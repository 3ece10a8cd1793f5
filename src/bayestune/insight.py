"""Understanding a tuning run: which parameters matter for which objective (HyperMapper 2.0 §4.6).

Two estimates per objective, fitted to the feasible evaluations:

* ``"rf"``: the impurity-based feature importances of a random forest (HyperMapper's white
  box, its Table 5); a permutation parameter's several feature columns are summed;
* ``"gp"``: inverse length-scales of the mixed-kernel Gaussian process (a short length-scale
  means the objective changes quickly along that parameter).

Both are normalised to sum to one per objective. ``feasible`` (the random-forest
classifier of success against failure) tells which parameters drive the failures.

:func:`infer_space` gives a journal without a stored space one, inferred from the
configurations themselves (:func:`bayestune.run.load_run` reads journals).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.objectives import Objective
from bayestune.run import Run, load_run
from bayestune.space import Space
from bayestune.space.inference import infer_space

logger = logging.getLogger(__name__)

__all__ = [
    "FEASIBILITY",
    "IMPORTANCE_METHODS",
    "Run",
    "feature_importance",
    "infer_space",
    "load_run",
    "run_importance",
]

IMPORTANCE_METHODS = ("rf", "gp")
#: Name of the pseudo-objective whose importances explain feasibility.
FEASIBILITY = "feasible"


# ---- spaces and journals -------------------------------------------------------------------
# ---- feature importance ------------------------------------------------------------------
def _block_sums(encoder: Any, per_column: np.ndarray) -> dict[str, float]:
    out = {}
    for b in encoder.blocks:
        out[b.name] = float(np.sum(per_column[b.start : b.start + b.width]))
    total = sum(out.values())
    return {k: (v / total if total > 0 else 0.0) for k, v in out.items()}


def feature_importance(
    space: Space,
    X: np.ndarray,
    Y: np.ndarray,
    objectives: Sequence[Objective],
    feasible: np.ndarray | None = None,
    *,
    method: str = "rf",
    include_feasibility: bool = True,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """Importance of each parameter for each objective: ``{objective: {parameter: share}}``.

    Parameters with a single value are left out. ``include_feasibility`` adds
    :data:`FEASIBILITY` (random-forest classifier) when both outcomes occur.
    """
    if method not in IMPORTANCE_METHODS:
        raise BayestuneError(f"unknown importance method {method!r}; allowed: {list(IMPORTANCE_METHODS)}")
    from bayestune.models.encoding import FeatureEncoder

    X = np.asarray(X, dtype=float).reshape(-1, space.width)
    Y = np.asarray(Y, dtype=float).reshape(len(X), -1)
    feasible = np.ones(len(X), dtype=bool) if feasible is None else np.asarray(feasible, dtype=bool)
    encoder = FeatureEncoder(space)
    if encoder.width == 0:
        return {}
    out: dict[str, dict[str, float]] = {}
    for j, obj in enumerate(objectives):
        ok = feasible & np.isfinite(Y[:, j])
        if ok.sum() < 3:
            continue
        F, y = encoder.transform(X[ok]), Y[ok, j] * (1.0 if obj.minimize else -1.0)
        if method == "rf":
            from sklearn.ensemble import RandomForestRegressor

            z = np.log(y) if np.all(y > 0) else y
            forest = RandomForestRegressor(n_estimators=200, random_state=seed, n_jobs=1).fit(F, z)
            out[obj.name] = _block_sums(encoder, forest.feature_importances_)
        else:
            from bayestune.models.gp import GaussianProcess

            gp = GaussianProcess(encoder.blocks, seed=seed).fit(F, y)
            out[obj.name] = gp.feature_importance()
    if include_feasibility and feasible.any() and not feasible.all():
        from sklearn.ensemble import RandomForestClassifier

        clf = RandomForestClassifier(n_estimators=200, random_state=seed, n_jobs=1).fit(encoder.transform(X), feasible)
        out[FEASIBILITY] = _block_sums(encoder, clf.feature_importances_)
    return out


def run_importance(run: Run, *, method: str = "rf", seed: int = 0) -> dict[str, dict[str, float]]:
    """:func:`feature_importance` of a journaled run."""
    X, Y, feasible = run.matrix()
    return feature_importance(run.space, X, Y, run.objectives, feasible, method=method, seed=seed)
