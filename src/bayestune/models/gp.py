"""Gaussian process regression over mixed parameter spaces (BaCO §3.2–3.3).

The model in one paragraph: outputs are (optionally) log-transformed and standardised into
the *latent* space; the latent function is a zero-mean GP with the mixed Matérn 5/2 kernel
of :mod:`bayestune.models.kernels` and Gaussian observation noise. Hyperparameters

    θ = (log ℓ_1, …, log ℓ_P, log σ², log σ_n²)

maximise the log marginal likelihood plus the log of Gamma(α, β) priors on the length-scales
(BaCO: α = 1.3, β = 0.1 for normalised inputs), which keep discrete parameters from being
given near-zero length-scales that turn the GP into a sparse lookup table.

The prior is a density on ℓ; because we optimise over ``log ℓ`` we add the density of
``log ℓ`` itself, ``log p_Γ(ℓ) + log ℓ`` (the Jacobian ``dℓ/dlog ℓ = ℓ``). This makes the
optimum independent of how the optimiser is parametrised and pushes harder away from
``ℓ → 0``: the per-length-scale term is ``α log ℓ − β ℓ`` (mode at ℓ = α/β) instead of
``(α−1) log ℓ − β ℓ``.

Fitting follows BaCO's public defaults: sample many θ at random (length-scales half from
the prior, half log-uniform; σ² ~ 10^U(−1, 1); σ_n² ~ 10^U(−5, −2)), score them cheaply,
polish the best few (plus the previous optimum when warm-starting) with L-BFGS-B using the
analytic gradient, and keep the best. Predictions use the noise-free posterior by default,
as BaCO's EI does, so good points are not re-sampled just because they are noisy.

The objective the search climbs (likelihood, prior, packed distances) is
:mod:`bayestune.models.likelihood`; this module is the estimator around it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import optimize

from bayestune.models.hyperparameters import FULL_POLISH_STARTS, distinct, fixed_theta, random_thetas
from bayestune.models.kernels import FeatureBlock, MixedMatern52, ScaledDistances, matern52
from bayestune.models.likelihood import (
    LOG_2PI,
    TrainingData,
    log_marginal_likelihood,
    log_prior,
    neg_log_posterior,
    unpack,
)
from bayestune.models.linalg import cho_solve, cholesky, limit_blas_threads, solve_lower
from bayestune.models.targets import LOG_TRANSFORM_CHOICES, uses_log

logger = logging.getLogger(__name__)

#: L-BFGS-B relative-reduction tolerance: the log posterior is a sum over N points, so a
#: relative change of 1e-7 is far below what moves a prediction; SciPy's default (2.2e-9)
#: spends ~15 % more evaluations for digits nobody uses.
_LBFGS_FTOL = 1e-7
#: Largest number of kernel entries (candidates × training points) computed at once in predict:
#: blocks of ~1.6 MB stay in cache through the half-dozen passes over them (the 5000 random
#: samples of the acquisition search scored ~1.7x faster than in one 4 MB block).
_PREDICT_CHUNK_ENTRIES = 200_000
#: Chunks hold a multiple of this many rows. BLAS's matrix-vector kernel handles rows in groups
#: and the last few rows of a call in a separate loop, whose sums may round differently; with
#: whole groups per chunk every row is computed as one unchunked call computes it, so the
#: chunk size does not change a prediction's bits (and a search's trajectory).
_PREDICT_CHUNK_ROWS = 64
#: Smallest per-point noise variance of a heteroscedastic fit, in latent (standardised) units:
#: repeats that all agree (timer resolution) must not make a point exact.
NOISE_VARIANCE_FLOOR = 1e-6


class GaussianProcess:
    """GP regression with the mixed Matérn 5/2 kernel; scikit-learn style estimator.

    Parameters
    ----------
    blocks:
        One :class:`FeatureBlock` per tuning parameter; one length-scale each.
    lengthscale_prior:
        ``(concentration, rate)`` of a Gamma prior on every length-scale, or ``None`` for
        plain maximum likelihood.
    n_restarts_sample:
        Random hyperparameter vectors scored before polishing.
    keep_fraction:
        Fraction of those (at least one) polished with L-BFGS-B.
    log_transform_y:
        ``True``, ``False`` or ``"auto"``: the log rule of :mod:`bayestune.models.targets`
        (``"auto"`` logs when every value is positive).
    lengthscale_bounds, outputscale_bounds, noise_bounds:
        Box constraints for the optimiser (not for ``fixed_hyperparameters``). The noise is
        in standardised units: 1.0 means "all of the variance is noise", which a noisy
        benchmark with a few samples may legitimately prefer.
    fixed_hyperparameters:
        ``{"lengthscales": float | sequence | {name: ℓ}, "outputscale": σ², "noise": σ_n²}``,
        any subset; the given values are held fixed and the rest are optimised.
    max_iter:
        L-BFGS-B iteration limit per polished start.
    screen_max_points:
        Above this many training points, the random hyperparameters are scored and
        polished on a random subset of this size (ranking needs the shape of the
        likelihood, not every point, and this keeps that cost flat in N); the best few
        subset optima are then polished again on all points.
    light_refit:
        The cheap refit between full searches, when ``fit`` gets a ``warm_start``: a random
        start is polished only if it already screens better than the warm start, and above
        ``screen_max_points`` only the best candidate is polished again on all points (the warm
        start alone goes to all points directly). One new
        observation rarely moves the optimum, so the warm start's basin is usually kept.
    blas_threads:
        BLAS threads used inside ``fit``/``predict`` (``None``: leave the process setting).
    seed:
        Seed (or ``numpy.random.Generator``) for the random starts and the subset.
    """

    def __init__(
        self,
        blocks: Sequence[FeatureBlock],
        *,
        lengthscale_prior: tuple[float, float] | None = (1.3, 0.1),
        n_restarts_sample: int = 100,
        keep_fraction: float = 0.05,
        log_transform_y: bool | str = "auto",
        lengthscale_bounds: tuple[float, float] = (1e-2, 1e3),
        outputscale_bounds: tuple[float, float] = (1e-2, 1e2),
        noise_bounds: tuple[float, float] = (1e-6, 1.0),
        fixed_hyperparameters: Mapping[str, Any] | None = None,
        max_iter: int = 100,
        screen_max_points: int = 100,
        light_refit: bool = False,
        blas_threads: int | None = 1,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        self.blocks = tuple(blocks)
        self.lengthscale_prior = lengthscale_prior
        self.n_restarts_sample = n_restarts_sample
        self.keep_fraction = keep_fraction
        self.log_transform_y = log_transform_y
        self.lengthscale_bounds = lengthscale_bounds
        self.outputscale_bounds = outputscale_bounds
        self.noise_bounds = noise_bounds
        self.fixed_hyperparameters = fixed_hyperparameters
        self.max_iter = max_iter
        self.screen_max_points = screen_max_points
        self.light_refit = light_refit
        self.blas_threads = blas_threads
        self.seed = seed

    # ================================================================ settings checks
    def _check_settings(self) -> None:
        if self.log_transform_y not in LOG_TRANSFORM_CHOICES:
            raise ValueError(f"log_transform_y must be True, False or 'auto', but got {self.log_transform_y!r}")
        if self.lengthscale_prior is not None:
            a, b = self.lengthscale_prior
            if not (a > 0 and b > 0):
                raise ValueError(
                    f"lengthscale_prior: `concentration > 0 and rate > 0` must hold, but got {self.lengthscale_prior!r}"
                )
        for name in ("lengthscale_bounds", "outputscale_bounds", "noise_bounds"):
            lo, hi = getattr(self, name)
            if not 0 < lo <= hi:
                raise ValueError(f"{name}: `0 < low <= high` must hold, but got {(lo, hi)!r}")
        if not (isinstance(self.n_restarts_sample, (int, np.integer)) and self.n_restarts_sample >= 1):
            raise ValueError(f"n_restarts_sample must be an integer >= 1, but got {self.n_restarts_sample!r}")
        if not (isinstance(self.screen_max_points, (int, np.integer)) and self.screen_max_points >= 2):
            raise ValueError(f"screen_max_points must be an integer >= 2, but got {self.screen_max_points!r}")
        if not 0 < self.keep_fraction <= 1:
            raise ValueError(f"keep_fraction: `0 < keep_fraction <= 1` must hold, but got {self.keep_fraction!r}")
        allowed = {"lengthscales", "outputscale", "noise"}
        unknown = set(self.fixed_hyperparameters or {}) - allowed
        if unknown:
            raise ValueError(f"fixed_hyperparameters: unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")

    # ================================================================ θ layout
    @property
    def hyperparameter_names(self) -> list[str]:
        """Names of the entries of θ (all in log space)."""
        return [f"log_lengthscale[{b.name}]" for b in self.blocks] + ["log_outputscale", "log_noise"]

    def _bounds(self) -> np.ndarray:
        P = len(self.blocks)
        rows = [self.lengthscale_bounds] * P + [self.outputscale_bounds, self.noise_bounds]
        return np.log(np.asarray(rows, dtype=float))

    # ================================================================ y transform
    def _fit_y_transform(self, y: np.ndarray) -> np.ndarray:
        """Choose the log transform, standardise, and return the latent targets."""
        use_log = uses_log(y, self.log_transform_y)
        t = np.log(y) if use_log else y
        mean, std = float(np.mean(t)), float(np.std(t))
        if not std > 1e-12 * max(1.0, abs(mean)):
            std = 1.0  # constant outputs: centre only, so the latent targets are all zero
        self.log_y_, self.y_mean_, self.y_std_ = use_log, mean, std
        return (t - mean) / std

    def y_to_latent(self, y: np.ndarray) -> np.ndarray:
        """Map outputs in original units into the latent (logged, standardised) space."""
        y = np.asarray(y, dtype=float)
        t = np.log(y) if self.log_y_ else y
        return (t - self.y_mean_) / self.y_std_

    # ================================================================ θ as values
    def _unpack(self, theta: np.ndarray) -> tuple[np.ndarray, float, float]:
        return unpack(theta, len(self.blocks))

    # ================================================================ fitting
    def _check_fit_inputs(self, F: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        F = self._kernel.check_features(F, "F")
        y = np.asarray(y, dtype=float)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, but got shape {y.shape}")
        if y.shape[0] != F.shape[0]:
            raise ValueError(f"F and y must have the same number of rows, but got {F.shape[0]} and {y.shape[0]}")
        if y.shape[0] == 0:
            raise ValueError("cannot fit a GaussianProcess to zero observations")
        bad = np.flatnonzero(~np.isfinite(y))
        if bad.size:
            raise ValueError(
                f"y must be finite, but got NaN or infinite values at row(s) {bad[:10].tolist()}: "
                "drop failed evaluations (model them with the feasibility classifier) before fitting"
            )
        return F, y

    def _screen(self, thetas: np.ndarray, data: TrainingData) -> np.ndarray:
        """Negative log posterior of each θ (no gradient): the cheap ranking step."""
        out = np.empty(len(thetas))
        for i, theta in enumerate(thetas):
            lml, _ = log_marginal_likelihood(theta, data, len(self.blocks), eval_gradient=False)
            out[i] = -(lml + log_prior(theta, len(self.blocks), self.lengthscale_prior)[0])
        return out

    def _polish(
        self, theta0: np.ndarray, template: np.ndarray, free: np.ndarray, bounds: np.ndarray, data: TrainingData
    ) -> tuple[np.ndarray, float]:
        res = optimize.minimize(
            neg_log_posterior,
            theta0[free],
            args=(template, free, data, len(self.blocks), self.lengthscale_prior),
            jac=True,
            method="L-BFGS-B",
            bounds=bounds[free],
            options={"maxiter": self.max_iter, "ftol": _LBFGS_FTOL},
        )
        theta = template.copy()
        theta[free] = res.x
        return theta, float(res.fun)

    def _optimise(
        self, template: np.ndarray, free: np.ndarray, warm_start: np.ndarray | None, data: TrainingData
    ) -> np.ndarray:
        """Sample, screen, polish the best few; coarse-to-fine when N is large.

        Up to ``screen_max_points`` everything runs on all data. Above it, screening and the
        multi-start polish run on a random subset (cost flat in N), the subset optima and
        the warm start are re-ranked on all data, and only the best few are polished on all
        data — the expensive steps then start close to their optima. ``light_refit`` trims
        both polishing steps (see the class docstring).
        """
        bounds = self._bounds()
        rng = self.seed if isinstance(self.seed, np.random.Generator) else np.random.default_rng(self.seed)
        thetas = random_thetas(rng, self.lengthscale_prior, template, free, bounds, int(self.n_restarts_sample))
        n = data.y.shape[0]
        subset = n > self.screen_max_points
        small = data.subset(np.sort(rng.choice(n, size=int(self.screen_max_points), replace=False))) if subset else data
        scores = self._screen(thetas, small)
        n_keep = max(1, math.ceil(self.keep_fraction * len(thetas)))
        best = np.argsort(scores, kind="stable")[:n_keep]
        warm = None
        if warm_start is not None:
            warm = np.where(free, np.clip(warm_start, bounds[:, 0], bounds[:, 1]), template)
        light = self.light_refit and warm is not None
        if light and warm is not None:  # a random start must beat the warm start before it earns a polish
            best = best[scores[best] < self._screen(warm[None, :], small)[0]]
        if (
            light and warm is not None and subset and not len(best)
        ):  # the previous optimum, polished on all points, is all it takes
            return self._polish(warm, template, free, bounds, data)[0]
        starts = [thetas[i] for i in best] + ([warm] if warm is not None else [])
        polished = [self._polish(t0, template, free, bounds, small) for t0 in starts]
        if not subset:
            return min(polished, key=lambda tv: tv[1])[0]
        candidates = np.array([t for t, _ in polished] + ([warm] if warm is not None else []))
        order = np.argsort(self._screen(candidates, data), kind="stable")
        limit = 1 if light else FULL_POLISH_STARTS
        finals = [self._polish(t0, template, free, bounds, data) for t0 in distinct(candidates[order], limit)]
        return min(finals, key=lambda tv: tv[1])[0]

    def fit(
        self,
        F: np.ndarray,
        y: np.ndarray,
        *,
        warm_start: np.ndarray | None = None,
        noise_variances: np.ndarray | None = None,
    ) -> GaussianProcess:
        """Fit hyperparameters and the posterior to features ``F`` (N, D) and outputs ``y`` (N,).

        ``warm_start`` is a previous ``hyperparameters_`` vector, polished as one more start
        (the optimiser loop passes the last optimum every iteration).

        ``noise_variances`` makes the fit heteroscedastic: the measured variance of each ``y``
        in its own units (NaN where unknown). They are carried to the latent scale (through the
        log by the delta method ``var / y²``, then the standardisation), floored at
        :data:`NOISE_VARIANCE_FLOOR`, unknown ones set to the median of the known ones, and added
        to the diagonal as they are; the fitted nugget σ_n² stays on top of them for what the
        measurements do not explain (model misfit), so low-noise points are trusted more. With no
        known variance at all the fit is the homoscedastic one.
        """
        self._check_settings()
        self._kernel = MixedMatern52(self.blocks)
        F, y = self._check_fit_inputs(F, y)
        template, free = fixed_theta([b.name for b in self.blocks], self.fixed_hyperparameters)
        if warm_start is not None:
            warm_start = np.asarray(warm_start, dtype=float).reshape(-1)
            if warm_start.shape != template.shape or not np.all(np.isfinite(warm_start)):
                raise ValueError(
                    f"warm_start must be a finite vector of {template.size} log-hyperparameters "
                    f"({', '.join(self.hyperparameter_names)}), but got {warm_start.tolist()}"
                )
        y_latent = self._fit_y_transform(y)
        noise = None if noise_variances is None else self._latent_noise(noise_variances, y)
        with limit_blas_threads(self.blas_threads):
            # Distances are cached for every θ tried below: they do not depend on ℓ.
            data = TrainingData.from_full(self._kernel.sq_distances(F), y_latent, noise)
            theta = self._optimise(template, free, warm_start, data) if free.any() else template
            self._set_posterior(F, y, data, theta)
        return self

    def _latent_noise(self, noise_variances: np.ndarray, y: np.ndarray) -> np.ndarray | None:
        """Per-point noise variances in the latent space (see :meth:`fit`); ``None`` when none is known."""
        v = np.asarray(noise_variances, dtype=float).reshape(-1)
        if v.shape != y.shape:
            raise ValueError(f"noise_variances needs one entry per observation ({y.shape[0]}), but got {v.shape[0]}")
        if np.any(v < 0) or np.any(np.isinf(v)):
            raise ValueError(f"noise_variances must be >= 0 and finite (NaN: unknown), but got {v.tolist()[:10]}")
        if self.log_y_:
            v = v / (y * y)
        v = v / (self.y_std_ * self.y_std_)
        known = ~np.isnan(v)
        if not known.any():
            return None  # nothing measured: the homoscedastic model
        return np.maximum(np.where(known, v, float(np.median(v[known]))), NOISE_VARIANCE_FLOOR)

    def _set_posterior(self, F: np.ndarray, y: np.ndarray, data: TrainingData, theta: np.ndarray) -> None:
        """Factorise K once at the chosen θ; predictions reuse the factor and α."""
        ls, s2, noise = self._unpack(theta)
        y_latent = data.y
        n = y_latent.shape[0]
        K = data.kernel_matrix(s2 * matern52((1.0 / (ls * ls)) @ data.D2), noise)
        self.L_, self.jitter_ = cholesky(K)
        self.alpha_ = cho_solve(self.L_, y_latent)
        self.X_train_, self.y_train_, self.y_latent_ = F.copy(), y.copy(), y_latent
        self._to_training: ScaledDistances | None = None
        self._data = data
        self.noise_variances_ = None if data.noise is None else data.noise.copy()
        self.hyperparameters_ = theta.copy()
        self.lengthscales_ = {b.name: float(v) for b, v in zip(self.blocks, ls)}
        self.outputscale_, self.noise_ = s2, noise
        self.best_y_latent_ = float(np.min(y_latent))
        self.n_features_in_ = F.shape[1]
        self.log_marginal_likelihood_value_ = (
            -0.5 * float(y_latent @ self.alpha_) - float(np.sum(np.log(np.diag(self.L_)))) - 0.5 * n * LOG_2PI
        )
        if self.jitter_ > 0:
            logger.debug("GP kernel matrix needed jitter %.3g (duplicate rows with tiny noise?)", self.jitter_)
        logger.debug(
            "GP fit on %d points: lengthscales=%s outputscale=%.3g noise=%.3g lml=%.4g",
            n,
            self.lengthscales_,
            s2,
            noise,
            self.log_marginal_likelihood_value_,
        )

    # ================================================================ evaluation API
    def _check_fitted(self) -> None:
        if not hasattr(self, "alpha_"):
            raise RuntimeError("this GaussianProcess is not fitted yet: call fit(F, y) first")

    def _theta_or_fitted(self, theta: np.ndarray | None) -> np.ndarray:
        if theta is None:
            return self.hyperparameters_
        theta = np.asarray(theta, dtype=float).reshape(-1)
        if theta.shape != self.hyperparameters_.shape:
            raise ValueError(
                f"theta must have {self.hyperparameters_.size} entries "
                f"({', '.join(self.hyperparameter_names)}), but got {theta.size}"
            )
        return theta

    def log_marginal_likelihood(self, theta: np.ndarray | None = None, eval_gradient: bool = False):
        """``log p(y_latent | θ)`` on the training data (no prior); with its θ-gradient if asked."""
        self._check_fitted()
        theta = self._theta_or_fitted(theta)
        lml, grad = log_marginal_likelihood(theta, self._data, len(self.blocks), eval_gradient)
        return (lml, grad) if eval_gradient else lml

    def log_posterior(self, theta: np.ndarray | None = None, eval_gradient: bool = False):
        """The maximised objective: log marginal likelihood + log prior density of ``log ℓ``."""
        self._check_fitted()
        theta = self._theta_or_fitted(theta)
        lml, grad = log_marginal_likelihood(theta, self._data, len(self.blocks), eval_gradient)
        lp, gp = log_prior(theta, len(self.blocks), self.lengthscale_prior)
        return (lml + lp, grad + gp) if eval_gradient else lml + lp

    def predict_latent(self, F: np.ndarray, noiseless: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation in the latent space (where EI is computed).

        ``noiseless=True`` gives the posterior of the noise-free function ``f``; otherwise
        the fitted nugget σ_n² is added to the variance (measured per-point noise belongs to
        the training points, not to new ones).
        """
        self._check_fitted()
        F = self._kernel.check_features(F, "F")
        mu = np.empty(F.shape[0])
        var = np.empty(F.shape[0])
        with limit_blas_threads(self.blas_threads):
            for rows in self.prediction_chunks(F.shape[0]):
                mu[rows], var[rows] = self.moments(self.cross_covariance(F[rows]), overwrite=True)
        if not noiseless:
            var += self.noise_
        return mu, np.sqrt(np.maximum(var, 0.0))

    def prediction_chunks(self, n_rows: int) -> list[slice]:
        """Row slices small enough that one cross-covariance block stays within memory bounds."""
        rows = _PREDICT_CHUNK_ENTRIES // max(self.X_train_.shape[0], 1)
        chunk = max(_PREDICT_CHUNK_ROWS, rows - rows % _PREDICT_CHUNK_ROWS)
        return [slice(s, s + chunk) for s in range(0, n_rows, chunk)]

    def cross_covariance(self, F: np.ndarray) -> np.ndarray:
        """``k(F, training rows)`` at the fitted hyperparameters, shape (M, N)."""
        self._check_fitted()
        if self._to_training is None:  # the training side, embedded once per fit
            ls = np.exp(self.hyperparameters_[: len(self.blocks)])
            self._to_training = ScaledDistances(self.blocks, self.X_train_, ls)
        K = matern52(self._to_training(F), in_place=True)
        K *= self.outputscale_
        return K

    def moments(self, Ks: np.ndarray, *, overwrite: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Noise-free latent posterior mean and variance from a :meth:`cross_covariance` block
        (``overwrite``: ``Ks`` is scratch space afterwards)."""
        self._check_fitted()
        mu = Ks @ self.alpha_
        v = solve_lower(self.L_, Ks.T, overwrite_b=overwrite)
        return mu, self.outputscale_ - np.einsum("ij,ij->j", v, v)

    def posterior_covariance(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Joint noise-free latent posterior of the rows ``F``: mean (M,) and covariance (M, M),
        for correlated draws (Thompson sampling); M x M memory, so keep M to a few thousand."""
        self._check_fitted()
        F = self._kernel.check_features(F, "F")
        ls = np.exp(self.hyperparameters_[: len(self.blocks)])
        with limit_blas_threads(self.blas_threads):
            prior = matern52(ScaledDistances(self.blocks, F, ls)(F), in_place=True)
            prior *= self.outputscale_
            Ks = self.cross_covariance(F)
            mean = Ks @ self.alpha_
            v = solve_lower(self.L_, Ks.T, overwrite_b=True)
            cov = prior - v.T @ v
        return mean, 0.5 * (cov + cov.T)

    def predict(self, F: np.ndarray, return_std: bool = False, noiseless: bool = True):
        """Prediction in original ``y`` units.

        Without a log transform this is the Gaussian posterior mean (and std). With one, the
        mean is the posterior *median* ``exp(μ)`` — the log-normal mean ``exp(μ + s²/2)``
        explodes far from the data — and the std is its first-order value ``exp(μ)·s``. Use
        :meth:`predict_latent` for the exact Gaussian posterior.
        """
        mu, sd = self.predict_latent(F, noiseless=noiseless)
        mean, std = mu * self.y_std_ + self.y_mean_, sd * self.y_std_
        if self.log_y_:
            mean = np.exp(mean)
            std = mean * std
        return (mean, std) if return_std else mean

    def fitted_hyperparameters(self) -> dict[str, Any]:
        """The fitted ℓ, σ² and σ_n² in the form ``fixed_hyperparameters`` takes, to reuse them."""
        self._check_fitted()
        return {"lengthscales": dict(self.lengthscales_), "outputscale": self.outputscale_, "noise": self.noise_}

    def feature_importance(self, names: Sequence[str] | None = None) -> dict[str, float]:
        """Inverse length-scales normalised to sum to one (short ℓ = output changes fast),
        keyed by ``names`` (one per block; default: the block names)."""
        self._check_fitted()
        names = [b.name for b in self.blocks] if names is None else list(names)
        if len(names) != len(self.blocks):
            raise ValueError(f"feature_importance needs one name per block ({len(self.blocks)}), but got {len(names)}")
        inv = np.array([1.0 / self.lengthscales_[b.name] for b in self.blocks])
        inv = inv / inv.sum()
        return {name: float(v) for name, v in zip(names, inv)}
