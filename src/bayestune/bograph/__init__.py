"""BoGraph: structured Bayesian optimisation over a DAG of logged system metrics.

Logs are summarised (:mod:`~bayestune.bograph.summarise`), a DAG from parameters through
metrics to the objective is learned and merged with expert knowledge
(:mod:`~bayestune.bograph.structure`, :mod:`~bayestune.bograph.dag`), every non-parameter node
gets a model on its parents (:mod:`~bayestune.bograph.node_models`), and candidates are scored
by Monte-Carlo expected improvement sampled through the DAG
(:mod:`~bayestune.bograph.acquisition`). The ``bograph`` strategy ties them together.
"""
