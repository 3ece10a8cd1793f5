"""Maximising an acquisition function over a mixed, constrained space.

Small feasible spaces are scored exhaustively (exact, and cheap next to one evaluation).
Otherwise BaCO's multi-start local search: score many feasible random samples, start from
the best of them plus the best evaluated configurations, and climb by one-parameter moves
(permutation swaps/moves) while the acquisition improves. Every candidate scored along the
way is kept, so the answer is the best *unevaluated* configuration seen by any climb.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bayestune.settings import Rule, Settings
from bayestune.space.space import Space

Score = Callable[[np.ndarray], np.ndarray]

#: Climbs that also start from the best evaluated configurations, and the moves per climb.
N_EVALUATED_STARTS = 3
MAX_STEPS = 50
#: Spaces with at most this many feasible configurations are scored exhaustively.
EXHAUSTIVE_LIMIT = 50_000


@dataclass(frozen=True)
class AcquisitionSearchSettings(Settings):
    """How an acquisition is maximised (the ``acquisition_search`` option group). BaCO's public
    defaults are 30,000 samples and 10 starts; fewer samples keep the suggestion overhead low
    with the same climbs."""

    method: str = (
        "local"  # local (multi-start local search) | random (score random samples only: BaCO Fig. 9's ablation)
    )
    n_samples: int = 5000  # feasible random samples scored before the climbs start
    n_starts: int = 10  # climbs from the best-scoring samples
    epsilon: float = 0.0  # chance of a random suggestion instead of the model's (HyperMapper's and BaCO's epsilon_greedy_threshold: peer behaviour)

    def rules(self) -> list[Rule]:
        return [
            self.one_of("method", ("local", "random")),
            self.at_least("n_samples", 1),
            self.at_least("n_starts", 1),
            ("epsilon", 0.0 <= self.epsilon <= 1.0, "`0 <= epsilon <= 1`"),
        ]


class _Pool:
    """Every candidate scored so far; the best unseen ones are picked at the end."""

    def __init__(self, space: Space, seen: set[bytes]) -> None:
        self.space, self.seen = space, seen
        self._X: list[np.ndarray] = []
        self._scores: list[np.ndarray] = []

    def add(self, X: np.ndarray, scores: np.ndarray) -> None:
        self._X.append(np.asarray(X, dtype=float).reshape(-1, self.space.width))
        self._scores.append(np.asarray(scores, dtype=float).reshape(-1))

    def __len__(self) -> int:
        return sum(len(s) for s in self._scores)

    def top(self, n: int) -> np.ndarray:
        if not self._X:
            return np.empty((0, self.space.width))
        X, scores = np.concatenate(self._X), np.concatenate(self._scores)
        order = np.argsort(-np.where(np.isfinite(scores), scores, -np.inf), kind="stable")
        picked: list[np.ndarray] = []
        taken: set[bytes] = set()
        for i in order:
            if not np.isfinite(scores[i]):
                break
            key = X[i].tobytes()
            if key in self.seen or key in taken:
                continue
            taken.add(key)
            picked.append(X[i])
            if len(picked) == n:
                break
        return np.array(picked).reshape(-1, self.space.width)


def maximize(
    space: Space,
    score: Score,
    rng: np.random.Generator,
    *,
    seen: set[bytes],
    n: int = 1,
    candidates: np.ndarray | None = None,
    evaluated_best: np.ndarray | None = None,
    settings: AcquisitionSearchSettings | None = None,
) -> np.ndarray:
    """Up to ``n`` unseen feasible rows with the highest ``score``, best first.

    ``candidates``: every feasible unseen row (exhaustive mode). ``settings.method="random"``
    scores random samples only (the ablation of BaCO's Fig. 9).
    """
    settings = settings or AcquisitionSearchSettings()
    local = settings.method == "local"
    pool = _Pool(space, seen)
    if candidates is not None:
        if len(candidates):
            pool.add(candidates, score(candidates))
        return pool.top(n)
    samples = space.sample(settings.n_samples, rng, method="cot")
    sample_scores = score(samples)
    pool.add(samples, sample_scores)
    if not local:
        return pool.top(n)
    order = np.argsort(-np.where(np.isfinite(sample_scores), sample_scores, -np.inf))
    starts = [samples[order[: settings.n_starts]]]
    if evaluated_best is not None and len(evaluated_best):
        starts.append(evaluated_best[:N_EVALUATED_STARTS])
    current = np.concatenate(starts)
    current_scores = score(current)
    active = np.ones(len(current), dtype=bool)
    for _ in range(MAX_STEPS):
        if not active.any():
            break
        idx = np.flatnonzero(active)
        N, local_owner = space.neighbours_of_many(current[idx], rng)
        if not len(N):
            break
        who = idx[local_owner]
        s = score(N)
        pool.add(N, s)
        owners, best = _best_of_each(who, s)
        better = s[best] > current_scores[owners]
        owners, best = owners[better], best[better]
        current[owners], current_scores[owners] = N[best], s[best]
        moved = np.zeros(len(current), dtype=bool)
        moved[owners] = True
        active &= moved
    top = pool.top(n)
    if len(top) < n:  # a tiny or exhausted neighbourhood: top up from fresh samples
        extra = space.sample(max(n * 20, 200), rng, method="cot")
        pool.add(extra, score(extra))
        top = pool.top(n)
    return top


def _best_of_each(who: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct owners in ``who`` (ascending) and, for each, the position of its highest
    score in ``s``: the first such position on ties and the first NaN if any, as ``np.argmax``
    over each owner's positions picks it."""
    if np.isnan(s).any():
        owners = np.unique(who)
        return owners, np.array([np.flatnonzero(who == i)[np.argmax(s[who == i])] for i in owners], dtype=np.int64)
    order = np.lexsort((np.arange(len(s)), -s, who))  # by owner, then score descending, then position
    firsts = order[np.concatenate([[0], np.flatnonzero(np.diff(who[order])) + 1])]
    return who[firsts], firsts
