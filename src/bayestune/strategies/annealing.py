"""Simulated-annealing baseline over the space's one-parameter neighbourhoods.

The chain sits at a *current* configuration and proposes a random unseen feasible neighbour
(``space.neighbours``). Once the proposal has been evaluated it is accepted by the Metropolis
rule: always when better, else with probability ``exp(-(y_new - y_cur) / T)``; a failed
evaluation is rejected. Neighbours that were already evaluated cost nothing: the chain moves
over them with the same rule using their recorded values (a free step), so it can walk out
of a region whose neighbours are all known. When no unseen neighbour is reachable after
``max_free_steps`` free steps, the chain restarts at a random unseen configuration.

Temperature: ``T = initial_temperature * spread * cooling ** k`` after ``k`` evaluated
proposals, where ``spread`` is the interquartile range of the feasible values observed so far
(the standard deviation if the IQR is 0), so the schedule is independent of the objective's
units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayestune.history import History, draw_unseen
from bayestune.space.space import Space
from bayestune.strategies.base import Rule, Settings, Strategy, register


def value_spread(y: np.ndarray) -> float:
    """A robust scale of observed values: IQR, else standard deviation, else |median|/10, else 1."""
    y = np.asarray(y, dtype=float)
    y = y[np.isfinite(y)]
    if len(y) >= 2:
        q75, q25 = np.percentile(y, [75, 25])
        if q75 > q25:
            return float(q75 - q25)
        if np.std(y) > 0:
            return float(np.std(y))
    if len(y) and np.median(y) != 0:
        return float(abs(np.median(y)) / 10)
    return 1.0


def outcome_table(space: Space, history: History) -> dict[bytes, float | None]:
    """Key -> signed first objective of every finished evaluation (None for a failure)."""
    if not history.n:
        return {}
    y = history.signed_Y()[:, 0]
    keys = space.row_keys(history.X)
    return {k: (float(v) if ok else None) for k, v, ok in zip(keys, y, history.feasible)}


#: A row handed out and not yet seen evaluated: its key, the row, and whether it was a restart.
Proposal = tuple[bytes, np.ndarray, bool]


def settle(
    proposed: list[Proposal], outcomes: dict[bytes, float | None]
) -> tuple[list[tuple[np.ndarray, bool, float | None]], list[Proposal]]:
    """Split ``proposed`` into the finished ones, in order, as ``(row, is_restart, value)``
    (``None`` for a failure), and those still pending."""
    finished, pending = [], []
    for key, row, restart in proposed:
        if key in outcomes:
            finished.append((row, restart, outcomes[key]))
        else:
            pending.append((key, row, restart))
    return finished, pending


@dataclass(frozen=True)
class AnnealingSettings(Settings):
    """Options of the ``annealing`` strategy."""

    initial_temperature: float = 1.0  # in units of the observed values' spread
    cooling: float = 0.95  # temperature factor per evaluated proposal
    max_free_steps: int = 200  # moves over known neighbours before a restart

    def rules(self) -> list[Rule]:
        return [
            ("initial_temperature", self.initial_temperature > 0, "`initial_temperature > 0`"),
            ("cooling", 0 < self.cooling <= 1, "`0 < cooling <= 1`"),
            (
                "max_free_steps",
                isinstance(self.max_free_steps, int) and self.max_free_steps >= 0,
                "`max_free_steps >= 0` (an integer)",
            ),
        ]


@register
class SimulatedAnnealing(Strategy):
    """Metropolis chain over one-parameter moves with a spread-scaled geometric cooling."""

    name = "annealing"
    settings_class = AnnealingSettings
    settings: AnnealingSettings

    def __init__(self, space: Space, objectives, rng: np.random.Generator, **options: Any) -> None:
        super().__init__(space, objectives, rng, **options)
        self._current: np.ndarray | None = None
        self._current_y = math.inf
        self._proposed: list[Proposal] = []
        self.steps = 0  # evaluated proposals (drives the cooling)

    def temperature(self, spread: float) -> float:
        return self.settings.initial_temperature * spread * self.settings.cooling**self.steps

    def _accept(self, y_new: float, T: float) -> bool:
        if y_new <= self._current_y:
            return True
        if T <= 0:
            return False
        return bool(self.rng.random() < math.exp(-(y_new - self._current_y) / T))

    def _absorb(self, outcomes: dict[bytes, float | None], spread: float) -> None:
        finished, self._proposed = settle(self._proposed, outcomes)
        for row, restart, y_new in finished:
            self.steps += 1
            if y_new is None:
                continue
            if restart or self._current is None or self._accept(y_new, self.temperature(spread)):
                self._current, self._current_y = row, y_new

    def suggest(self, history: History, n: int) -> np.ndarray:
        outcomes = outcome_table(self.space, history)
        feasible_y = [v for v in outcomes.values() if v is not None]
        spread = value_spread(np.array(feasible_y))
        self._absorb(outcomes, spread)
        if self._current is None:
            if not feasible_y:
                return draw_unseen(self.space, history, n, self.rng)
            ok = np.flatnonzero(history.feasible)
            best = ok[np.argmin(history.signed_Y()[ok, 0])]
            self._current, self._current_y = history.X[best].copy(), float(history.signed_Y()[best, 0])
        seen = set(history.seen)
        out: list[np.ndarray] = []
        free_steps = 0
        while len(out) < n and free_steps <= self.settings.max_free_steps:
            neighbours = self.space.neighbours(self._current.reshape(1, -1), self.rng)
            if not len(neighbours):
                break
            keys = self.space.row_keys(neighbours)
            unseen = [i for i, k in enumerate(keys) if k not in seen]
            if unseen:
                i = unseen[int(self.rng.integers(len(unseen)))]
                seen.add(keys[i])
                out.append(neighbours[i])
                self._proposed.append((keys[i], neighbours[i].copy(), False))
                continue
            # every neighbour is known: take a free Metropolis step over the recorded values
            free_steps += 1
            known = [i for i, k in enumerate(keys) if outcomes.get(k) is not None]
            if not known:
                break
            i = known[int(self.rng.integers(len(known)))]
            value = outcomes[keys[i]]
            if value is not None and self._accept(value, self.temperature(spread)):  # not None: it is known
                self._current, self._current_y = neighbours[i].copy(), value
        if len(out) < n:  # stuck: restart from random unseen configurations
            extra = draw_unseen(self.space, history.with_seen(seen), n - len(out), self.rng)
            for row, key in zip(extra, self.space.row_keys(extra) if len(extra) else []):
                out.append(row)
                self._proposed.append((key, row.copy(), True))
        return np.array(out).reshape(-1, self.space.width)
