"""Which observations the models learn from, and the feasibility classifier built on them.

A cap on the training set keeps suggestion time and memory flat over long runs (the GP's
cost grows with the cube of its points). Which feasible observations stay is the *memory
policy* (TVM thesis 3.5 and 4); failures always keep their most recent ones:

========  =======================================================  =========================
policy    keeps (``cap`` = the window)                             suits
========  =======================================================  =========================
mixed     the best third, the most recent third, a random rest     the default: the optimum's
                                                                   neighbourhood and the
                                                                   current region both stay
lru       the ``cap`` most recent                                  exploitation late in a run,
                                                                   spaces with large invalid
                                                                   regions (they stay known),
                                                                   a drifting machine; the
                                                                   thesis saw it explore too
                                                                   little on CNNs
best      the ``cap`` best so far (a best-overall heap of          refining one good region of
          observations)                                            a stable machine
reset     the best so far plus everything since the memory last    escaping a model stuck on
          filled up: when it holds ``cap`` rows all is forgotten   early data (the thesis's
          but the best, which is registered again                  naive policy, its best on
                                                                   CNNs); forgets where the
                                                                   invalid regions are
========  =======================================================  =========================

The thesis's other "heap" — measuring the best-scoring candidates across all design spaces
rather than the best per design space — is what a bayestune batch does anyway: one
acquisition is maximised over the joint space (see :mod:`bayestune.integrations.tvm`).
"""

from __future__ import annotations

import numpy as np

from bayestune.history import History
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier


#: The memory policies of :func:`capped_rows`; the first is the default.
MEMORY_POLICIES = ("mixed", "lru", "best", "reset")


def capped_rows(history: History, targets: np.ndarray, cap: int | None, rng: np.random.Generator, *,
                feasible: bool, policy: str = "mixed") -> np.ndarray:
    """Indices of the feasible (or failed) rows of ``history`` to learn from, at most ``cap``
    (``None``: all) chosen by the memory ``policy`` (see the module table); ``targets`` (to
    minimise) rank the feasible ones. Only ``mixed`` draws from ``rng``, and only when the cap bites."""
    if policy not in MEMORY_POLICIES:
        raise ValueError(f"unknown memory policy {policy!r}; allowed: {list(MEMORY_POLICIES)}")
    mask = history.feasible if feasible else ~history.feasible
    rows = np.flatnonzero(mask)
    if cap is None or len(rows) <= cap:
        return rows
    if not feasible or policy == "lru":
        return rows[-cap:]
    y = targets[rows]
    if policy == "best":
        return np.sort(rows[np.argsort(y, kind="stable")[:cap]])
    if policy == "reset":
        # The first cap rows fill the memory; each reset keeps the best and refills cap - 1 rows.
        since_reset = (len(rows) - cap - 1) % max(cap - 1, 1) + 1
        return np.union1d(rows[-since_reset:], rows[[int(np.argmin(y))]])
    keep = set(rows[np.argsort(y)[: cap // 3]].tolist())
    keep.update(rows[-(cap // 3):].tolist())
    rest = np.setdiff1d(rows, np.fromiter(keep, int))
    keep.update(rng.choice(rest, size=cap - len(keep), replace=False).tolist())
    return np.sort(np.fromiter(keep, int))


def model_rows(history: History, targets: np.ndarray, cap: int | None, rng: np.random.Generator, *,
               policy: str = "mixed") -> np.ndarray:
    """Capped feasible and failed rows together (the classifier, the failure variance)."""
    return np.sort(np.concatenate([capped_rows(history, targets, cap, rng, feasible=True, policy=policy),
                                   capped_rows(history, targets, cap, rng, feasible=False, policy=policy)]))


def feasibility_classifier(encoder: FeatureEncoder, history: History, rows: np.ndarray, rng: np.random.Generator,
                           *, n_estimators: int = 100) -> FeasibilityClassifier:
    """P(feasible) learned from ``rows`` of ``history``, seeded from ``rng``."""
    F = encoder.transform(history.X[rows])
    return FeasibilityClassifier(n_estimators=n_estimators, seed=int(rng.integers(2**31))).fit(F, history.feasible[rows])
