"""BaCO-style Bayesian optimisation: a surrogate fitted to feasible observations, a
feasibility classifier for hidden constraints, an acquisition function weighted by P(feasible)
and the user's prior, maximised exhaustively or by multi-start local search.

What the surrogate learns is a *target transform* of the history
(:meth:`BayesianOptimization._targets`): the objective itself for ``bo``; for ``parego``
(several objectives) a random Chebyshev scalarisation
(:class:`~bayestune.models.targets.ChebyshevScalarization`, Knowles 2006): each suggestion
normalises every objective of the feasible evaluations to [0, 1] (minimised, logged by the rule
of :mod:`bayestune.models.targets`), draws a weight vector λ — by default uniformly from
ParEGO's lattice — and fits the surrogate to the scalarised values. Everything else is the same
pipeline; a batch shares one λ and is planned with the kriging believer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayestune.acquisition.exploration import EXPLORATION_CHOICES, SPREAD_SAMPLE, ContextualVariance, latent_unit
from bayestune.acquisition.portfolio import AcquisitionPortfolio
from bayestune.acquisition.scoring import acquisition_scorer
from bayestune.acquisition.thompson import thompson_pick
from bayestune.exceptions import BayestuneError
from bayestune.history import History, draw_unseen, top_up
from bayestune.models.base import Surrogate
from bayestune.models.encoding import ORDINAL_SCALES, FeatureEncoder, distinct_ordinal_scales
from bayestune.models.failure_aware import FailureAwarePosterior
from bayestune.models.forest import FeasibilityClassifier, RandomForestSurrogate
from bayestune.models.gp import GaussianProcess
from bayestune.models.linalg import limit_blas_threads
from bayestune.models.selection import CV_TREES, N_FOLDS, choose_surrogate, folds, gp_cv_log_likelihood
from bayestune.models.targets import LOG_TRANSFORM_CHOICES, WEIGHT_DRAWS, ChebyshevScalarization, repeat_variances
from bayestune.models.training import MEMORY_POLICIES, capped_rows, feasibility_classifier, model_rows
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.search.local_search import LocalSearchSettings, maximize
from bayestune.search.stagnation import evaluations_since_improvement, explore_now
from bayestune.search.trust_region import HammingTrustRegion
from bayestune.strategies.base import Rule, Settings, Strategy, register

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
#: BaCO's Gamma(shape, rate) prior on the length-scales.
LENGTHSCALE_PRIOR = (1.3, 0.1)
#: Feasible configurations drawn for a Thompson step when the space is too large to enumerate.
THOMPSON_SAMPLE = 2000
#: How the GP treats observation noise: one fitted nugget, or per point from the measured repeats.
NOISE_MODELS = ("homoscedastic", "heteroscedastic")
#: The ordinal warpings ``ordinal_scale="auto"`` chooses between by the GP's marginal likelihood
#: (``None``: the space's own log/linear rule); index ranks are left out because on the recorded
#: spaces they rarely differ from linear and never won (benchmarks/results/surrogate_fit.md).
AUTO_ORDINAL_SCALES = (None, "log", "linear")


@dataclass(frozen=True)
class BOSettings(Settings):
    """Options of the ``bo`` strategy (``strategy_options`` in a scenario).

    The ablations of BaCO's Fig. 9 are ``permutation_metric``, ``log_transform``,
    ``lengthscale_prior`` and ``acquisition_search``. ``local_every=3`` (every third model
    suggestion from the Hamming trust region) is the default since it won leave-one-space-out
    over 15 spaces (7 GPU, 6 synthetic, 2 Halide) at 40, 60 and 100 evaluations
    (benchmarks/results/issue17_trust_region.md); ``local_every=0`` is the earlier default.
    """

    model: str = "gp"                 # gp | rf | auto (chosen by cross-validated likelihood, bayestune.models.selection)
    model_select_every: int = 10      # model auto: re-choose at every this many model suggestions
    acquisition: str = "ei"           # ei | pi | lcb | portfolio | advanced_multi (Kernel Tuner's rounds; acquisition.portfolio)
    exploration: str = "constant"     # constant (xi, kappa) | cv | cv_paper: Kernel Tuner's λ (acquisition.exploration)
    xi: float = 1e-4                  # EI/PI improvement margin (latent units)
    kappa: float = 2.0                # LCB exploration weight
    permutation_metric: str | None = None  # override every permutation's metric
    log_transform: bool | str = "auto"     # log of positive objectives (bayestune.models.targets)
    lengthscale_prior: bool | str = True  # Gamma(1.3, 0.1) on length-scales; auto: with or without it, by CV likelihood
    acquisition_search: str = "local"  # local | random
    n_samples: int = 5000
    n_starts: int = 10
    exhaustive_limit: int = 50_000    # score every feasible configuration up to this many
    feasibility_model: bool | str = "auto"  # auto: on once a failure has been seen
    prior_beta: float = 10.0          # piBO decay of the prior's weight
    max_training_points: int | None = None  # cap on the training set (bayestune.models.training)
    memory_policy: str = "mixed"      # which rows the cap keeps: mixed | lru | best | reset (models.training)
    failure_variance: bool = True     # failed locations shrink the GP's variance (see FailureAwarePosterior)
    epsilon: float = 0.0              # chance of a random step instead of the model's pick (epsilon-greedy)
    rf_trees: int = 100               # model rf: number of trees
    rf_max_features: float = 0.5      # model rf: share of the features each split considers
    rf_bootstrap: bool = True         # model rf: bagging
    rf_min_samples_split: int = 2     # model rf: smallest node that is split
    feasibility_threshold: float = 0.1  # candidates with P(feasible) <= a draw from this x {0, 0.1, ..., 1} are ruled out
    noise: str = "homoscedastic"      # heteroscedastic: the GP takes each point's noise from its measured repeats
    local_every: int = 3              # every Nth model suggestion is the trust region's (bayestune.search.trust_region); 0: off
    local_fail_tolerance: int = 3     # local proposals without a new incumbent before the trust region grows
    local_after: int = 0              # the trust region takes turns only once this many evaluations are done
    ordinal_scale: str | None = None  # ordinals' warping: None (the space's rule) | log | linear | index | auto
    stall_after: int = 0              # a run whose best has not improved for this many model suggestions explores
                                      # once every this many (bayestune.search.stagnation); 0: off
    stall_action: str = "thompson"    # the exploration step: thompson (a posterior draw's minimum) | random

    def rules(self) -> list[Rule]:
        return [
            ("epsilon", isinstance(self.epsilon, (int, float)) and 0.0 <= self.epsilon <= 1.0, "`0 <= epsilon <= 1`"),
            ("rf_trees", isinstance(self.rf_trees, int) and 1 <= self.rf_trees <= 1000, "`1 <= rf_trees <= 1000`"),
            ("rf_max_features", isinstance(self.rf_max_features, (int, float)) and 0 < self.rf_max_features <= 1,
             "`0 < rf_max_features <= 1`"),
            ("rf_min_samples_split", isinstance(self.rf_min_samples_split, int) and self.rf_min_samples_split >= 2,
             "`rf_min_samples_split >= 2`"),
            ("feasibility_threshold", isinstance(self.feasibility_threshold, (int, float))
             and 0.0 <= self.feasibility_threshold <= 1.0, "`0 <= feasibility_threshold <= 1`"),
            ("local_every", isinstance(self.local_every, int) and self.local_every >= 0, "`local_every >= 0`"),
            ("stall_after", isinstance(self.stall_after, int) and self.stall_after >= 0, "`stall_after >= 0`"),
            self.one_of("stall_action", ("thompson", "random")),
            self.one_of("lengthscale_prior", (True, False, "auto")),
            ("local_fail_tolerance", isinstance(self.local_fail_tolerance, int) and self.local_fail_tolerance >= 1,
             "`local_fail_tolerance >= 1`"),
            ("local_after", isinstance(self.local_after, int) and self.local_after >= 0, "`local_after >= 0`"),
            self.one_of("model", ("gp", "rf", "auto")),
            ("model_select_every", isinstance(self.model_select_every, int) and self.model_select_every >= 1,
             "`model_select_every >= 1`"),
            self.one_of("acquisition", ("ei", "pi", "lcb", "portfolio", "advanced_multi")),
            self.one_of("exploration", EXPLORATION_CHOICES),
            self.one_of("acquisition_search", ("local", "random")),
            self.one_of("log_transform", LOG_TRANSFORM_CHOICES),
            self.one_of("noise", NOISE_MODELS),
            self.one_of("ordinal_scale", (None, "auto") + ORDINAL_SCALES),
            ("noise", self.noise == "homoscedastic" or self.model == "gp", "`noise='heteroscedastic'` needs model='gp'"),
            ("max_training_points", self.max_training_points is None or self.max_training_points >= 10,
             "`max_training_points >= 10`"),
            self.one_of("memory_policy", MEMORY_POLICIES),
            ("memory_policy", self.memory_policy == "mixed" or self.max_training_points is not None,
             "a memory policy other than 'mixed' needs `max_training_points` (its window)"),
        ]


@register
class BayesianOptimization(Strategy):
    """The default strategy: see the module docstring."""

    name = "bo"
    settings_class = BOSettings
    settings: BOSettings

    def __init__(self, space, objectives, rng, **options: Any) -> None:
        super().__init__(space, objectives, rng, **options)
        scale = self.settings.ordinal_scale
        scales = (distinct_ordinal_scales(space, AUTO_ORDINAL_SCALES) if scale == "auto" and self.settings.model == "gp"
                  else [None if scale == "auto" else scale])
        #: the input warpings in play; "auto" re-chooses among them at every full GP fit
        self.encoders = [FeatureEncoder(space, permutation_metric=self.settings.permutation_metric, ordinal_scale=s)
                         for s in scales]
        self.encoder = self.encoders[0]
        self.portfolio = (AcquisitionPortfolio(kt_rounds=self.settings.acquisition == "advanced_multi")
                          if self.settings.acquisition in ("portfolio", "advanced_multi") else None)
        self.exploration = (ContextualVariance(self.settings.exploration)
                            if self.settings.exploration != "constant" else None)
        self.model_kind = "rf" if self.settings.model == "rf" else "gp"  # "auto" re-chooses it
        self._theta: np.ndarray | None = None
        self._n_fits = 0
        #: whether the length-scale prior is in use; "auto" re-chooses it at every full GP fit
        self._prior_on = self.settings.lengthscale_prior is not False
        self.candidates = EnumeratedCandidates(space, self.settings.exhaustive_limit)
        self.trust_region = (HammingTrustRegion(fail_tolerance=self.settings.local_fail_tolerance)
                             if self.settings.local_every else None)
        self._n_model_suggestions = 0
        self.transfer = None  # a bayestune.transfer.TransferModel, set by use_transfer

    def use_transfer(self, runs) -> None:
        """Learn with prior runs of the space (``bayestune.transfer.PriorRun``) as the GP's prior mean."""
        from bayestune.transfer.model import TransferModel

        if len(self.encoders) > 1:  # the source model is encoded once; "auto" re-chooses the encoding
            raise BayestuneError("a transfer model needs one input encoding: set ordinal_scale to None, 'log', "
                                 "'linear' or 'index' instead of 'auto', or use transfer mode 'design'")
        # Its own fixed seed: drawing from self.rng would change the design and every later draw,
        # so a run with an unused (zero-weight) source would no longer equal its cold start.
        self.transfer = TransferModel(runs, self.encoder, self.settings.log_transform, seed=0)

    # ---- what the surrogate learns -----------------------------------------------------
    def _targets(self, history: History) -> np.ndarray:
        """Per row of ``history``, the value the surrogate learns, to minimise (only feasible
        rows are read): the first objective."""
        return history.signed_Y()[:, 0]

    @property
    def _surrogate_log_transform(self) -> bool | str:
        """The surrogate's own log rule for the targets of :meth:`_targets`."""
        return self.settings.log_transform

    # ---- models ------------------------------------------------------------------------
    def _noise_variances(self, history: History, rows: np.ndarray) -> np.ndarray | None:
        """Measured noise of the training ``rows`` for a heteroscedastic GP (``None``: homoscedastic)."""
        if self.settings.noise != "heteroscedastic" or not len(history.repeats):
            return None
        return repeat_variances([history.repeats[i] for i in rows], self.objectives[0].name)

    def _fit_surrogate(self, F: np.ndarray, y: np.ndarray, *, fixed: dict[str, Any] | None = None,
                       noise: np.ndarray | None = None, log_transform: bool | str | None = None) -> Surrogate:
        settings = self.settings
        if self.transfer is not None and fixed is None and log_transform is None and self.model_kind == "gp":
            return self.transfer.fit(F, y, lambda F_, y_, log: self._fit_surrogate(F_, y_, noise=noise if y_ is y else None,
                                                                                    log_transform=log))
        seed = int(self.rng.integers(2**31))
        if self.model_kind == "rf":
            return self._forest(self._surrogate_log_transform, seed).fit(F, y)
        warm = self._theta if fixed is None else None
        light = warm is not None and self._n_fits % FULL_FIT_EVERY != 0
        log = self._surrogate_log_transform if log_transform is None else log_transform

        def fit(prior: bool) -> GaussianProcess:
            gp = GaussianProcess(self.encoder.blocks, lengthscale_prior=LENGTHSCALE_PRIOR if prior else None,
                                 log_transform_y=log, fixed_hyperparameters=fixed, seed=seed,
                                 noise_bounds=NOISE_BOUNDS, outputscale_bounds=OUTPUTSCALE_BOUNDS,
                                 n_restarts_sample=24 if light else 100, max_iter=60 if light else 100,
                                 light_refit=light, blas_threads=None)  # the whole suggestion runs under one BLAS cap
            return gp.fit(F, y, warm_start=warm, noise_variances=noise)

        if settings.lengthscale_prior == "auto" and fixed is None and not light:
            gp = self._choose_prior(fit, len(y))
        else:
            gp = fit(self._prior_on)
        if fixed is None:
            self._theta = gp.hyperparameters_
            self._n_fits += 1
        return gp

    def _choose_prior(self, fit, n: int) -> GaussianProcess:
        """``lengthscale_prior="auto"``: fit the GP with and without the Gamma prior on the
        length-scales and keep the one with the higher cross-validated log likelihood (same
        folds; bayestune.models.selection); light refits follow the choice until the next full fit.
        Why: the prior keeps the few-point fits sane (BaCO Fig. 9) but holds the length-scales
        long once the data could resolve short ones (our ablation: better without it at 100
        evaluations on 6 of 8 spaces, worse at 20 on 7 of 8)."""
        blocks = folds(n, N_FOLDS, self.rng)
        fits = {prior: fit(prior) for prior in (True, False)}
        scores = {prior: gp_cv_log_likelihood(gp, blocks) for prior, gp in fits.items()}
        self._prior_on = scores[False] <= scores[True]  # ties keep the prior
        logger.debug("length-scale prior %s by cross-validated log likelihood (with %.3f, without %.3f)",
                     "kept" if self._prior_on else "dropped", scores[True], scores[False])
        return fits[self._prior_on]

    def _forest(self, log_transform: bool | str, seed: int, trees: int | None = None) -> RandomForestSurrogate:
        settings = self.settings
        return RandomForestSurrogate(log_transform_y=log_transform, seed=seed, n_estimators=trees or settings.rf_trees,
                                     max_features=settings.rf_max_features, bootstrap=settings.rf_bootstrap,
                                     min_samples_split=settings.rf_min_samples_split)

    def _choose_model(self, F: np.ndarray, y: np.ndarray, noise: np.ndarray | None) -> Surrogate:
        """``model="auto"``: fit both surrogates, keep the one with the higher cross-validated
        predictive likelihood (bayestune.models.selection) until the next choice; returns it."""
        self.model_kind = "gp"
        gp = self._fit_surrogate(F, y, noise=noise)
        if not isinstance(gp, GaussianProcess):  # a transfer model: no closed form to compare
            return gp
        seed = int(self.rng.integers(2**31))
        trees = min(self.settings.rf_trees, CV_TREES)
        self.model_kind, scores = choose_surrogate(gp, lambda log: self._forest(log, seed, trees), F, y, self.rng)
        logger.info("surrogate %s chosen by cross-validated log likelihood (gp %.3f, rf %.3f, %d points)",
                    self.model_kind, scores["gp"], scores["rf"], len(y))
        return gp if self.model_kind == "gp" else self._fit_surrogate(F, y)

    def _explore(self, model: Surrogate, fitted: Surrogate, y: np.ndarray, seen: set[bytes]) -> float:
        """Kernel Tuner's contextual-variance λ (acquisition.exploration) for this suggestion."""
        pool = self.candidates.unseen(seen)
        if pool is None:
            pool = self.space.sample(SPREAD_SAMPLE, self.rng)
        elif len(pool) > SPREAD_SAMPLE:
            pool = pool[self.rng.choice(len(pool), SPREAD_SAMPLE, replace=False)]
        if not len(pool):
            return 0.0
        _, sd = model.predict_latent(self.encoder.transform(pool))
        return self.exploration(fitted, sd, y)

    def _choose_warping(self, X: np.ndarray, y: np.ndarray, noise: np.ndarray | None) -> Surrogate:
        """Input warping of the ordinals learned as a model choice: the GP is fitted (full
        hyperparameter search) on each candidate encoding and the one with the highest log
        marginal likelihood becomes ``self.encoder`` until the next full fit; returns its GP."""
        theta, n_fits = self._theta, self._n_fits
        best = None
        for encoder in self.encoders:
            self._theta, self._n_fits = theta, n_fits
            self.encoder = encoder
            gp = self._fit_surrogate(encoder.transform(X), y, noise=noise)
            if best is None or gp.log_marginal_likelihood_value_ > best[0].log_marginal_likelihood_value_:
                best = (gp, encoder)
        gp, self.encoder = best
        self._theta, self._n_fits = gp.hyperparameters_, n_fits + 1
        logger.debug("ordinal warping %r chosen by marginal likelihood", self.encoder.ordinal_scale)
        return gp

    def _feasibility(self, history: History, targets: np.ndarray) -> FeasibilityClassifier | None:
        mode = self.settings.feasibility_model
        if mode is False or (mode == "auto" and history.feasible.all()):
            return None
        rows = model_rows(history, targets, self.settings.max_training_points, self.rng,
                          policy=self.settings.memory_policy)
        return feasibility_classifier(self.encoder, history, rows, self.rng)

    # ---- suggestion --------------------------------------------------------------------
    def _scorer(self, model: Surrogate, classifier: FeasibilityClassifier | None, n_obs: int, acquisition: str,
                explore: tuple[float, float] | None = None):
        """``explore``: (λ, latent unit) of the contextual variance; LCB's κ = λ, EI/PI's ξ = λ·unit."""
        settings = self.settings
        parameter = settings.kappa if acquisition == "lcb" else settings.xi
        if explore is not None:
            parameter = explore[0] if acquisition == "lcb" else explore[0] * explore[1]
        return acquisition_scorer(self.space, self.encoder, model, classifier, self.rng, acquisition=acquisition,
                                  parameter=parameter, n_obs=n_obs,
                                  prior_beta=settings.prior_beta,
                                  feasibility_threshold=settings.feasibility_threshold)

    def suggest(self, history: History, n: int) -> np.ndarray:
        # Small matrices: extra BLAS threads only oversubscribe the cores (see limit_blas_threads).
        with limit_blas_threads(1):
            return self._suggest(history, n)

    def _suggest(self, history: History, n: int) -> np.ndarray:
        if history.n_feasible < 2 or self.encoder.width == 0:
            return draw_unseen(self.space, history, n, self.rng)
        settings = self.settings
        if settings.epsilon > 0 and self.rng.random() < settings.epsilon:  # BaCO's epsilon-greedy step
            return draw_unseen(self.space, history, n, self.rng)
        targets = self._targets(history)
        cap = settings.max_training_points
        train = capped_rows(history, targets, cap, self.rng, feasible=True, policy=settings.memory_policy)
        X, y = history.X[train], targets[train]
        noise = self._noise_variances(history, train)
        if len(self.encoders) > 1 and self._n_fits % FULL_FIT_EVERY == 0:
            fitted = self._choose_warping(X, y, noise)
            F = self.encoder.transform(X)
        else:
            F = self.encoder.transform(X)
            if settings.model == "auto" and self._n_model_suggestions % settings.model_select_every == 0:
                fitted = self._choose_model(F, y, noise)
            else:
                fitted = self._fit_surrogate(F, y, noise=noise)
        model: Surrogate = fitted
        classifier = self._feasibility(history, targets)
        if classifier is not None and isinstance(fitted, GaussianProcess) and settings.failure_variance:
            F_all = self.encoder.transform(history.X[model_rows(history, targets, cap, self.rng,
                                                                policy=settings.memory_policy)])
            model = FailureAwarePosterior.build(fitted, F_all, blas_threads=None)
        seen = set(history.seen)
        explore = (None if self.exploration is None
                   else (self._explore(model, fitted, y, seen), latent_unit(fitted, y)))
        search = LocalSearchSettings(n_samples=settings.n_samples, n_starts=settings.n_starts,
                                     exhaustive_limit=settings.exhaustive_limit)
        order = np.argsort(y)
        chosen: list[np.ndarray] = []
        F_aug, y_aug = F, y
        if self.portfolio is not None:
            self.portfolio.update(self.space.row_keys(history.X), targets, history.feasible)
        stall_turn = explore_now(self._model_phase_stall(targets, history.feasible), settings.stall_after, n)
        self._n_model_suggestions += 1
        local_turn = (self.trust_region is not None and history.n >= settings.local_after
                      and self._n_model_suggestions % settings.local_every == 0)
        for k in range(n):
            acquisition = self.portfolio.next_member() if self.portfolio is not None else settings.acquisition
            score = self._scorer(model, classifier, history.n, acquisition, explore)
            rows = self._stall_pick(history, fitted, classifier, seen) if stall_turn and k == 0 else None
            if rows is None and local_turn and k == 0:
                rows = self._local_pick(score, X[order[0]], float(y[order[0]]), seen)
            if rows is None:
                rows = maximize(self.space, score, self.rng, seen=seen, n=1, candidates=self.candidates.unseen(seen),
                                evaluated_best=X[order], settings=search,
                                local=settings.acquisition_search == "local")
            if not len(rows):
                break
            row = rows[0]
            chosen.append(row)
            if self.portfolio is not None:
                self.portfolio.record_proposal(self.space.row_keys(row.reshape(1, -1))[0], acquisition)
            seen.update(self.space.row_keys(row.reshape(1, -1)))
            if k + 1 < n:  # pretend a value was observed at the pick, then re-plan
                f_new = self.encoder.transform(row.reshape(1, -1))
                F_aug, y_aug = np.vstack([F_aug, f_new]), np.append(y_aug, self._believed(fitted, f_new, y))
                noise = None if noise is None else np.append(noise, np.nan)  # a believed value has no repeats
                fitted = model = self._refit(fitted, F_aug, y_aug, noise)
        return top_up(self.space, history, chosen, seen, n, self.rng)

    def _model_phase_stall(self, targets: np.ndarray, feasible: np.ndarray) -> int | None:
        """Evaluations since the best last improved, counting only the model's own suggestions
        (the initial design is meant to spread out, not to improve). A resumed run counts its
        model suggestions afresh."""
        since = evaluations_since_improvement(targets, feasible)
        return None if since is None else min(since, self._n_model_suggestions)

    def _stall_pick(self, history: History, fitted: Surrogate, classifier: FeasibilityClassifier | None,
                    seen: set[bytes]) -> np.ndarray | None:
        """A stalled run's exploration step as a one-row matrix (None: fall back to the acquisition):
        the minimum of a GP posterior draw over the unseen configurations (all of them in an
        enumerable space, else a feasible sample), or a random unseen configuration."""
        if self.settings.stall_action == "random" or not isinstance(fitted, GaussianProcess):
            rows = draw_unseen(self.space, history.with_seen(seen), 1, self.rng)
            return rows[:1] if len(rows) else None
        pool = self.candidates.unseen(seen)
        if pool is None:
            pool = self.space.sample(THOMPSON_SAMPLE, self.rng)
            keys = self.space.row_keys(pool)
            pool = pool[np.array([k not in seen for k in keys], dtype=bool)]
        if not len(pool):
            return None
        F = self.encoder.transform(pool)
        weights = None if classifier is None else classifier.predict_proba(F)
        i = thompson_pick(fitted, F, self.rng, weights=weights)
        return None if i is None else pool[i].reshape(1, -1)

    def _local_pick(self, score, incumbent: np.ndarray, best: float, seen: set[bytes]) -> np.ndarray | None:
        """The trust region's proposal as a one-row matrix (None: fall back to the global search)."""
        return self.trust_region.pick(self.space, score, incumbent, best, self.rng, seen=seen,
                                      candidates=self.candidates.unseen(seen))

    @staticmethod
    def _believed(fitted: Surrogate, f_new: np.ndarray, y: np.ndarray) -> float:
        """The value pretended observed at ``f_new`` to re-plan the rest of a batch: the GP's
        prediction (kriging believer), the best target so far for the forest (constant liar)."""
        if isinstance(fitted, GaussianProcess):
            return float(fitted.predict(f_new)[0])
        return float(y.min())

    def _refit(self, fitted: Surrogate, F: np.ndarray, y: np.ndarray, noise: np.ndarray | None) -> Surrogate:
        """The surrogate refitted with the believed values; a GP keeps its hyperparameters."""
        if isinstance(fitted, GaussianProcess):
            return self._fit_surrogate(F, y, fixed=fitted.fitted_hyperparameters(), noise=noise)
        return self._fit_surrogate(F, y)


