"""A Hamming-ball trust region around the incumbent: the local-exploitation member of ``bo``.

Why: on tuning landscapes with a narrow optimum (a GPU kernel whose best block size is a needle
among poor neighbours) a stationary surrogate smooths the needle away, and the global maximiser
of the acquisition keeps proposing in a wrong basin. A genetic algorithm finds such needles by
changing one or two parameters of its best configurations. This region does the same, guided
by the model: it maximises the acquisition only over unevaluated configurations that differ
from the incumbent (the best feasible observation) in at most ``radius`` parameters, whatever
the values — for an ordinal, any value, not just the adjacent one.

The radius follows variable-neighbourhood search (Mladenović & Hansen 1997), the discrete form
of a trust region (Casmopolitan, Wan et al. 2021, uses Hamming balls the same way): it starts at
one parameter, grows by one after ``fail_tolerance`` consecutive local proposals that did not
yield a new incumbent, and falls back to one whenever the incumbent improves (by any proposal).
A ball with nothing unevaluated left grows at once.

With ``fail_tolerance: coverage`` the allowance is the ball itself: a ball grows once the configurations
that were unevaluated in it when the region arrived (re-centred or grown) have had as many
proposals, the acquisition ordering them, so an incumbent's one-parameter neighbourhood is
covered before the region looks further away (issue 39's diagnosis: proposals one parameter
from the incumbent improve it 14-21 % of the time, three or more away 0-2 %). For very large
balls (and continuous parameters) the allowance grows as ``cap * sqrt(n / cap)`` past ``cap``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.search.local_search import Score
from bayestune.settings import Rule, Settings
from bayestune.space.space import Space


def parameters_changed(space: Space, X: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per row of ``X``, how many parameters differ from ``x`` (the Hamming distance over
    parameters, a permutation counting as one parameter)."""
    X = np.asarray(X, dtype=float).reshape(-1, space.width)
    count = np.zeros(len(X), dtype=int)
    for s in space.slices.values():
        count += np.any(X[:, s] != x[s], axis=1)
    return count


#: ``fail_tolerance`` that grows a ball once it is covered rather than after a fixed count.
COVERAGE = "coverage"
#: Coverage growth: balls with more unevaluated configurations get a square-root share of them.
COVERAGE_CAP = 24
#: Why ``trust_region.after`` is gone.
REMOVED_AFTER = "it lost against starting the turns at once (benchmarks/results/ablations/local_after.jsonl.gz)"


def coverage_allowance(n_unseen: int, cap: int) -> int:
    """Local proposals a ball of ``n_unseen`` unevaluated configurations gets before it grows:
    all of them up to ``cap``, then ``cap * sqrt(n / cap)`` (a square-root share of a very large ball)."""
    if n_unseen <= cap:
        return max(1, n_unseen)
    return math.ceil(cap * math.sqrt(n_unseen / cap))


@dataclass(frozen=True)
class TrustRegionSettings(Settings):
    """When the trust region takes a turn (the ``trust_region`` option group)."""

    every: int = 3  # every Nth model suggestion is the trust region's; 0: off
    fail_tolerance: int | str = (
        3  # local proposals without a new incumbent before the ball grows by one parameter; coverage: once its unevaluated configurations had their turns
    )

    @classmethod
    def translate(cls, owner: str, options: dict[str, Any], path: str = "") -> dict[str, Any]:
        """``after`` was removed, with the reason."""
        if "after" in options:
            raise BayestuneError(f"{owner}: option {path}after was removed: {REMOVED_AFTER}")
        return super().translate(owner, options, path)

    def rules(self) -> list[Rule]:
        tolerance = self.fail_tolerance
        counted = self.at_least("fail_tolerance", 1)
        coverage = (counted[0], counted[1] or tolerance == COVERAGE, counted[2] + f" or {COVERAGE!r}")
        return [self.at_least("every", 0), coverage]

    @property
    def covers(self) -> bool:
        """Coverage growth (and with it the escape from a confirmed minimum, bostep.escape)."""
        return bool(self.every) and self.fail_tolerance == COVERAGE

    def region(self) -> HammingTrustRegion | None:
        """A fresh trust region, or None when turns are off."""
        if not self.every:
            return None
        if self.fail_tolerance == COVERAGE:
            return HammingTrustRegion(coverage_cap=COVERAGE_CAP)
        assert isinstance(self.fail_tolerance, int)  # the rules said so
        return HammingTrustRegion(fail_tolerance=self.fail_tolerance)

    def is_turn(self, n_model_suggestions: int) -> bool:
        """Whether the ``n_model_suggestions``-th model suggestion (counted from 1) is a turn."""
        return bool(self.every) and n_model_suggestions % self.every == 0


