"""Search spaces: parameter types, priors, constraint expressions and the Chain-of-Trees."""

from bayestune.space.chain_of_trees import ChainOfTrees, ChainOfTreesWarning
from bayestune.space.constraints import Constraint, parse_constraints
from bayestune.space.parameters import (
    PARAMETER_TYPES,
    Categorical,
    Integer,
    Ordinal,
    Parameter,
    PerfectTile,
    Permutation,
    Real,
)
from bayestune.space.priors import BetaPrior, CategoricalPrior
from bayestune.space.space import Space

__all__ = [
    "PARAMETER_TYPES",
    "BetaPrior",
    "Categorical",
    "CategoricalPrior",
    "ChainOfTrees",
    "ChainOfTreesWarning",
    "Constraint",
    "Integer",
    "Ordinal",
    "Parameter",
    "PerfectTile",
    "Permutation",
    "Real",
    "Space",
    "parse_constraints",
]
