"""bayestune: Bayesian optimization for autotuning compilers and computer systems."""

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
    "BayestuneError", "Categorical", "ConstraintError", "EvaluationError", "InfeasibleSpaceError",
    "Integer", "JournalError", "Ordinal", "PerfectTile", "Permutation", "Real", "Result", "ScenarioError", "Space",
    "SpaceError", "Trial", "TrialStatus", "__version__",
]
