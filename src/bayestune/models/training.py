"""Which observations the models learn from, and the feasibility classifier built on them.

With a cap on the training set, the feasible observations keep their best third, most
recent third and a random rest, and failures their most recent ones, so suggestion time and
memory stay flat over long runs (TVM thesis 3.5).
"""

from __future__ import annotations

import numpy as np

from bayestune.history import History
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier


def capped_rows(history: History, targets: np.ndarray, cap: int | None, rng: np.random.Generator, *,
                feasible: bool) -> np.ndarray:
    """Indices of the feasible (or failed) rows of ``history`` to learn from, at most ``cap``
    (``None``: all); ``targets`` (to minimise) rank the feasible ones. The random rest is drawn
    from ``rng`` only when the cap bites."""
    mask = history.feasible if feasible else ~history.feasible
    rows = np.flatnonzero(mask)
    if cap is None or len(rows) <= cap:
        return rows
    if not feasible:
        return rows[-cap:]
    y = targets[rows]
    keep = set(rows[np.argsort(y)[: cap // 3]].tolist())
    keep.update(rows[-(cap // 3):].tolist())
    rest = np.setdiff1d(rows, np.fromiter(keep, int))
    keep.update(rng.choice(rest, size=cap - len(keep), replace=False).tolist())
    return np.sort(np.fromiter(keep, int))


def model_rows(history: History, targets: np.ndarray, cap: int | None, rng: np.random.Generator) -> np.ndarray:
    """Capped feasible and failed rows together (the classifier, the failure variance)."""
    return np.sort(np.concatenate([capped_rows(history, targets, cap, rng, feasible=True),
                                   capped_rows(history, targets, cap, rng, feasible=False)]))


def feasibility_classifier(encoder: FeatureEncoder, history: History, rows: np.ndarray, rng: np.random.Generator,
                           *, n_estimators: int = 100) -> FeasibilityClassifier:
    """P(feasible) learned from ``rows`` of ``history``, seeded from ``rng``."""
    F = encoder.transform(history.X[rows])
    return FeasibilityClassifier(n_estimators=n_estimators, seed=int(rng.integers(2**31))).fit(F, history.feasible[rows])
