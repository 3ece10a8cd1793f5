"""Acquisition maximisers: exhaustive scoring of small spaces, multi-start local search."""

from bayestune.search.candidates import EnumeratedCandidates
from bayestune.search.local_search import AcquisitionSearchSettings, maximize

__all__ = ["EnumeratedCandidates", "AcquisitionSearchSettings", "maximize"]
