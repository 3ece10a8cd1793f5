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

from bayestune.acquisition.exploration import ContextualVariance
from bayestune.acquisition.portfolio import AcquisitionPortfolio
from bayestune.settings import Rule
from bayestune.strategies.base import register
from bayestune.strategies.bo import BayesianOptimization, BOSettings


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
        if self.settings.kt_portfolio:
            self.scorer.portfolio = AcquisitionPortfolio(kt_rounds=self.settings.kt_rounds)
        variant = self.settings.kt_exploration
        self.scorer.exploration = None if variant == "constant" else ContextualVariance(variant)
