"""The black-box interface: one configuration in, one :class:`~bayestune.trial.Result` out.

An evaluator never raises for a bad evaluation: a crash, a timeout, unreadable output or a
NaN becomes ``Result.failure(error_text, kind)``, which the optimizer records as a
hidden-constraint failure. Exceptions are reserved for mistakes in the setup (a missing
module, a template naming an unknown parameter), raised when the evaluator is built.
"""

from __future__ import annotations

import traceback
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from bayestune.exceptions import EvaluationError
from bayestune.trial import FailureKind, Result

#: Most characters of error text (stderr tails, tracebacks) kept in a failure's message.
MAX_ERROR_CHARS = 2000
#: Innermost traceback frames kept in the error text of a failed call.
TRACEBACK_FRAMES = 3


class Evaluator(ABC):
    """Evaluates configurations of one scenario; ``objectives`` are the names it must report.

    Usable as a context manager (``close()`` on exit) and as a plain callable, so it can be
    handed to :meth:`bayestune.optimizer.Optimizer.optimize` directly.
    """

    #: whether a configuration always gets the same answer (a replay of recorded measurements):
    #: a run's confirmation then skips re-measuring
    deterministic = False

    def __init__(self, objectives: Sequence[str]) -> None:
        if isinstance(objectives, str) or not objectives:
            raise EvaluationError(f"objectives must be a non-empty list of names, but got {objectives!r}")
        self.objectives = list(objectives)

    @abstractmethod
    def evaluate(self, config: Mapping[str, Any]) -> Result:
        """Run the black box on ``config``; every failure is returned as ``Result.failure``."""

    def close(self) -> None:  # noqa: B027 - an optional hook: evaluators without resources keep the no-op
        """Release resources (processes, connections). Idempotent; the default has none."""

    def __call__(self, config: Mapping[str, Any]) -> Result:
        return self.evaluate(config)

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


def tail(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """The end of ``text`` (where errors are), at most ``limit`` characters, marked when cut."""
    text = text.rstrip()
    if len(text) <= limit:
        return text
    return "..." + text[-(limit - 3) :]


def describe_exception(exc: BaseException) -> str:
    """``"Type: message"`` plus the innermost traceback frames (the black box's own code)."""
    head = f"{type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)[1:]  # drop our own calling frame
    if not frames:
        return head
    lines = traceback.format_list(frames[-TRACEBACK_FRAMES:])
    return tail(head + "\nTraceback (innermost last):\n" + "".join(lines))


class InterruptedWithResult(KeyboardInterrupt):
    """An interrupt (Ctrl-C, SIGTERM) while a configuration was being measured again: ``result``
    holds the runs it completed, which the evaluation loop journals before the run stops (every
    run a black box completes is kept); ``task`` is set by the backend that ran it."""

    def __init__(self, result: Result) -> None:
        super().__init__("interrupted; the completed runs travel with the interrupt")
        self.result = result
        self.task: Any = None


def evaluate_safely(evaluator: Evaluator, config: Mapping[str, Any]) -> Result:
    """``evaluator.evaluate(config)``, where whatever escapes a bad evaluator becomes a failure.

    The one failure-capture policy of every backend: an exception, or a black box calling
    ``sys.exit()``, is recorded with its traceback; ``KeyboardInterrupt`` still stops the run.
    """
    try:
        result = evaluator.evaluate(dict(config))
    except (Exception, SystemExit) as exc:
        return Result.failure(f"evaluator {evaluator!r} raised {describe_exception(exc)}", FailureKind.EXCEPTION)
    if not isinstance(result, Result):
        return Result.failure(f"evaluator {evaluator!r} returned {result!r} instead of a Result", FailureKind.EXCEPTION)
    return result