@dataclass
class HammingTrustRegion:
    """Where the local member looks next: see the module docstring."""

    fail_tolerance: int = 3
    n_samples: int = 2000
    radius: int = 1
    coverage_cap: int | None = None  # set: the ball's allowance follows its size (coverage_allowance)
    _best: float = field(default=math.inf, repr=False)
    _failures: int = field(default=0, repr=False)
    _allowance: int | None = field(default=None, repr=False)  # coverage: set on arrival in a ball

    def __post_init__(self) -> None:
        if self.fail_tolerance < 1:
            raise BayestuneError(f"trust region: `fail_tolerance >= 1` must hold, but got {self.fail_tolerance}")
        if self.radius < 1:
            raise BayestuneError(f"trust region: `radius >= 1` must hold, but got {self.radius}")

    def update(self, best: float) -> None:
        """Called before each local proposal with the best target so far: an improvement since
        the last local proposal re-centres a radius-1 ball, else one more failure is counted."""
        if best < self._best:
            self._best, self.radius, self._failures, self._allowance = best, 1, 0, None
            return
        self._failures += 1
        allowance = self.fail_tolerance if self.coverage_cap is None else self._allowance
        if allowance is not None and self._failures >= allowance:
            self._grow()

    def _grow(self) -> None:
        self.radius += 1
        self._failures, self._allowance = 0, None

    def confirms(self, best: float) -> bool:
        """Whether the ball grew past radius one around an incumbent whose target ``best`` is
        still today's best: that incumbent's one-parameter neighbourhood had its turns."""
        return self.radius > 1 and self._best <= best

    def pick(
        self,
        space: Space,
        score: Score,
        incumbent: np.ndarray,
        best: float,
        rng: np.random.Generator,
        *,
        seen: set[bytes],
        candidates: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """One local turn of a strategy: :meth:`update` with the best target so far, then
        :meth:`propose`; the proposal as a one-row matrix (None: the whole space is evaluated)."""
        self.update(best)
        row = self.propose(space, score, incumbent, rng, seen=seen, candidates=candidates)
        return None if row is None else row.reshape(1, -1)

    def propose(
        self,
        space: Space,
        score: Score,
        incumbent: np.ndarray,
        rng: np.random.Generator,
        *,
        seen: set[bytes],
        candidates: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """The unseen configuration within the ball that maximises ``score`` (None if the whole
        space is evaluated). ``candidates``: every unseen feasible row of a small space, else the
        ball is sampled by mutating random parameter subsets of the incumbent."""
        n_parameters = len(space.parameters)
        while True:
            pool = candidates if candidates is not None else self._sampled_ball(space, incumbent, rng, seen)
            if len(pool):
                distance = parameters_changed(space, pool, incumbent)
                inside = pool[(distance >= 1) & (distance <= self.radius)]
                if len(inside):
                    if self.coverage_cap is not None and self._allowance is None:
                        self._allowance = coverage_allowance(len(inside), self.coverage_cap)
                    scores = score(inside)
                    if np.isfinite(scores).any():
                        return inside[int(np.argmax(np.where(np.isfinite(scores), scores, -np.inf)))]
            if self.radius >= n_parameters:
                return None
            self._grow()

    def _sampled_ball(
        self, space: Space, incumbent: np.ndarray, rng: np.random.Generator, seen: set[bytes]
    ) -> np.ndarray:
        """Feasible unseen rows at most ``radius`` parameters away: the incumbent with a random
        subset of 1..radius parameters copied from uniform feasible samples."""
        donors = space.sample(self.n_samples, rng, method="cot")
        X = np.repeat(incumbent.reshape(1, -1), len(donors), axis=0)
        names = list(space.slices)
        sizes = rng.integers(1, min(self.radius, len(names)) + 1, size=len(donors))
        for i, k in enumerate(sizes):
            for name in rng.choice(names, size=k, replace=False):
                s = space.slices[name]
                X[i, s] = donors[i, s]
        X = X[space.is_feasible(X)]
        keys = space.row_keys(X)
        keep, taken = [], set()
        for i, key in enumerate(keys):
            if key not in seen and key not in taken:
                taken.add(key)
                keep.append(i)
        return X[keep]
