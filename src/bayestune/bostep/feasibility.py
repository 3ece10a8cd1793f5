"""Hidden constraints in a BO step: when P(feasible) is learned (the ``feasibility`` option
group; BaCO), and the classifier a suggestion scores with.

Why a part of its own: the step decides whether a classifier is fitted and the scorer reads
the threshold below which candidates are ruled out; both read this one group, so its default
threshold is written once (:data:`bayestune.acquisition.scoring.DEFAULT_FEASIBILITY_THRESHOLD`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bayestune.acquisition.scoring import DEFAULT_FEASIBILITY_THRESHOLD
from bayestune.history import History
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier
from bayestune.models.training import feasibility_classifier
from bayestune.settings import Rule, Settings


@dataclass(frozen=True)
class FeasibilitySettings(Settings):
    """Hidden constraints learned from failed evaluations (the ``feasibility`` option group; BaCO)."""

    model: bool | str = "auto"  # a random-forest classifier of P(feasible); auto: on once a failure has been seen
    threshold: float = DEFAULT_FEASIBILITY_THRESHOLD  # candidates with P(feasible) <= a draw from threshold x {0, 0.1, ..., 1} are ruled out

    def rules(self) -> list[Rule]:
        return [
            self.one_of("model", (True, False, "auto")),
            ("threshold", 0.0 <= self.threshold <= 1.0, "`0 <= threshold <= 1`"),
        ]

    def classifier(
        self,
        encoder: FeatureEncoder,
        history: History,
        rows: Callable[[], np.ndarray],
        rng: np.random.Generator,
    ) -> FeasibilityClassifier | None:
        """P(feasible) learned from the observation ``rows()`` of ``history``, or None when this
        group's ``model`` says no classifier (``auto``: none before the first failure)."""
        if self.model is False or (self.model == "auto" and history.feasible.all()):
            return None
        return feasibility_classifier(encoder, history, rows(), rng)
