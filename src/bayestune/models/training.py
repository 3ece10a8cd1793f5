"""Which observations the models learn from, and the feasibility classifier built on them.

A cap on the training set keeps suggestion time and memory flat over long runs (the GP's
cost grows with the cube of its points). ``bo`` and ``parego`` learn from at most
:data:`DEFAULT_MAX_TRAINING_POINTS` observations by default, so a run of up to that many
evaluations is exactly the uncapped one. A :class:`TrainingSet` is picked once per suggestion
and shared by the surrogate (its feasible rows), the feasibility classifier and the
failure-aware variance (feasible and failed rows), so all three see the same memory.

Failures keep their share of the cap (at most half of it: the classifier needs feasible rows
too), the most recent ones. Which feasible observations fill the rest is the *memory policy*
(TVM thesis 3.5 and 4):

========  =======================================================  =========================
policy    keeps (``k`` = the feasible window)                      suits
========  =======================================================  =========================
mixed     the best third, the most recent third, and a space-      the default: the optimum's
          filling rest (greedy farthest points in the model's      neighbourhood, the current
          encoding, no random draw)                                region and the coverage
                                                                   of the space all stay
lru       the ``k`` most recent                                    exploitation late in a run,
                                                                   spaces with large invalid
                                                                   regions (they stay known),
                                                                   a drifting machine; the
                                                                   thesis saw it explore too
                                                                   little on CNNs
best      the ``k`` best so far (a best-overall heap of            refining one good region of
          observations)                                            a stable machine
reset     the best so far plus everything since the memory last    escaping a model stuck on
          filled up: when it holds ``k`` rows all is forgotten     early data (the thesis's
          but the best, which is registered again                  naive policy, its best on
                                                                   CNNs); forgets where the
                                                                   invalid regions are
========  =======================================================  =========================

The thesis's other "heap" — measuring the best-scoring candidates across all design spaces
rather than the best per design space — is what a bayestune batch does anyway: one
acquisition is maximised over the joint space (see :mod:`bayestune.integrations.tvm`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bayestune.history import History
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier

#: The memory policies of :class:`TrainingSet`; the first is the default.
MEMORY_POLICIES = ("mixed", "lru", "best", "reset")
#: ``max_training_points`` of ``bo`` and ``parego``: past this many observations a suggestion's
#: cost stops growing (benchmarks/overhead.py: ~0.4 s and ~60 MB from 500 to 10,000 on the mixed
#: space), and shorter runs are unchanged.
DEFAULT_MAX_TRAINING_POINTS = 500
#: Rows of the distance matrix computed at once by the space-filling pick (bounds its memory).
_CHUNK = 2048


@dataclass(frozen=True)
class TrainingSet:
    """The rows of a history one suggestion's models learn from (sorted indices)."""

    feasible: np.ndarray  # what the surrogate learns from
    failed: np.ndarray  # failures the classifier and the failure-aware variance also see

    @property
    def rows(self) -> np.ndarray:
        """Feasible and failed rows together, in history order."""
        return np.sort(np.concatenate([self.feasible, self.failed]))

    @classmethod
    def choose(
        cls,
        history: History,
        targets: np.ndarray,
        cap: int | None,
        encode: Callable[[np.ndarray], np.ndarray],
        *,
        policy: str = "mixed",
    ) -> TrainingSet:
        """At most ``cap`` rows of ``history`` (``None``: all) by the memory ``policy`` (module
        table); ``targets`` (to minimise) rank the feasible rows, ``encode`` maps rows of
        ``history.X`` to the model's features for the space-filling rest. Draws no random numbers."""
        if policy not in MEMORY_POLICIES:
            raise ValueError(f"unknown memory policy {policy!r}; allowed: {list(MEMORY_POLICIES)}")
        if cap is not None and cap < 2:
            raise ValueError(f"a training cap must be at least 2 (a feasible and a failed row), but got {cap}")
        ok, failed = np.flatnonzero(history.feasible), np.flatnonzero(~history.feasible)
        if cap is None or len(ok) + len(failed) <= cap:
            return cls(ok, failed)
        n_failed, n_ok = split_cap(cap, len(ok), len(failed))
        keep_failed = failed[len(failed) - n_failed :]
        return cls(feasible_window(history, targets, ok, n_ok, encode, policy), keep_failed)


