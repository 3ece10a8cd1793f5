"""What a surrogate is fitted to: the one rule for when an objective is modelled on a log
scale, and ParEGO's scalarisation of several objectives into one target.

Runtimes, energies and error rates — the usual objectives — are positive and
multiplicative, so ``"auto"`` logs a target exactly when every value is positive. For a
narrow positive range the log is nearly affine, so the rule only changes the model where it
matters, and unlike a ratio threshold (``max/min >= c``) it does not flip as data arrive.
Negated (maximised) objectives are never positive, hence never logged. The Gaussian
process, the random forest and ParEGO's per-objective normalisation all ask this module.

The measured noise of a target comes from here too: :func:`repeat_variances` reads the
repeated measurements behind each value, for a heteroscedastic model.

ParEGO (Knowles, 2006) turns M objectives into one with a random augmented Chebyshev
function ``f_λ(z) = max_j λ_j z_j + ρ Σ_j λ_j z_j`` of the objectives normalised to [0, 1].
Minimising any ``f_λ`` with positive weights yields a Pareto-optimal point, and the Chebyshev
form reaches non-convex parts of the front that a weighted sum cannot; drawing a new λ for
every suggestion spreads the suggestions along the front.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

#: Allowed values of every ``log_transform`` setting.
LOG_TRANSFORM_CHOICES = (True, False, "auto")


def uses_log(y: np.ndarray, setting: bool | str) -> bool:
    """Whether targets ``y`` are logged under ``setting`` (``True``, ``False`` or ``"auto"``).

    ``True`` insists: it raises when some value is not positive, where the log is undefined.
    """
    if setting not in LOG_TRANSFORM_CHOICES:
        raise ValueError(f"log_transform must be True, False or 'auto', but got {setting!r}")
    positive = bool(np.all(np.asarray(y, dtype=float) > 0))
    if setting is True and not positive:
        raise ValueError(
            f"log_transform=True needs every y > 0, but got min(y)={float(np.min(y))!r}; "
            "use log_transform='auto' or False"
        )
    return positive if setting == "auto" else bool(setting)


def repeat_variances(repeats: Sequence[Mapping[str, Sequence[float]]], name: str) -> np.ndarray:
    """Per evaluation, the variance of its reported value of objective ``name`` estimated from
    the repeated measurements (``Trial.repeats``): the sample variance over the number of
    repeats, the variance of their mean. NaN where fewer than two finite repeats were kept:
    the noise of such a point is unknown (a heteroscedastic GP fills it in, see ``GaussianProcess.fit``).

    The variance is in the objective's own units; a model that logs its targets carries it
    through the log itself (``var / y²``), so this rule does not need to know the log rule.
    """
    out = np.full(len(repeats), np.nan)
    for i, per_objective in enumerate(repeats):
        values = np.asarray(per_objective.get(name, ()) if per_objective else (), dtype=float)
        values = values[np.isfinite(values)]
        if values.size >= 2:
            out[i] = float(np.var(values, ddof=1)) / values.size
    return out


#: ParEGO's lattice resolution s per number of objectives (11 vectors for 2, 15 for 3, ...).
LATTICE_STEPS = {1: 1, 2: 10, 3: 4, 4: 3}
#: How ParEGO's weight vectors are drawn.
WEIGHT_DRAWS = ("lattice", "dirichlet")


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


class ChebyshevScalarization:
    """ParEGO's target: objectives to minimise, each logged by :func:`uses_log` and scaled to
    [0, 1], scalarised by :func:`chebyshev` under a weight vector drawn per call.

    Weights come uniformly from ParEGO's lattice (``lattice_steps`` per objective count, see
    :data:`LATTICE_STEPS`) or from a flat Dirichlet distribution.
    """

    def __init__(
        self,
        n_objectives: int,
        *,
        rho: float = 0.05,
        weights: str = "lattice",
        lattice_steps: int | None = None,
        log_transform: bool | str = "auto",
    ) -> None:
        self.n_objectives = n_objectives
        self.rho, self.weights, self.log_transform = rho, weights, log_transform
        self.lattice = weight_lattice(n_objectives, lattice_steps or LATTICE_STEPS.get(n_objectives, 2))

    def normalized(self, S: np.ndarray) -> np.ndarray:
        """Minimised objectives ``S`` (N, M), each (optionally) logged and scaled to [0, 1]."""
        S = np.array(S, dtype=float)
        for j in range(S.shape[1]):
            if uses_log(S[:, j], self.log_transform):
                S[:, j] = np.log(S[:, j])
        lo, hi = S.min(axis=0), S.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        return (S - lo) / span

    def draw_weights(self, rng: np.random.Generator) -> np.ndarray:
        if self.weights == "dirichlet":
            return rng.dirichlet(np.ones(self.n_objectives))
        return self.lattice[rng.integers(len(self.lattice))]

    def __call__(self, S: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The scalarised target of every row of ``S`` under one freshly drawn weight vector."""
        return chebyshev(self.normalized(S), self.draw_weights(rng), self.rho)
