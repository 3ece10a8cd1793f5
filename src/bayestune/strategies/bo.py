"""BaCO-style Bayesian optimisation: a surrogate fitted to feasible observations, a
feasibility classifier for hidden constraints, an acquisition function weighted by P(feasible)
and the user's prior, maximised exhaustively or by multi-start local search.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from bayestune.acquisition.portfolio import AcquisitionPortfolio
from bayestune.exceptions import BayestuneError
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier, RandomForestSurrogate
from bayestune.models.gp import GaussianProcess, limit_blas_threads
from bayestune.search.local_search import LocalSearchSettings, maximize
from bayestune.history import History, draw_unseen
from bayestune.strategies.base import Strategy, register
from bayestune.strategies.surrogate_search import EnumeratedCandidates, FailureAwarePosterior, acquisition_scorer

logger = logging.getLogger(__name__)

#: Every this many suggestions the GP hyperparameters get the full multi-start search; in
#: between, a light search (fewer random starts plus the previous optimum) suffices because
#: one new observation rarely moves the optimum far.
FULL_FIT_EVERY = 5
#: Hyperparameter boxes in standardised output units. Capping the noise share and flooring the
#: signal variance rules out the degenerate "everything is noise" fit (flat mean, tiny variance)
#: that otherwise traps the warm-started optimiser on small data sets.
NOISE_BOUNDS = (1e-6, 0.25)
OUTPUTSCALE_BOUNDS = (0.05, 20.0)


@dataclass(frozen=True)
class BOSettings:
    """Options of the ``bo`` strategy (``strategy_options`` in a scenario).

    The ablations of BaCO's Fig. 9 are ``permutation_metric``, ``log_transform``,
    ``lengthscale_prior`` and ``acquisition_search``.
    """

    model: str = "gp"                 # gp | rf
    acquisition: str = "ei"           # ei | pi | lcb | portfolio
    xi: float = 1e-4                  # EI/PI improvement margin (latent units)
    kappa: float = 2.0                # LCB exploration weight
    permutation_metric: str | None = None  # override every permutation's metric
    log_transform: bool | str = "auto"     # log of positive objectives
    lengthscale_prior: bool = True    # Gamma(1.3, 0.1) on length-scales
    acquisition_search: str = "local"  # local | random
    n_samples: int = 5000
    n_starts: int = 10
    exhaustive_limit: int = 50_000    # score every feasible configuration up to this many
    feasibility_model: bool | str = "auto"  # auto: on once a failure has been seen
    prior_beta: float = 10.0          # piBO decay of the prior's weight
    max_training_points: int | None = None  # cap on the GP's training set (long runs)
    failure_variance: bool = True     # failed locations shrink the GP's variance (see FailureAwarePosterior)

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> "BOSettings":
        allowed = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise BayestuneError(f"unknown option(s) {unknown} for strategy 'bo'; allowed: {sorted(allowed)}")
        settings = cls(**options)
        checks = {"model": ("gp", "rf"), "acquisition": ("ei", "pi", "lcb", "portfolio"), "acquisition_search": ("local", "random")}
        for key, choices in checks.items():
            if getattr(settings, key) not in choices:
                raise BayestuneError(f"strategy 'bo': {key} must be one of {list(choices)}, but got {getattr(settings, key)!r}")
        if settings.max_training_points is not None and settings.max_training_points < 10:
            raise BayestuneError(f"strategy 'bo': max_training_points must be >= 10, but got {settings.max_training_points}")
        return settings


@register
class BayesianOptimization(Strategy):
    """The default strategy: see the module docstring."""

    name = "bo"

    def __init__(self, space, objectives, rng, **options: Any) -> None:
        super().__init__(space, objectives, rng)
        self.settings = BOSettings.from_options(options)
        self.encoder = FeatureEncoder(space, permutation_metric=self.settings.permutation_metric)
        self.portfolio = AcquisitionPortfolio() if self.settings.acquisition == "portfolio" else None
        self._theta: np.ndarray | None = None
        self._n_fits = 0
        self.candidates = EnumeratedCandidates(space, self.settings.exhaustive_limit)
        self.last_model: Any = None

    # ---- models ------------------------------------------------------------------------
    def _training_set(self, history: History) -> tuple[np.ndarray, np.ndarray]:
        """Feasible rows and their first objective (to minimise), capped as in :meth:`_capped_rows`."""
        idx = self._capped_rows(history, feasible=True)
        return history.X[idx], history.signed_Y()[idx, 0]

    def _capped_rows(self, history: History, *, feasible: bool) -> np.ndarray:
        """Indices of the feasible (or failed) observations the models learn from. With
        ``max_training_points`` the feasible set keeps its best third, most recent third and a
        random rest, and failures their most recent ones, so suggestion time and memory stay
        flat over long runs (TVM thesis 3.5)."""
        mask = history.feasible if feasible else ~history.feasible
        rows = np.flatnonzero(mask)
        cap = self.settings.max_training_points
        if cap is None or len(rows) <= cap:
            return rows
        if not feasible:
            return rows[-cap:]
        y = history.signed_Y()[rows, 0]
        keep = set(rows[np.argsort(y)[: cap // 3]].tolist())
        keep.update(rows[-(cap // 3):].tolist())
        rest = np.setdiff1d(rows, np.fromiter(keep, int))
        keep.update(self.rng.choice(rest, size=cap - len(keep), replace=False).tolist())
        return np.sort(np.fromiter(keep, int))

    def _model_rows(self, history: History) -> np.ndarray:
        """Capped feasible and failed observations together (classifier, failure variance)."""
        return np.sort(np.concatenate([self._capped_rows(history, feasible=True),
                                       self._capped_rows(history, feasible=False)]))

    def _fit_surrogate(self, F: np.ndarray, y: np.ndarray, *, fixed: dict[str, Any] | None = None) -> Any:
        s = self.settings
        seed = int(self.rng.integers(2**31))
        if s.model == "rf":
            return RandomForestSurrogate(log_transform_y=s.log_transform, seed=seed).fit(F, y)
        warm = self._theta if fixed is None else None
        light = warm is not None and self._n_fits % FULL_FIT_EVERY != 0
        gp = GaussianProcess(self.encoder.blocks, lengthscale_prior=(1.3, 0.1) if s.lengthscale_prior else None,
                             log_transform_y=s.log_transform, fixed_hyperparameters=fixed, seed=seed,
                             noise_bounds=NOISE_BOUNDS, outputscale_bounds=OUTPUTSCALE_BOUNDS,
                             n_restarts_sample=24 if light else 100, max_iter=60 if light else 100,
                             blas_threads=None)  # the whole suggestion runs under one BLAS cap
        gp.fit(F, y, warm_start=warm)
        if fixed is None:
            self._theta = gp.hyperparameters_
            self._n_fits += 1
        return gp

    def _feasibility(self, history: History) -> FeasibilityClassifier | None:
        mode = self.settings.feasibility_model
        if mode is False or (mode == "auto" and history.feasible.all()):
            return None
        rows = self._model_rows(history)
        F = self.encoder.transform(history.X[rows])
        return FeasibilityClassifier(seed=int(self.rng.integers(2**31))).fit(F, history.feasible[rows])

    # ---- suggestion --------------------------------------------------------------------
    def _scorer(self, model: Any, classifier: FeasibilityClassifier | None, n_obs: int, acquisition: str):
        s = self.settings
        return acquisition_scorer(self.space, self.encoder, model, classifier, self.rng, acquisition=acquisition,
                                  parameter=s.kappa if acquisition == "lcb" else s.xi, n_obs=n_obs,
                                  prior_beta=s.prior_beta)

    def suggest(self, history: History, n: int) -> np.ndarray:
        # Small matrices: extra BLAS threads only oversubscribe the cores (see limit_blas_threads).
        with limit_blas_threads(1):
            return self._suggest(history, n)

    def _suggest(self, history: History, n: int) -> np.ndarray:
        X, y = self._training_set(history)
        if len(X) < 2 or self.encoder.width == 0:
            return draw_unseen(self.space, history, n, self.rng)
        F = self.encoder.transform(X)
        model = self._fit_surrogate(F, y)
        self.last_model = model
        classifier = self._feasibility(history)
        if classifier is not None and isinstance(model, GaussianProcess) and self.settings.failure_variance:
            model = self._failure_aware(model, history)
        seen = set(history.seen)
        s = self.settings
        search = LocalSearchSettings(n_samples=s.n_samples, n_starts=s.n_starts, exhaustive_limit=s.exhaustive_limit)
        order = np.argsort(y)
        chosen: list[np.ndarray] = []
        F_aug, y_aug = F, y
        if self.portfolio is not None:
            self.portfolio.update(self.space.row_keys(history.X), history.signed_Y()[:, 0], history.feasible)
        for k in range(n):
            acquisition = self.portfolio.next_member() if self.portfolio is not None else s.acquisition
            score = self._scorer(model, classifier, history.n, acquisition)
            rows = maximize(self.space, score, self.rng, seen=seen, n=1, candidates=self.candidates.unseen(seen),
                            evaluated_best=X[order], settings=search, local=s.acquisition_search == "local")
            if not len(rows):
                break
            row = rows[0]
            chosen.append(row)
            if self.portfolio is not None:
                self.portfolio.record_proposal(self.space.row_keys(row.reshape(1, -1))[0], acquisition)
            seen.update(self.space.row_keys(row.reshape(1, -1)))
            if k + 1 < n:  # kriging believer: pretend the prediction was observed, then re-plan
                f_new = self.encoder.transform(row.reshape(1, -1))
                y_new = float(model.predict(f_new)[0]) if hasattr(model, "predict") else float(y.min())
                F_aug, y_aug = np.vstack([F_aug, f_new]), np.append(y_aug, y_new)
                model = self._refit_believer(model, F_aug, y_aug)
        if len(chosen) < n:
            tmp = History(history.space, history.objectives, history.X, history.Y, history.feasible,
                          history.pending, seen)
            extra = draw_unseen(self.space, tmp, n - len(chosen), self.rng)
            chosen.extend(list(extra))
        return np.array(chosen).reshape(-1, self.space.width)

    @staticmethod
    def _fixed(model: GaussianProcess) -> dict[str, Any]:
        return {"lengthscales": dict(model.lengthscales_), "outputscale": model.outputscale_, "noise": model.noise_}

    def _failure_aware(self, model: GaussianProcess, history: History) -> FailureAwarePosterior:
        F_all = self.encoder.transform(history.X[self._model_rows(history)])
        return FailureAwarePosterior.build(model, F_all, blas_threads=None)

    def _refit_believer(self, model: Any, F: np.ndarray, y: np.ndarray) -> Any:
        if isinstance(model, FailureAwarePosterior):
            model = model.mean_model
        if isinstance(model, GaussianProcess):
            return self._fit_surrogate(F, y, fixed=self._fixed(model))
        return self._fit_surrogate(F, y)

    def describe(self) -> dict[str, Any]:
        return asdict(self.settings)
