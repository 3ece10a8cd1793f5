"""Acquisition functions (EI, PI, LCB) and their feasibility / prior weightings."""

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
    "ACQUISITIONS", "expected_improvement", "feasibility_weighted", "get_acquisition", "lower_confidence_bound",
    "prior_weighted", "probability_of_improvement",
]
