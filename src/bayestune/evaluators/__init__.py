"""Black-box evaluators: configuration in, :class:`~bayestune.trial.Result` out, failures recorded.

A scenario's ``blackbox`` section becomes one of these in :mod:`bayestune.measurement.build`
(``make_evaluator``, ``build_evaluator``), which stands above both this package and the
measurement wrappers, so that evaluators know nothing of scenarios.
"""

from __future__ import annotations

from bayestune.evaluators.base import Evaluator
from bayestune.evaluators.command import CommandEvaluator, OutputRule, parse_output
from bayestune.evaluators.external import ExternalEvaluator
from bayestune.evaluators.python_callable import CallableEvaluator, load_callable
from bayestune.evaluators.replay import ReplayEvaluator

__all__ = [
    "CallableEvaluator",
    "CommandEvaluator",
    "Evaluator",
    "OutputRule",
    "ExternalEvaluator",
    "ReplayEvaluator",
    "load_callable",
    "parse_output",
]
