"""Sizes beyond what a run can compute with are refused by name when the space is built (so
``validate`` says so), never a traceback or a hang in ``optimize``."""

from __future__ import annotations

import time

import pytest

from bayestune.exceptions import SpaceError
from bayestune.space import Integer, Permutation, Real


@pytest.mark.parametrize(
    "low, high, says",
    [
        (0, 10**20, r"\[-2\*\*63, 2\*\*63 - 1\]"),
        (-(2**63) - 1, 0, r"2\*\*63"),
        (0, 10**4000, "integer of 13288 bits"),
        (0, 99999999999999999999, "64-bit"),
        (0, 1.5, "integer bounds required"),
    ],
    ids=["1e20", "-2**63-1", "1e4000", "20 nines", "1.5"],
)
def test_integer_bounds_beyond_int64_are_refused(low, high, says):
    with pytest.raises(SpaceError, match=says):
        Integer("x", low, high)


def test_int64_bounds_are_kept():
    assert Integer("x", -(2**63), 2**63 - 1024).high == 2**63 - 1024


@pytest.mark.parametrize("low, high", [(0, 10**4000), (-1e308, 1e308)], ids=["1e4000", "1e308"])
def test_real_bounds_whose_span_overflows_are_refused(low, high):
    with pytest.raises(SpaceError, match="finite number"):
        Real("x", low, high)


@pytest.mark.parametrize(
    "n", [10**6, 10**12, 10**4000, 1001, float("inf")], ids=["1e6", "1e12", "1e4000", "1001", "inf"]
)
def test_huge_permutations_are_refused_at_once(n):
    start = time.monotonic()
    with pytest.raises(SpaceError, match="1 <= n <= 1,000"):
        Permutation("p", n)
    assert time.monotonic() - start < 1


def test_a_large_permutation_still_works():
    assert Permutation("p", 1000).cardinality == float("inf") and Permutation("p", 22).cardinality > 1e21
