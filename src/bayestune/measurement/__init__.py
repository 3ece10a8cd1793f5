"""Measurement you can trust: repeats and a statistic per configuration, re-measurement of the
best before a winner is declared, a correctness check, and where the time went.

Import the modules themselves (``bayestune.measurement.policy`` ...): the records these apply
live in :mod:`bayestune.measurement_spec`, and ``build`` assembles a scenario's evaluator, so
this ``__init__`` imports nothing and reading one record never loads the wrappers.
"""
