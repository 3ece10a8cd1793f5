"""The surrogate part of a BO step: which model learns the targets (GP, random forest, or the
transfer GP over prior runs), how it is fitted, and how it is told a believed value inside a batch.

Why one part: the user's ``model``, the warm-started light/full hyperparameter schedule and the
encodings the models read (the experimental ordinal warping chosen by marginal likelihood) all
change together; the step above only asks for a :class:`ModelFit` and, inside a batch, for the
fit with one more believed point. It reads the strategy's options where they are declared
(:class:`SurrogateOptions`), never a copy of them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.history import History
from bayestune.models.base import ModelFit, Surrogate
from bayestune.models.encoding import ORDINAL_SCALES, FeatureEncoder, distinct_ordinal_scales
from bayestune.models.failure_aware import FailureAwarePosterior
from bayestune.models.forest import FeasibilityClassifier, RandomForestSettings
from bayestune.models.gp import GaussianProcess
from bayestune.models.hyperparameters import FULL_FIT_EVERY
from bayestune.models.targets import repeat_variances
from bayestune.models.training import TrainingSet
from bayestune.settings import Rule, Settings
from bayestune.space.space import Space

if TYPE_CHECKING:  # only runs with prior runs load it (use_transfer)
    from bayestune.transfer.model import TransferModel

logger = logging.getLogger(__name__)

#: Hyperparameter boxes in standardised output units. Capping the noise share and flooring the
#: signal variance rules out the degenerate "everything is noise" fit (flat mean, tiny variance)
#: that otherwise traps the warm-started optimiser on small data sets.
NOISE_BOUNDS = (1e-6, 0.25)
OUTPUTSCALE_BOUNDS = (0.05, 20.0)
#: BaCO's Gamma(shape, rate) prior on the length-scales.
LENGTHSCALE_PRIOR = (1.3, 0.1)
#: How the GP treats observation noise: one fitted nugget, or per point from the measured repeats.
NOISE_MODELS = ("homoscedastic", "heteroscedastic")
#: The ordinal warpings ``ordinal_scale="auto"`` chooses between by the GP's marginal likelihood
#: (``None``: the space's own log/linear rule); index ranks are left out because on the recorded
#: spaces they rarely differ from linear and never won (benchmarks/results/ablations/surrogate_fit.md).
AUTO_ORDINAL_SCALES = (None, "log", "linear")
#: Every ordinal warping a run may fix, or ``auto``.
ORDINAL_SCALE_CHOICES = (None, "auto") + ORDINAL_SCALES


@dataclass(frozen=True)
class GPSettings(Settings):
    """The Gaussian process of ``model: gp`` (the ``gp`` option group)."""

    lengthscale_prior: bool = True  # BaCO's Gamma(1.3, 0.1) prior on the length-scales (off: BaCO Fig. 9's ablation)
    noise: str = "homoscedastic"  # homoscedastic (one fitted nugget) | heteroscedastic (each point's noise from its measured repeats)

    def rules(self) -> list[Rule]:
        return [self.one_of("noise", NOISE_MODELS)]


class ModelExperiments(Protocol):
    """The experimental options the surrogate part reads (``experimental`` of ``bo``)."""

    @property
    def ordinal_scale(self) -> str | None: ...

    @property
    def memory_policy(self) -> str: ...

    @property
    def failure_quantile(self) -> float | None: ...


class SurrogateOptions(Protocol):
    """The options the surrogate part reads, as the strategy declares them (``bo``'s settings)."""

    @property
    def model(self) -> str: ...

    @property
    def gp(self) -> GPSettings: ...

    @property
    def rf(self) -> RandomForestSettings: ...

    @property
    def max_training_points(self) -> int | None: ...

    @property
    def experimental(self) -> ModelExperiments: ...


class SurrogateFactory:
    """GP, random forest or transfer GP fitted to a step's targets: see the module docstring."""

    def __init__(
        self,
        space: Space,
        rng: np.random.Generator,
        options: SurrogateOptions,
        log_transform: bool | str,
        objective_name: str,
    ) -> None:
        self.space, self.rng, self.options, self.objective_name = space, rng, options, objective_name
        self.log_transform = log_transform  # the surrogate's own log rule for the targets
        scale = options.experimental.ordinal_scale
        by_likelihood = scale == "auto" and options.model == "gp"
        scales = (
            distinct_ordinal_scales(space, AUTO_ORDINAL_SCALES)
            if by_likelihood
            else [None if scale == "auto" else scale]
        )
        #: the input warpings in play; "auto" re-chooses among them at every full GP fit
        self.encoders = [FeatureEncoder(space, ordinal_scale=s) for s in scales]
        self.encoder = self.encoders[0]
        self.model_kind = options.model
        self._theta: np.ndarray | None = None
        self._n_fits = 0
        self.transfer: TransferModel | None = None  # set by use_transfer
        #: the last suggestion's (history, targets, TrainingSet): picked once, read by all its models
        self._training: tuple[History, np.ndarray, TrainingSet] | None = None

    def use_transfer(self, runs: Sequence[Any]) -> None:
        """Learn with prior runs of the space (``bayestune.transfer.PriorRun``) as the GP's prior mean."""
        from bayestune.transfer.model import TransferModel  # only runs with prior runs load it

        if len(self.encoders) > 1:  # the source model is encoded once; "auto" re-chooses the encoding
            raise BayestuneError(
                "a transfer model needs one input encoding: set the ordinal scale to None, 'log', "
                "'linear' or 'index' instead of 'auto', or use transfer mode 'design'"
            )
        # Its own fixed seed: drawing from self.rng would change the design and every later draw,
        # so a run with an unused (zero-weight) source would no longer equal its cold start.
        self.transfer = TransferModel(runs, self.encoder, self.log_transform, seed=0)

    # ---- the step's calls ------------------------------------------------------------------
    def training_set(self, history: History, targets: np.ndarray) -> TrainingSet:
        """The rows this suggestion's models learn from (models.training), picked once per
        (history, targets): the surrogate, the classifier and the failure variance share them."""
        cached = self._training
        if cached is not None and cached[0] is history and cached[1] is targets:
            return cached[2]
        training = TrainingSet.choose(
            history,
            targets,
            self.options.max_training_points,
            self.encoder.transform,
            policy=self.options.experimental.memory_policy,
        )
        self._training = (history, targets, training)
        return training

    def observation_rows(self, history: History, targets: np.ndarray) -> np.ndarray:
        """Feasible and failed rows of the training set: what the feasibility classifier learns from."""
        return self.training_set(history, targets).rows

    def fit(self, history: History, targets: np.ndarray) -> ModelFit:
        """The surrogate of ``targets`` (minimised) over the feasible rows of the training set,
        and its failed rows at ``experimental.failure_quantile`` of those targets when set (the
        model's mean then steers away from failures too, not only P(feasible))."""
        training = self.training_set(history, targets)
        train = training.feasible
        X, y = history.X[train], targets[train]
        noise = self._noise_variances(history, train)
        quantile = self.options.experimental.failure_quantile
        if quantile is not None and len(training.failed) and len(y):
            failed = training.failed
            X = np.vstack([X, history.X[failed]])
            y = np.append(y, np.full(len(failed), float(np.quantile(y, quantile))))
            noise = None if noise is None else np.append(noise, np.full(len(failed), np.nan))
        if len(self.encoders) > 1 and self._n_fits % FULL_FIT_EVERY == 0:
            fitted = self._choose_warping(X, y, noise)
            F = self.encoder.transform(X)
        else:
            F = self.encoder.transform(X)
            fitted = self._fit(F, y, noise=noise)
        return ModelFit(fitted, X, y, fitted=fitted, F=F, y_fitted=y, noise=noise)

    def with_failures(
        self, fit: ModelFit, history: History, targets: np.ndarray, classifier: FeasibilityClassifier | None
    ) -> ModelFit:
        """The GP's posterior with its variance shrunk where evaluations failed (once a classifier
        is in use); other models unchanged."""
        if classifier is None or not isinstance(fit.fitted, GaussianProcess):
            return fit
        F_all = self.encoder.transform(history.X[self.observation_rows(history, targets)])
        fit.posterior = FailureAwarePosterior.build(fit.fitted, F_all, blas_threads=None)
        return fit

    def believe(self, fit: ModelFit, row: np.ndarray) -> ModelFit:
        """The fit with values pretended observed at ``row`` (one row, or several as a 2-D array),
        to plan the rest of a batch or to account for configurations in flight: the GP's
        prediction (kriging believer; hyperparameters kept), the best target so far for the
        forest (constant liar). With the hyperparameters kept, believing several rows at once is
        the same as believing them one after another: a value at the posterior mean moves no mean."""
        rows = np.atleast_2d(np.asarray(row, dtype=float))
        f_new = self.encoder.transform(rows)
        fitted = fit.fitted
        if fit.F is None or fit.y_fitted is None:  # set by every fit of this part
            raise BayestuneError("a batch believer needs the fit's training features and targets")
        if isinstance(fitted, GaussianProcess):
            believed = np.asarray(fitted.predict(f_new), dtype=float).reshape(-1)
        else:
            believed = np.full(len(rows), float(fit.y.min()))
        F, y = np.vstack([fit.F, f_new]), np.append(fit.y_fitted, believed)
        noise = None if fit.noise is None else np.append(fit.noise, np.full(len(rows), np.nan))  # no repeats
        if isinstance(fitted, GaussianProcess):
            refit = self._fit(F, y, fixed=fitted.fitted_hyperparameters(), noise=noise)
        else:
            refit = self._fit(F, y)
        return ModelFit(refit, fit.X, fit.y, fitted=refit, F=F, y_fitted=y, noise=noise)

    # ---- fitting ---------------------------------------------------------------------------
    def _noise_variances(self, history: History, rows: np.ndarray) -> np.ndarray | None:
        """Measured noise of the training ``rows`` for a heteroscedastic GP (``None``: homoscedastic)."""
        if self.options.gp.noise != "heteroscedastic" or not len(history.repeats):
            return None
        return repeat_variances([history.repeats[i] for i in rows], self.objective_name)

    def _fit(
        self,
        F: np.ndarray,
        y: np.ndarray,
        *,
        fixed: dict[str, Any] | None = None,
        noise: np.ndarray | None = None,
        log_transform: bool | str | None = None,
    ) -> Surrogate:
        if self.transfer is not None and fixed is None and log_transform is None and self.model_kind == "gp":
            return self.transfer.fit(
                F, y, lambda F_, y_, log: self._fit(F_, y_, noise=noise if y_ is y else None, log_transform=log)
            )
        seed = int(self.rng.integers(2**31))
        if self.model_kind == "rf":
            return self.options.rf.surrogate(self.log_transform, seed).fit(F, y)
        warm = self._theta if fixed is None else None
        light = warm is not None and self._n_fits % FULL_FIT_EVERY != 0
        gp = GaussianProcess(
            self.encoder.blocks,
            lengthscale_prior=LENGTHSCALE_PRIOR if self.options.gp.lengthscale_prior else None,
            log_transform_y=self.log_transform if log_transform is None else log_transform,
            fixed_hyperparameters=fixed,
            seed=seed,
            noise_bounds=NOISE_BOUNDS,
            outputscale_bounds=OUTPUTSCALE_BOUNDS,
            n_restarts_sample=24 if light else 100,
            max_iter=60 if light else 100,
            light_refit=light,
            blas_threads=None,
        ).fit(F, y, warm_start=warm, noise_variances=noise)  # the whole suggestion runs under one BLAS cap
        if fixed is None:
            self._theta = gp.hyperparameters_
            self._n_fits += 1
        return gp

    def _choose_warping(self, X: np.ndarray, y: np.ndarray, noise: np.ndarray | None) -> Surrogate:
        """Experimental: the ordinals' input warping learned as a model choice: the GP is fitted
        (full hyperparameter search) on each candidate encoding and the one with the highest log
        marginal likelihood becomes ``self.encoder`` until the next full fit; returns its GP."""
        theta, n_fits = self._theta, self._n_fits
        fitted: list[tuple[Any, FeatureEncoder]] = []  # GPs: use_transfer refuses several encodings
        for encoder in self.encoders:
            self._theta, self._n_fits = theta, n_fits
            self.encoder = encoder
            fitted.append((self._fit(encoder.transform(X), y, noise=noise), encoder))
        # the first of the highest marginal likelihoods, as a strict > over the encoders in order
        gp, self.encoder = max(fitted, key=lambda pair: pair[0].log_marginal_likelihood_value_)
        self._theta, self._n_fits = gp.hyperparameters_, n_fits + 1
        logger.debug("ordinal warping %r chosen by marginal likelihood", self.encoder.ordinal_scale)
        return gp
