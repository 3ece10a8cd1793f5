"""Fixtures for the Kernel Tuner integration tests."""

from __future__ import annotations

import pytest
from kt_toy import write_cache


@pytest.fixture
def sim_cache(tmp_path):
    """A Kernel Tuner cache file (plain JSON) of the toy kernel."""
    return write_cache(tmp_path / "toy_cache.json")
