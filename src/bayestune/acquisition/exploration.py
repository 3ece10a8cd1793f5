"""Kernel Tuner's contextual-variance exploration factor (its BO paper, §III-F).

Instead of a constant ξ (EI, PI) or κ (LCB), the exploration parameter λ is recomputed at
every suggestion from the state of the model: it shrinks as the model grows sure of itself
(mean posterior spread σ̄ over the unvisited candidates, relative to σ̄_s, its value right
after the initial sample) and as the incumbent f⁺ improves on the initial sample's mean μ_s.

Two variants, because the paper and its code disagree (kernel_tuner 1.5.0,
``strategies/bayes_opt.py``, ``contextual_variance``):

* ``cv`` (the code, Table I's "CV"): λ = (σ̄ / σ̄_s) · (f⁺ / μ_s), σ̄ the mean posterior
  *standard deviation*;
* ``cv_paper`` (the text): λ = (σ̄² / (μ_s / f⁺)) / σ̄²_s, σ̄² the mean posterior *variance*.

Other choices of this implementation, each a place where the code is silent or scale-bound:

* Kernel Tuner uses λ as-is in every member: as ``f⁺ − λ`` in EI/PI, where f⁺ is in the
  objective's *raw units* (so the same λ means a large margin for a 1 ms kernel and none for a
  1 s one), and as LCB's β. Here λ is applied in the model's latent space, with one unit = one
  standard deviation of the (logged, if the model logs) targets: EI/PI's ξ = λ·unit and LCB's
  κ = λ. So the margin is scale-free, which is what §III-F asks the normalisation to achieve.
* σ̄ is measured in the units of the (logged) targets, so refits that re-standardise do not
  move it; it is the mean over at most :data:`SPREAD_SAMPLE` unvisited candidates (Kernel Tuner
  predicts all of them).
* f⁺/μ_s is the ratio of raw targets, defined for positive objectives (run times). If μ_s or
  f⁺ is not positive the ratio is taken as 1 (Kernel Tuner returns |σ̄/f⁺| unnormalised then,
  which depends on the scale). Kernel Tuner returns 0.01 before any valid optimum; here the
  factor is only asked for once the model has two feasible points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The exploration options of ``bo``: the constant ξ/κ, or one of the two λ variants.
EXPLORATION_CHOICES = ("constant", "cv", "cv_paper")
#: Unvisited candidates whose predicted spread is averaged into σ̄.
SPREAD_SAMPLE = 1000


@dataclass
class ContextualVariance:
    """λ of §III-F; the first call fixes σ̄_s and μ_s (the state after the initial sample)."""

    variant: str = "cv"
    spread_initial: float | None = None
    mean_initial: float | None = None

    def __post_init__(self) -> None:
        if self.variant not in EXPLORATION_CHOICES[1:]:
            raise ValueError(f"contextual variance: unknown variant {self.variant!r}")

    def factor(self, spread: float, best: float, mean_observed: float) -> float:
        """λ from the mean predicted standard deviation ``spread`` (target units), the incumbent
        ``best`` and the mean of the observed targets ``mean_observed`` (raw units)."""
        if self.spread_initial is None or self.mean_initial is None:
            self.spread_initial, self.mean_initial = max(float(spread), 1e-12), float(mean_observed)
        ratio = best / self.mean_initial if self.mean_initial > 0 and best > 0 else 1.0
        relative = float(spread) / self.spread_initial
        if self.variant == "cv_paper":
            relative = relative * relative
        return max(0.0, relative * ratio)

    def __call__(self, fitted, sd_latent: np.ndarray, y: np.ndarray) -> float:
        """λ for the surrogate ``fitted`` trained on the raw targets ``y``, given its latent
        posterior standard deviations ``sd_latent`` at unvisited candidates."""
        scale = float(getattr(fitted, "y_std_", 1.0))  # target units per latent unit (the GP standardises)
        y = np.asarray(y, dtype=float)
        return self.factor(float(np.mean(sd_latent)) * scale, float(np.min(y)), float(np.mean(y)))


def latent_unit(fitted, y: np.ndarray) -> float:
    """One standard deviation of the (logged) targets ``y`` in ``fitted``'s latent units."""
    y = np.asarray(y, dtype=float)
    t = np.log(y) if bool(getattr(fitted, "log_y_", False)) else y
    std_t = float(np.std(t)) or 1.0
    return std_t / float(getattr(fitted, "y_std_", 1.0))
