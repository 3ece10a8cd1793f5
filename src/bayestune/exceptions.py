"""Typed errors users can catch; every message names the rule and the offending value."""


class BayestuneError(Exception):
    """Base class of every error raised on purpose by bayestune."""


class SpaceError(BayestuneError, ValueError):
    """A parameter or search space definition breaks a rule."""


class ConstraintError(BayestuneError, ValueError):
    """A constraint expression is malformed, unsafe or refers to an unknown name."""


class InfeasibleSpaceError(BayestuneError):
    """The known constraints admit no configuration (or none could be found)."""


class ScenarioError(BayestuneError, ValueError):
    """A scenario file breaks the schema; the message names the file, JSON path, rule and value."""


class JournalError(BayestuneError):
    """The journal cannot be read, written or does not match the run."""


class EvaluationError(BayestuneError):
    """A black box's output cannot be turned into objective values."""
