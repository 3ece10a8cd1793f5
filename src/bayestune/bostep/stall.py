"""The stall step: a proposer that explores once in a while when a run's best stops moving
(experimental, ``experimental.stall``; measured against the default and lost).

Why: a GP with a smooth kernel follows the main effects of the parameters. On landscapes where
the optimum sits against them (a narrow basin whose flags are worse on average, e.g. GPU
convolution kernels whose best block size only works with one tiling), EI keeps refining the
basin it believes in and the best value stops moving for dozens of evaluations. A stalled run
then spends one suggestion in every ``after`` on exploration (the minimum of a GP posterior
draw over the unseen configurations, :mod:`bayestune.acquisition.thompson`) and goes back to
EI; a run that keeps improving never does. The rule reads only the history, so a resumed run
makes the same decisions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bayestune.acquisition.thompson import thompson_pick
from bayestune.bostep.proposers import Pick, Turn
from bayestune.history import draw_unseen
from bayestune.models.gp import GaussianProcess
from bayestune.settings import Rule, Settings

#: Feasible configurations drawn for a Thompson step when the space is too large to enumerate.
THOMPSON_SAMPLE = 2000


@dataclass(frozen=True)
class StallSettings(Settings):
    """The stall step (the ``experimental.stall`` option group)."""

    after: int = (
        0  # a run whose best has not improved for this many model suggestions explores once every this many; 0: off
    )

    def rules(self) -> list[Rule]:
        return [self.at_least("after", 0)]


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


class StallStep:
    """The proposer: see the module docstring."""

    def __init__(self, settings: StallSettings) -> None:
        self.settings = settings

    def takes_turn(self, turn: Turn) -> bool:
        """Whether this model suggestion is one of a stalled run's exploration steps. Only the
        model's own suggestions count as stalled (the initial design is meant to spread out,
        not to improve); a resumed run counts its model suggestions afresh."""
        since = evaluations_since_improvement(turn.targets, turn.feasible)
        stalled = None if since is None else min(since, turn.index - 1)
        return explore_now(stalled, self.settings.after, turn.n)

    def pick(self, pick: Pick) -> np.ndarray | None:
        """A one-row matrix (None: the next proposer decides): :func:`posterior_minimum`."""
        return posterior_minimum(pick)


def posterior_minimum(pick: Pick, keep: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray | None:
    """The minimum of a GP posterior draw over the unseen configurations (all of them in an
    enumerable space, else a feasible sample) that ``keep`` accepts (a boolean per row), as a
    one-row matrix, or a random such configuration when the model is no GP (None: none left)."""
    space, rng, fit = pick.space, pick.rng, pick.fit
    if not isinstance(fit.fitted, GaussianProcess) and keep is None:
        rows = draw_unseen(space, pick.history.with_seen(pick.seen), 1, rng)
        return rows[:1] if len(rows) else None
    pool = pick.unseen()
    if pool is None:
        pool = space.sample(THOMPSON_SAMPLE, rng)
        keys = space.row_keys(pool)
        pool = pool[np.array([k not in pick.seen for k in keys], dtype=bool)]
    if keep is not None and len(pool):
        pool = pool[keep(pool)]
    if not len(pool):
        return None
    if not isinstance(fit.fitted, GaussianProcess):
        return pool[int(rng.integers(len(pool)))].reshape(1, -1)
    F = pick.encoder.transform(pool)
    weights = None if pick.classifier is None else pick.classifier.predict_proba(F)
    i = thompson_pick(fit.fitted, F, rng, weights=weights)
    return None if i is None else pool[i].reshape(1, -1)
