"""Surrogate models: the :class:`Surrogate` contract, the mixed-type Gaussian process and its
kernel, the random forests, the failure-aware posterior and the targets they are fitted to."""

from bayestune.models.base import Surrogate
from bayestune.models.gp import GaussianProcess
from bayestune.models.kernels import (
    BLOCK_METRICS,
    FeatureBlock,
    MixedMatern52,
    block_sq_distances,
    blocks_for_parameters,
    matern52,
    scaled_sq_distances,
    sq_distance_stack,
)

__all__ = [
    "BLOCK_METRICS",
    "FeatureBlock",
    "GaussianProcess",
    "MixedMatern52",
    "Surrogate",
    "block_sq_distances",
    "blocks_for_parameters",
    "matern52",
    "scaled_sq_distances",
    "sq_distance_stack",
]
