"""ParEGO: several objectives through random Chebyshev scalarisations (Knowles, 2006,
adapted to BaCO's mixed spaces).

It is the ``bo`` strategy with another target: each suggestion normalises every objective
of the feasible evaluations to [0, 1] (minimised; logged by the rule of
:mod:`bayestune.models.targets`), draws a weight vector λ — by default uniformly from
ParEGO's lattice — and fits the surrogate to the augmented Chebyshev scalarisation under λ
(:class:`~bayestune.models.targets.ChebyshevScalarization`). Everything else is ``bo``'s:
the mixed-kernel GP, P(feasible) from the random-forest classifier, the prior's weight and
the maximisation; a batch of ``n`` shares one λ and is planned with the kriging believer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bayestune.history import History
from bayestune.models.targets import WEIGHT_DRAWS, ChebyshevScalarization
from bayestune.strategies.base import Rule, register
from bayestune.strategies.bo import BayesianOptimization, BOSettings


@dataclass(frozen=True)
class ParEGOSettings(BOSettings):
    """Options of the ``parego`` strategy: those of ``bo`` (``log_transform`` applies to each
    objective before normalising) plus the scalarisation's."""

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
        ]


@register
class ParEGO(BayesianOptimization):
    """See the module docstring."""

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
