"""The refactor guard: configurations must agree exactly, values up to rounding."""

from __future__ import annotations

from benchmarks.trajectory_check import first_difference


def _trace(configs, values):
    return {"configs": configs, "values": values}


def test_values_that_differ_only_in_the_last_bits_are_the_same_trajectory():
    old = _trace([{"x": 1}, {"x": 2}], [0.1 + 0.2, None])
    assert first_difference(old, _trace([{"x": 1}, {"x": 2}], [0.3, None])) is None
    assert first_difference(_trace([{"x": 1}], [float("nan")]), _trace([{"x": 1}], [float("nan")])) is None


def test_a_different_configuration_value_or_length_is_reported_where_it_starts():
    old = _trace([{"x": 1}, {"x": 2}, {"x": 3}], [1.0, 2.0, 3.0])
    assert first_difference(old, _trace([{"x": 1}, {"x": 5}, {"x": 3}], [1.0, 2.0, 3.0])) == 1
    assert first_difference(old, _trace([{"x": 1}, {"x": 2}, {"x": 3}], [1.0, 2.0, 3.0 + 1e-9])) == 2
    assert first_difference(old, _trace([{"x": 1}, {"x": 2}], [1.0, 2.0])) == 2
