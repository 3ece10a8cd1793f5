"""bayestune: Bayesian optimization for autotuning compilers and computer systems.

``tune`` (run a scenario as ``bayestune optimize`` does) is loaded on first use, so that
``import bayestune`` stays light.
"""

from typing import Any

from bayestune._version import __version__
from bayestune.exceptions import (
    BayestuneError,
    ConstraintError,
    EvaluationError,
    InfeasibleSpaceError,
    JournalError,
    ScenarioError,
    SpaceError,
)
from bayestune.space import (
    Categorical,
    Integer,
    Ordinal,
    PerfectTile,
    Permutation,
    Real,
    Space,
)
from bayestune.trial import Result, Trial, TrialStatus

__all__ = [
    "BayestuneError",
    "Categorical",
    "ConstraintError",
    "EvaluationError",
    "InfeasibleSpaceError",
    "Integer",
    "JournalError",
    "Ordinal",
    "PerfectTile",
    "Permutation",
    "Real",
    "Result",
    "ScenarioError",
    "Space",
    "SpaceError",
    "Trial",
    "TrialStatus",
    "__version__",
    "tune",
]


def __getattr__(name: str) -> Any:
    """``bayestune.tune``, imported on first use (PEP 562): it loads the optimizer and the strategies."""
    if name == "tune":
        from bayestune.tuning import tune

        return tune
    raise AttributeError(f"module 'bayestune' has no attribute {name!r}")