def split_cap(cap: int, n_ok: int, n_failed: int) -> tuple[int, int]:
    """(failed, feasible) rows a ``cap`` keeps of ``n_ok + n_failed > cap``: failures their
    share, rounded up so one is never dropped to nothing, but at most half; the feasible rows the
    rest. Either side takes what the other cannot fill."""
    share = min(cap // 2, math.ceil(cap * n_failed / (n_ok + n_failed)))
    failed = min(n_failed, max(share, cap - n_ok))
    return failed, min(n_ok, cap - failed)


def feasible_window(
    history: History,
    targets: np.ndarray,
    ok: np.ndarray,
    k: int,
    encode: Callable[[np.ndarray], np.ndarray],
    policy: str,
) -> np.ndarray:
    """``k`` of the feasible rows ``ok`` (sorted) by the memory ``policy``."""
    if k >= len(ok):
        return ok
    y = targets[ok]
    if policy == "lru":
        return ok[-k:]
    if policy == "best":
        return np.sort(ok[np.argsort(y, kind="stable")[:k]])
    if policy == "reset":
        # The first k rows fill the memory; each reset keeps the best and refills k - 1 rows.
        since_reset = (len(ok) - k - 1) % max(k - 1, 1) + 1
        return np.union1d(ok[-since_reset:], ok[[int(np.argmin(y))]])
    chosen = np.zeros(len(ok), dtype=bool)
    chosen[np.argsort(y, kind="stable")[: k // 3]] = True
    chosen[len(ok) - k // 3 :] = True
    rest = k - int(chosen.sum())
    if rest > 0:
        chosen[farthest_points(encode(history.X[ok]), chosen, rest)] = True
    return ok[chosen]


def farthest_points(F: np.ndarray, chosen: np.ndarray, m: int) -> np.ndarray:
    """Indices of ``m`` rows of ``F`` not yet ``chosen``, each the farthest (Euclidean) from all
    chosen before it (Gonzalez's greedy): the rest of the memory covers the regions the best and
    the recent rows leave out. Ties go to the earliest row."""
    F = np.asarray(F, dtype=float)
    sq = np.einsum("ij,ij->i", F, F)
    nearest = np.full(len(F), np.inf)
    anchors = np.flatnonzero(chosen)
    for lo in range(0, len(F), _CHUNK):  # distance to the nearest chosen row, a block at a time
        block = F[lo : lo + _CHUNK]
        d = sq[lo : lo + _CHUNK, None] + sq[None, anchors] - 2.0 * block @ F[anchors].T
        if len(anchors):
            nearest[lo : lo + _CHUNK] = d.min(axis=1)
    nearest[chosen] = -np.inf
    picks = np.empty(m, dtype=int)
    for j in range(m):
        i = int(np.argmax(nearest))
        picks[j] = i
        nearest = np.minimum(nearest, np.maximum(sq + sq[i] - 2.0 * F @ F[i], 0.0))
        nearest[picks[: j + 1]] = -np.inf
    return picks


def feasibility_classifier(
    encoder: FeatureEncoder, history: History, rows: np.ndarray, rng: np.random.Generator, *, n_estimators: int = 100
) -> FeasibilityClassifier:
    """P(feasible) learned from ``rows`` of ``history``, seeded from ``rng``."""
    F = encoder.transform(history.X[rows])
    return FeasibilityClassifier(n_estimators=n_estimators, seed=int(rng.integers(2**31))).fit(
        F, history.feasible[rows]
    )
