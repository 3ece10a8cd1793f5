"""The ``local`` baseline strategy: multi-start first-improvement local search over the
evaluations themselves (Kernel Tuner's "MLS"-style baseline; not to be confused with
:mod:`bayestune.search.local_search`, which climbs an acquisition function).

The search keeps a *centre*, initially the best feasible configuration of the history (the
initial design), and proposes its one-parameter neighbours (``space.neighbours``) in random
order, one evaluation at a time. The first neighbour that turns out better becomes the new
centre (first improvement) and the scan restarts around it; an already evaluated neighbour
that is better is moved to at no cost. When every neighbour of the centre is known and none
is better, the centre is a local optimum: the search restarts from a random unseen
configuration, which becomes the next centre once evaluated (a failed restart point is
followed by another one).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayestune.history import History, draw_unseen
from bayestune.space.space import Space
from bayestune.strategies.annealing import Proposal, outcome_table, settle
from bayestune.strategies.base import Strategy, register


@register
class MultiStartLocalSearch(Strategy):
    """First-improvement hill climbing over one-parameter moves, with random restarts."""

    name = "local"

    def __init__(self, space: Space, objectives, rng: np.random.Generator, **options: Any) -> None:
        super().__init__(space, objectives, rng, **options)
        self._centre: np.ndarray | None = None
        self._centre_y = np.inf
        self._queue: list[tuple[bytes, np.ndarray]] = []
        self._proposed: list[Proposal] = []
        self.restarts = 0

    def _move_to(self, row: np.ndarray, y: float) -> None:
        self._centre, self._centre_y = row.copy(), float(y)
        neighbours = self.space.neighbours(row.reshape(1, -1), self.rng)
        order = self.rng.permutation(len(neighbours))
        keys = self.space.row_keys(neighbours) if len(neighbours) else []
        self._queue = [(keys[i], neighbours[i]) for i in order]

    def _absorb(self, outcomes: dict[bytes, float | None]) -> None:
        finished, self._proposed = settle(self._proposed, outcomes)
        for row, restart, y in finished:
            if y is None:
                continue
            if (restart and self._waiting_for_restart) or self._centre is None or y < self._centre_y:
                self._waiting_for_restart = False
                self._move_to(row, y)

    _waiting_for_restart = False

    def suggest(self, history: History, n: int) -> np.ndarray:
        outcomes = outcome_table(self.space, history)
        self._absorb(outcomes)
        if self._centre is None and not self._waiting_for_restart:
            ok = np.flatnonzero(history.feasible)
            if not len(ok):
                return draw_unseen(self.space, history, n, self.rng)
            best = ok[np.argmin(history.signed_Y()[ok, 0])]
            self._move_to(history.X[best], float(history.signed_Y()[best, 0]))
        seen = set(history.seen)
        out: list[np.ndarray] = []
        while len(out) < n and self._queue:
            key, row = self._queue.pop(0)
            known = outcomes.get(key)
            if key in outcomes:
                if known is not None and known < self._centre_y:  # a free improvement
                    self._move_to(row, known)
                continue
            if key in seen:  # pending elsewhere in this batch
                continue
            seen.add(key)
            out.append(row)
            self._proposed.append((key, row.copy(), False))
        if len(out) < n and not self._queue:
            in_flight = any(not restart for _, _, restart in self._proposed)
            if not in_flight:  # local optimum reached (or nothing left around it): restart
                self._waiting_for_restart = True
                self.restarts += 1
            extra = draw_unseen(self.space, history.with_seen(seen), n - len(out), self.rng)
            for row, key in zip(extra, self.space.row_keys(extra) if len(extra) else []):
                out.append(row)
                self._proposed.append((key, row.copy(), not in_flight))
        return np.array(out).reshape(-1, self.space.width)
