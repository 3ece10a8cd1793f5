"""Kernel Tuner's ``bayes_opt`` acquisition policies emulated on bayestune's BO step: a benchmark
contender, not a user feature (the real Kernel Tuner strategies are the peers in
``benchmarks/peers/kernel_tuner_peer.py``).

``bo_kt`` is ``bo`` with Kernel Tuner's per-round judging of the EI/PI/LCB portfolio
(``method="multi-advanced"``, :class:`bayestune.acquisition.portfolio.AcquisitionPortfolio`
with ``kt_rounds``) and its contextual-variance exploration factor (as its code computes it,
``cv``, or as its paper writes it, ``cv_paper``; :mod:`bayestune.acquisition.exploration`).
These were ``bo``'s ``acquisition="advanced_multi"`` and ``exploration="cv_paper"`` before
issue 25; they lost against the default and left the strategy's options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bayestune.acquisition.exploration import SPREAD_SAMPLE, ContextualVariance, latent_unit
from bayestune.acquisition.portfolio import AcquisitionPortfolio
from bayestune.bostep.scorer import Scorer
from bayestune.history import History
from bayestune.models.base import ModelFit
from bayestune.models.encoding import FeatureEncoder
from bayestune.settings import Rule
from bayestune.strategies.base import register
from bayestune.strategies.bo import BayesianOptimization, BOSettings


class PolicyScorer(Scorer):
    """The BO step's scorer with Kernel Tuner's per-pick policies: a portfolio of acquisitions
    judged by discounted ranks, and the contextual-variance exploration factor instead of the
    constant ξ/κ (either may be None)."""

    def __init__(self, base: Scorer, portfolio: AcquisitionPortfolio | None, exploration: ContextualVariance | None):
        vars(self).update(vars(base))  # the strategy's scorer as configured, plus the policies
        self.portfolio, self.exploration = portfolio, exploration
        self._explore: tuple[float, float] | None = None
        self._last = base.acquisition

    def prepare(
        self, history: History, targets: np.ndarray, fit: ModelFit, encoder: FeatureEncoder, seen: set[bytes]
    ) -> None:
        """The incumbent, then this suggestion's exploration factor and the portfolio's judgement
        of the last proposals."""
        super().prepare(history, targets, fit, encoder, seen)
        if self.exploration is not None:
            self._explore = (
                self._exploration_factor(self.exploration, fit, encoder, seen),
                latent_unit(fit.fitted, fit.y),
            )
        if self.portfolio is not None:
            self.portfolio.update(self.space.row_keys(history.X), targets, history.feasible)

    def acquisition_parameter(self) -> tuple[str, float]:
        acquisition = self.portfolio.next_member() if self.portfolio is not None else self.acquisition
        parameter = self.kappa if acquisition == "lcb" else self.xi
        if self._explore is not None:
            factor, unit = self._explore
            parameter = factor if acquisition == "lcb" else factor * unit
        self._last = acquisition
        return acquisition, parameter

    def record(self, key: bytes) -> None:
        if self.portfolio is not None:
            self.portfolio.record_proposal(key, self._last)

    def _exploration_factor(
        self, exploration: ContextualVariance, fit: ModelFit, encoder: FeatureEncoder, seen: set[bytes]
    ) -> float:
        """Kernel Tuner's contextual-variance λ for this suggestion, from the posterior spread
        over unvisited candidates."""
        pool = self.candidates.unseen(seen)
        if pool is None:
            pool = self.space.sample(SPREAD_SAMPLE, self.rng)
        elif len(pool) > SPREAD_SAMPLE:
            pool = pool[self.rng.choice(len(pool), SPREAD_SAMPLE, replace=False)]
        if not len(pool):
            return 0.0
        _, sd = fit.posterior.predict_latent(encoder.transform(pool))
        return exploration(fit.fitted, sd, fit.y)


@dataclass(frozen=True)
class KernelTunerEmulationSettings(BOSettings):
    """Options of ``bo_kt``: those of ``bo`` plus Kernel Tuner's policies."""

    kt_portfolio: bool = True  # EI/PI/LCB as a portfolio (off: the acquisition option alone)
    kt_rounds: bool = True  # judge the portfolio once per round, as Kernel Tuner's multi-advanced does
    kt_exploration: str = "cv"  # constant | cv (Kernel Tuner's code) | cv_paper (its paper)

    def rules(self) -> list[Rule]:
        return [*super().rules(), self.one_of("kt_exploration", ("constant", "cv", "cv_paper"))]


@register
class KernelTunerEmulation(BayesianOptimization):
    """``bo`` with Kernel Tuner's acquisition policies: see the module docstring."""

    name = "bo_kt"
    settings_class = KernelTunerEmulationSettings
    settings: KernelTunerEmulationSettings

    def __init__(self, space, objectives, rng, **options: Any) -> None:
        super().__init__(space, objectives, rng, **options)
        s = self.settings
        portfolio = AcquisitionPortfolio(kt_rounds=s.kt_rounds) if s.kt_portfolio else None
        exploration = None if s.kt_exploration == "constant" else ContextualVariance(s.kt_exploration)
        self.scorer = self.step.scorer = PolicyScorer(self.scorer, portfolio, exploration)
