"""HyperMapper 2.0's and BaCO's Python entry points, run by bayestune: a script written for either
peer runs with its import line changed.

=====================================  ==================================================
the peer's import                      bayestune's
=====================================  ==================================================
``from hypermapper import optimizer``  ``from bayestune.peers import hypermapper as optimizer``
``from baco import run``               ``from bayestune.peers import baco as run``
``from baco import optimizer``         ``from bayestune.peers import baco as optimizer``
=====================================  ==================================================

Each ``optimize(scenario_file, black_box_function)`` reads the file as that peer's, calls the
black box with that peer's conventions (:mod:`.hypermapper`, :mod:`.baco`), writes the peer's
sample CSV and honours ``resume_optimization`` exactly as ``bayestune serve`` does
(:class:`bayestune.peer_server.PeerSession`).
"""
