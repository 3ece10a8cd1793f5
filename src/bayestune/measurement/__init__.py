"""Measurement you can trust: repeats and a statistic per configuration, re-measurement of the
best before a winner is declared, a correctness check, and where the time went.

Import the modules themselves (``bayestune.measurement.policy`` ...): this package is read by
the scenario layer (``settings``) and wraps evaluators (``policy``, ``correctness``), so its
``__init__`` imports nothing.
"""
