"""One Bayesian-optimisation step assembled from parts (:mod:`bayestune.bostep.step`): the
surrogate part, the scorer and the proposal schedule that ``bo``, ``parego`` and ``bograph``
plug together."""

from bayestune.bostep.feasibility import FeasibilitySettings
from bayestune.bostep.proposers import ProposalSchedule
from bayestune.bostep.scorer import Scorer
from bayestune.bostep.step import BatchBeliever, BOStep, ModelPart
from bayestune.bostep.surrogates import GPSettings, SurrogateFactory

__all__ = [
    "BOStep",
    "BatchBeliever",
    "FeasibilitySettings",
    "GPSettings",
    "ModelPart",
    "ProposalSchedule",
    "Scorer",
    "SurrogateFactory",
]