@dataclass(frozen=True)
class ParEGOSettings(BOSettings):
    """Options of the ``parego`` strategy: those of ``bo`` (``log_transform`` applies to each
    objective before normalising) plus the scalarisation's."""

    local_every: int = 0              # off: the incumbent of a scalarisation that changes every suggestion is no anchor
    rho: float = 0.05                 # weight of the linear term of the augmented Chebyshev function
    weights: str = "lattice"          # lattice | dirichlet
    lattice_steps: int | None = None  # s of the lattice (None: 10 for 2 objectives, 4 for 3, ...)

    def rules(self) -> list[Rule]:
        return [
            *super().rules(),
            self.one_of("weights", WEIGHT_DRAWS),
            ("lattice_steps", self.lattice_steps is None or (isinstance(self.lattice_steps, int)
                                                             and self.lattice_steps >= 1),
             "`lattice_steps >= 1` (an integer)"),
            ("rho", self.rho >= 0, "`rho >= 0`"),
            ("noise", self.noise == "homoscedastic",
             "`noise='homoscedastic'` (a scalarised target has no measured repeats)"),
        ]


@register
class ParEGO(BayesianOptimization):
    """``bo`` on a Chebyshev scalarisation of several objectives: see the module docstring."""

    name = "parego"
    multi_objective = True
    settings_class = ParEGOSettings
    settings: ParEGOSettings

    def __init__(self, space, objectives, rng, **options: Any) -> None:
        super().__init__(space, objectives, rng, **options)
        settings = self.settings
        self.scalarization = ChebyshevScalarization(len(self.objectives), rho=settings.rho, weights=settings.weights,
                                                    lattice_steps=settings.lattice_steps,
                                                    log_transform=settings.log_transform)

    def _targets(self, history: History) -> np.ndarray:
        """The scalarised objectives of the feasible rows under a new weight vector (NaN elsewhere)."""
        targets = np.full(history.n, np.nan)
        targets[history.feasible] = self.scalarization(history.signed_Y()[history.feasible], self.rng)
        return targets

    @property
    def _surrogate_log_transform(self) -> bool | str:
        return False  # the objectives were logged before scalarising
