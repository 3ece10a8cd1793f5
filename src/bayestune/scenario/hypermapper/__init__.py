"""HyperMapper 2.0 / BaCO scenario files, read unchanged with the defaults of the peer each file
is written for: :mod:`.reader` puts a file together from its sections (:mod:`.inputs`,
:mod:`.outputs`, :mod:`.budget`, :mod:`.strategy`), :mod:`.keys` and :mod:`.schemas` know every
key, :mod:`.peers` whose file it is, :mod:`.table` writes ``docs/peers.md``."""

from bayestune.scenario.hypermapper.reader import HM_MARKERS, parse_hypermapper

__all__ = ["HM_MARKERS", "parse_hypermapper"]
