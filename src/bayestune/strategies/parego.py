"""ParEGO: several objectives through random Chebyshev scalarisations of a GP's target.

Each suggestion (Knowles, 2006, adapted to BaCO's mixed spaces):

1. normalise every objective of the feasible evaluations to [0, 1] (minimised; positive
   objectives spanning two decades or more are log-transformed first, see ``log_transform``);
2. draw a weight vector λ — by default uniformly from ParEGO's lattice of vectors whose
   entries are multiples of 1/s summing to one — and scalarise with the augmented Chebyshev
   function ``f_λ(z) = max_j λ_j z_j + ρ Σ_j λ_j z_j`` (ρ = 0.05);
3. fit the mixed-kernel Gaussian process of :mod:`bayestune.models.gp` to ``f_λ`` and
   maximise expected improvement over the best scalarised value, weighted like ``bo`` by
   P(feasible) from the random-forest classifier (candidates at or below a random threshold
   ε_f ruled out) and by the user's prior (piBO), with BaCO's multi-start local search.

A batch of ``n`` draws one λ per configuration, so a batch spreads along the front.
Minimising any ``f_λ`` with positive weights yields a Pareto-optimal point, and the
Chebyshev form reaches non-convex parts of the front that a weighted sum cannot.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier
from bayestune.models.gp import GaussianProcess
from bayestune.search.local_search import LocalSearchSettings, maximize
from bayestune.history import History, draw_unseen
from bayestune.strategies.base import Strategy, register
from bayestune.strategies.bo import NOISE_BOUNDS, OUTPUTSCALE_BOUNDS
from bayestune.strategies.surrogate_search import EnumeratedCandidates, FailureAwarePosterior, acquisition_scorer

logger = logging.getLogger(__name__)

#: ParEGO's lattice resolution s per number of objectives (11 vectors for 2, 15 for 3, ...).
LATTICE_STEPS = {1: 1, 2: 10, 3: 4, 4: 3}
#: An objective is log-transformed (``log_transform="auto"``) when all its values are positive
#: and its largest is at least this many times its smallest.
LOG_RATIO = 100.0


def weight_lattice(m: int, steps: int) -> np.ndarray:
    """Every vector of ``m`` non-negative multiples of ``1/steps`` that sum to one."""
    def rec(k: int, left: int) -> list[list[int]]:
        if k == 1:
            return [[left]]
        return [[i, *rest] for i in range(left + 1) for rest in rec(k - 1, left - i)]

    return np.array(rec(m, steps), dtype=float) / steps


def chebyshev(Z: np.ndarray, weights: np.ndarray, rho: float = 0.05) -> np.ndarray:
    """Augmented Chebyshev scalarisation of normalised, minimised objectives ``Z`` (N, M)."""
    WZ = Z * weights
    return WZ.max(axis=1) + rho * WZ.sum(axis=1)


@dataclass(frozen=True)
class ParEGOSettings:
    """Options of the ``parego`` strategy (``strategy_options`` in a scenario)."""

    rho: float = 0.05                 # weight of the linear term of the augmented Chebyshev function
    weights: str = "lattice"          # lattice | dirichlet
    lattice_steps: int | None = None  # s of the lattice (None: 10 for 2 objectives, 4 for 3, ...)
    log_transform: bool | str = "auto"  # of positive objectives before normalising
    xi: float = 1e-4                  # EI improvement margin (latent units)
    lengthscale_prior: bool = True    # Gamma(1.3, 0.1) on length-scales
    n_samples: int = 5000
    n_starts: int = 10
    exhaustive_limit: int = 50_000
    feasibility_model: bool | str = "auto"  # auto: on once a failure has been seen
    failure_variance: bool = True     # failed locations shrink the GP's variance, as in ``bo``
    prior_beta: float = 10.0          # piBO decay of the prior's weight

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> "ParEGOSettings":
        allowed = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise BayestuneError(f"unknown option(s) {unknown} for strategy 'parego'; allowed: {sorted(allowed)}")
        s = cls(**options)
        rules = [
            ("weights", s.weights in ("lattice", "dirichlet"), "weights in ['lattice', 'dirichlet']"),
            ("lattice_steps", s.lattice_steps is None or (isinstance(s.lattice_steps, int) and s.lattice_steps >= 1),
             "`lattice_steps >= 1` (an integer)"),
            ("log_transform", s.log_transform in (True, False, "auto"), "log_transform in [True, False, 'auto']"),
            ("rho", s.rho >= 0, "`rho >= 0`"),
        ]
        for key, ok, rule in rules:
            if not ok:
                raise BayestuneError(f"strategy 'parego': {rule} must hold, but got {key}={getattr(s, key)!r}")
        return s


@register
class ParEGO(Strategy):
    """See the module docstring."""

    name = "parego"
    multi_objective = True

    def __init__(self, space, objectives, rng, **options: Any) -> None:
        super().__init__(space, objectives, rng)
        self.settings = ParEGOSettings.from_options(options)
        self.encoder = FeatureEncoder(space)
        m = len(self.objectives)
        steps = self.settings.lattice_steps or LATTICE_STEPS.get(m, 2)
        self._lattice = weight_lattice(m, steps)
        self._theta: np.ndarray | None = None
        self.candidates = EnumeratedCandidates(space, self.settings.exhaustive_limit)
        self.last_model: GaussianProcess | None = None
        self.last_weights: np.ndarray | None = None

    # ---- scalarisation -----------------------------------------------------------------
    def normalized_objectives(self, history: History) -> np.ndarray:
        """Feasible rows' objectives, minimised, (optionally) logged and scaled to [0, 1]."""
        S = history.signed_Y()[history.feasible]
        S = S.copy()
        for j in range(S.shape[1]):
            col = S[:, j]
            log = self.settings.log_transform
            if log == "auto":
                log = bool(np.all(col > 0) and col.max() >= LOG_RATIO * col.min())
            if log and np.all(col > 0):
                S[:, j] = np.log(col)
        lo, hi = S.min(axis=0), S.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        return (S - lo) / span

    def _draw_weights(self) -> np.ndarray:
        m = len(self.objectives)
        if self.settings.weights == "dirichlet":
            return self.rng.dirichlet(np.ones(m))
        return self._lattice[self.rng.integers(len(self._lattice))]

    # ---- models ------------------------------------------------------------------------
    def _fit_gp(self, F: np.ndarray, y: np.ndarray) -> GaussianProcess:
        s = self.settings
        gp = GaussianProcess(self.encoder.blocks, lengthscale_prior=(1.3, 0.1) if s.lengthscale_prior else None,
                             log_transform_y=False, seed=int(self.rng.integers(2**31)),
                             noise_bounds=NOISE_BOUNDS, outputscale_bounds=OUTPUTSCALE_BOUNDS)
        warm = self._theta if self._theta is not None and len(self._theta) == len(self.encoder.blocks) + 2 else None
        gp.fit(F, y, warm_start=warm)
        self._theta = gp.hyperparameters_
        return gp

    def _feasibility(self, history: History) -> FeasibilityClassifier | None:
        mode = self.settings.feasibility_model
        if mode is False or (mode == "auto" and history.feasible.all()):
            return None
        F = self.encoder.transform(history.X)
        return FeasibilityClassifier(seed=int(self.rng.integers(2**31))).fit(F, history.feasible)

    # ---- suggestion --------------------------------------------------------------------
    def _scorer(self, model: Any, classifier: FeasibilityClassifier | None, n_obs: int):
        s = self.settings
        return acquisition_scorer(self.space, self.encoder, model, classifier, self.rng, acquisition="ei",
                                  parameter=s.xi, n_obs=n_obs, prior_beta=s.prior_beta)

    def suggest(self, history: History, n: int) -> np.ndarray:
        s = self.settings
        ok = history.feasible
        if ok.sum() < 2 or self.encoder.width == 0:
            return draw_unseen(self.space, history, n, self.rng)
        X = history.X[ok]
        F = self.encoder.transform(X)
        Z = self.normalized_objectives(history)
        classifier = self._feasibility(history)
        search = LocalSearchSettings(n_samples=s.n_samples, n_starts=s.n_starts, exhaustive_limit=s.exhaustive_limit)
        seen = set(history.seen)
        chosen: list[np.ndarray] = []
        for _ in range(n):
            weights = self._draw_weights()
            y = chebyshev(Z, weights, s.rho)
            gp = self._fit_gp(F, y)
            self.last_model, self.last_weights = gp, weights
            model: Any = gp
            if classifier is not None and s.failure_variance:
                model = FailureAwarePosterior.build(gp, self.encoder.transform(history.X))
            rows = maximize(self.space, self._scorer(model, classifier, history.n), self.rng, seen=seen, n=1,
                            candidates=self.candidates.unseen(seen), evaluated_best=X[np.argsort(y)], settings=search)
            if not len(rows):
                break
            chosen.append(rows[0])
            seen.update(self.space.row_keys(rows[:1]))
        if len(chosen) < n:
            sub = History(history.space, history.objectives, history.X, history.Y, history.feasible,
                          history.pending, seen)
            chosen.extend(draw_unseen(self.space, sub, n - len(chosen), self.rng))
        return np.array(chosen).reshape(-1, self.space.width)

    def describe(self) -> dict[str, Any]:
        return asdict(self.settings)
