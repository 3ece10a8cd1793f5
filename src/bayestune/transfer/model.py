"""The transfer model: a GP whose prior mean is what the sources measured.

Each source becomes a function of the target's features (:class:`SourceMean`): its recorded
value where it measured the configuration (a source failure counts as its worst value), a GP
fitted to a sample of it elsewhere. At every fit the sources are calibrated to the target's
observations by a line ``a + b·source`` (devices differ by scale and offset, in log units mostly
by a factor) and weighted by :func:`~bayestune.transfer.weighting.source_weight`; the prior mean
is the weighted calibrated sources, shrunk towards the target's mean by the missing weight, and
a GP models what is left (the residual). With every weight zero, the fit is exactly the cold
start's GP — negative transfer is bounded by the evidence the gate needs to open.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.models.base import Surrogate
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.gp import GaussianProcess
from bayestune.models.targets import uses_log
from bayestune.transfer.runs import PriorRun
from bayestune.transfer.weighting import source_weight

logger = logging.getLogger(__name__)

#: Source rows the fallback GP is fitted to: the best ones (where a minimiser looks) and a
#: random sample of the rest (for the global shape); a GP on thousands of rows would be slow.
SOURCE_GP_BEST = 50
SOURCE_GP_SAMPLE = 150

#: ``fit_gp(F, y, log_transform)``: the strategy's own GP fit, so a transfer fit differs from a
#: cold one only in its targets.
FitGP = Callable[[np.ndarray, np.ndarray, "bool | str"], Surrogate]


def _keys(F: np.ndarray) -> list[bytes]:
    return [row.tobytes() for row in np.ascontiguousarray(np.round(F, 10))]


class SourceMean:
    """One prior run as a function of encoded features (in its own, possibly logged, units)."""

    def __init__(
        self, run: PriorRun, encoder: FeatureEncoder, log_transform: bool | str = "auto", seed: int = 0
    ) -> None:
        self.name = run.name
        self.encoder = encoder
        y = run.y[run.feasible]
        self.log = uses_log(y, "auto" if log_transform is True else log_transform)
        z = np.where(run.feasible, np.log(np.where(run.feasible, run.y, 1.0)) if self.log else run.y, np.nan)
        z[~run.feasible] = np.nanmax(z)  # a failure on the source: assume as bad as its worst
        self.F = encoder.transform(run.X)
        self.z = z
        self.feasible = run.feasible
        self._table = dict(zip(_keys(self.F), z))
        self._seed = seed
        self._gp: GaussianProcess | None = None

    def __call__(self, F: np.ndarray) -> np.ndarray:
        out = np.array([self._table.get(k, np.nan) for k in _keys(F)], dtype=float)
        missing = np.isnan(out)
        if missing.any():
            out[missing] = self._fallback().predict(F[missing])
        return out

    def _fallback(self) -> GaussianProcess:
        """The GP for configurations the source never measured, fitted on first need."""
        if self._gp is None:
            rng = np.random.default_rng(self._seed)
            ok = np.flatnonzero(self.feasible)
            order = ok[np.argsort(self.z[ok], kind="stable")]
            best, rest = order[:SOURCE_GP_BEST], order[SOURCE_GP_BEST:]
            rows = np.concatenate([best, rng.choice(rest, min(len(rest), SOURCE_GP_SAMPLE), replace=False)])
            self._gp = GaussianProcess(
                self.encoder.blocks, log_transform_y=False, seed=self._seed, n_restarts_sample=20, max_iter=50
            ).fit(self.F[rows], self.z[rows])
        return self._gp


@dataclass(frozen=True)
class _Calibrated:
    """A source mapped into the target's units: ``intercept + slope·source``, with its weight."""

    source: SourceMean
    intercept: float
    slope: float
    weight: float
    tau: float


class TransferModel:
    """Fits the transfer surrogate for a strategy (see the module docstring); ``weights_`` holds
    the last fit's ``(source, weight, tau)`` and ``weight_history_`` every fit's, for logs and tests."""

    def __init__(
        self, runs: Sequence[PriorRun], encoder: FeatureEncoder, log_transform: bool | str = "auto", seed: int = 0
    ) -> None:
        if not runs:
            raise BayestuneError("a transfer model needs at least one prior run")
        self.log_transform = log_transform
        self.sources = [SourceMean(r, encoder, log_transform, seed + i) for i, r in enumerate(runs)]
        self.weights_: list[tuple[str, float, float]] = []
        self.weight_history_: list[list[tuple[str, float, float]]] = []

    def fit(self, F: np.ndarray, y: np.ndarray, fit_gp: FitGP) -> Surrogate:
        """The surrogate for targets ``y`` (to minimise) at features ``F``."""
        log = uses_log(y, self.log_transform)
        z = np.log(y) if log else np.asarray(y, dtype=float)
        calibrated = [self._calibrate(s, s(F), z) for s in self.sources]
        self.weights_ = [(c.source.name, c.weight, c.tau) for c in calibrated]
        self.weight_history_.append(self.weights_)
        used = [c for c in calibrated if c.weight > 0]
        logger.debug("transfer weights: %s", self.weights_)
        if not used:
            return fit_gp(F, y, self.log_transform)  # every source down-weighted: a cold start
        total = sum(c.weight for c in used)
        scale = 1.0 / total if total > 1.0 else 1.0
        prior = _PriorMean(used, scale, float(np.mean(z)))
        residual = z - prior(F)
        return TransferSurrogate(fit_gp(F, residual, False), prior, z)

    @staticmethod
    def _calibrate(source: SourceMean, m: np.ndarray, z: np.ndarray) -> _Calibrated:
        weight, tau = source_weight(m, z)
        slope, intercept = 0.0, float(np.mean(z))
        if weight > 0:
            slope, intercept = (float(v) for v in np.polyfit(m, z, 1))
            if not slope > 0:
                weight = 0.0
        return _Calibrated(source, intercept, slope, weight, tau)


class _PriorMean:
    """``mean + Σ wᵢ·(aᵢ + bᵢ·sourceᵢ(x) − mean)``: the target's mean where no source is trusted."""

    def __init__(self, used: Sequence[_Calibrated], scale: float, mean: float) -> None:
        self.used, self.scale, self.mean = list(used), scale, mean

    def __call__(self, F: np.ndarray) -> np.ndarray:
        out = np.full(F.shape[0], self.mean)
        for c in self.used:
            out += self.scale * c.weight * (c.intercept + c.slope * c.source(F) - self.mean)
        return out


class TransferSurrogate:
    """Prior mean plus a residual GP, as a :class:`~bayestune.models.base.Surrogate`: its latent
    units are the (logged) target in units of the residual GP's standard deviation."""

    def __init__(self, residual: Surrogate, prior: _PriorMean, z: np.ndarray) -> None:
        self.residual = residual
        self.prior = prior
        self._scale = float(getattr(residual, "y_std_", 1.0))
        self._offset = float(getattr(residual, "y_mean_", 0.0))
        self.best_y_latent_ = float(np.min(z)) / self._scale

    def fit(self, F: np.ndarray, y: np.ndarray) -> TransferSurrogate:
        raise BayestuneError("a TransferSurrogate is built by TransferModel.fit, not fitted directly")

    def predict_latent(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu, sd = self.residual.predict_latent(F)
        return (self.prior(F) + self._offset) / self._scale + mu, sd

    def feature_importance(self, names: Sequence[str] | None = None) -> dict[str, float]:
        return self.residual.feature_importance(names)
