"""Acquisition functions (EI, PI, LCB), their feasibility / prior weightings, and the scorer
that folds them into one score for the maximisers."""

from bayestune.acquisition.functions import (
    ACQUISITIONS,
    expected_improvement,
    feasibility_weighted,
    get_acquisition,
    lower_confidence_bound,
    prior_weighted,
    probability_of_improvement,
)

__all__ = [
    "ACQUISITIONS",
    "expected_improvement",
    "feasibility_weighted",
    "get_acquisition",
    "lower_confidence_bound",
    "prior_weighted",
    "probability_of_improvement",
]
