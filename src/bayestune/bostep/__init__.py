"""One Bayesian-optimisation step assembled from parts (:mod:`bayestune.bostep.step`): the
surrogate factory, the scorer and the proposal schedule that ``bo``, ``parego`` and ``bograph``
plug together."""

from bayestune.bostep.scorer import Scorer, ScoringChoice
from bayestune.bostep.step import BOStep, FeasibilitySettings, ProposalSchedule
from bayestune.bostep.surrogates import GPSettings, ModelChoice, SurrogateFactory

__all__ = [
    "BOStep",
    "FeasibilitySettings",
    "GPSettings",
    "ModelChoice",
    "ProposalSchedule",
    "Scorer",
    "ScoringChoice",
    "SurrogateFactory",
]
