"""PostgreSQL under pgbench as the black box of ``scenario.json``: ``"blackbox": {"python": "blackbox.py:evaluate"}``.

The scenario's parameters say which knobs to search and over which ranges; their names are
PostgreSQL settings, and the unit each is written in comes from bayestune's knob list. The
tuner (and its template cluster) is made on the first evaluation and removed when the
process exits.
"""

from __future__ import annotations

import atexit
from collections.abc import Mapping
from typing import Any

from bayestune.integrations.postgres import DEFAULT_KNOBS, DURABILITY_KNOBS, Pgbench, PostgresTuner
from bayestune.trial import Result

#: Every knob bayestune knows, by setting name: the unit each value is written in.
KNOWN = {k.name: k for k in DEFAULT_KNOBS + DURABILITY_KNOBS}
#: About 5 s of TPC-B-like load on a database of 10 x 100,000 accounts.
WORKLOAD = Pgbench(scale=10, clients=4, threads=2, duration=5)

_tuners: dict[tuple[str, ...], PostgresTuner] = {}


def _tuner(names: tuple[str, ...]) -> PostgresTuner:
    if names not in _tuners:
        unknown = sorted(set(names) - set(KNOWN))
        if unknown:
            raise KeyError(f"parameters {unknown} are not knobs bayestune knows; known: {sorted(KNOWN)}")
        tuner = PostgresTuner([KNOWN[n] for n in names], WORKLOAD)
        atexit.register(tuner.close)
        _tuners[names] = tuner
    return _tuners[names]


def evaluate(config: Mapping[str, Any]) -> Result:
    """TPS (and latency_ms, and the statistics views) of the server configured with ``config``."""
    return _tuner(tuple(sorted(config)))(config)
