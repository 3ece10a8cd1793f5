"""When a run has stalled: evaluations since the best value last improved, and whether this
suggestion is one of the periodic exploration steps a stalled run takes.

Why: a GP with a smooth kernel follows the main effects of the parameters. On landscapes where
the optimum sits against them (a narrow basin whose flags are worse on average, e.g. GPU
convolution kernels whose best block size only works with one tiling), EI keeps refining the
basin it believes in and the best value stops moving for dozens of evaluations. A stalled run
then spends one suggestion in every ``period`` on exploration (``bo``'s ``stall_action``) and
goes back to EI; a run that keeps improving never does. The rule reads only the history, so a
resumed run makes the same decisions.
"""

from __future__ import annotations

import numpy as np


def evaluations_since_improvement(targets: np.ndarray, feasible: np.ndarray) -> int | None:
    """Evaluations after the one that first reached today's best target (minimised), failures
    included; ``None`` before any feasible evaluation."""
    rows = np.flatnonzero(feasible)
    if not len(rows):
        return None
    values = targets[rows]
    first_best = int(rows[int(np.argmin(values))])  # argmin returns the first of ties
    return len(targets) - 1 - first_best


def explore_now(since: int | None, period: int, n: int = 1) -> bool:
    """True when one of the next ``n`` suggestions (made ``since``, ``since + 1``, ...
    evaluations after the last improvement) falls on a multiple of ``period`` (>= ``period``):
    at most one exploration step per ``period`` stalled evaluations."""
    if period <= 0 or since is None:
        return False
    return any(s >= period and s % period == 0 for s in range(since, since + n))
