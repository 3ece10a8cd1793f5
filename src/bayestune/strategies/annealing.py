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
from typing import Any

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.space.space import Space
from bayestune.history import History, draw_unseen
from bayestune.strategies.base import Strategy, register


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


@register
class SimulatedAnnealing(Strategy):
    """Metropolis chain over one-parameter moves with a spread-scaled geometric cooling."""

    name = "annealing"
    OPTIONS = {"initial_temperature": 1.0, "cooling": 0.95, "max_free_steps": 200}

    def __init__(self, space: Space, objectives, rng: np.random.Generator, **options: Any) -> None:
        super().__init__(space, objectives, rng)
        unknown = sorted(set(options) - set(self.OPTIONS))
        if unknown:
            raise BayestuneError(f"unknown option(s) {unknown} for strategy 'annealing'; allowed: {sorted(self.OPTIONS)}")
        settings = {**self.OPTIONS, **options}
        self.initial_temperature = float(settings["initial_temperature"])
        self.cooling = float(settings["cooling"])
        self.max_free_steps = int(settings["max_free_steps"])
        if self.initial_temperature <= 0 or not 0 < self.cooling <= 1:
            raise BayestuneError("strategy 'annealing': initial_temperature must be > 0 and cooling in (0, 1], "
                                 f"but got {self.initial_temperature} and {self.cooling}")
        self._current: np.ndarray | None = None
        self._current_y = math.inf
        self._proposed: list[tuple[bytes, np.ndarray, bool]] = []  # key, row, is_restart
        self.steps = 0  # evaluated proposals (drives the cooling)

    def temperature(self, spread: float) -> float:
        return self.initial_temperature * spread * self.cooling ** self.steps

    def _accept(self, y_new: float, T: float) -> bool:
        if y_new <= self._current_y:
            return True
        if T <= 0:
            return False
        return bool(self.rng.random() < math.exp(-(y_new - self._current_y) / T))

    def _absorb(self, outcomes: dict[bytes, float | None], spread: float) -> None:
        still_pending = []
        for key, row, restart in self._proposed:
            if key not in outcomes:
                still_pending.append((key, row, restart))
                continue
            y_new = outcomes[key]
            self.steps += 1
            if y_new is None:
                continue
            if restart or self._current is None or self._accept(y_new, self.temperature(spread)):
                self._current, self._current_y = row, y_new
        self._proposed = still_pending

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
        while len(out) < n and free_steps <= self.max_free_steps:
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
            if self._accept(outcomes[keys[i]], self.temperature(spread)):  # type: ignore[arg-type]
                self._current, self._current_y = neighbours[i].copy(), outcomes[keys[i]]  # type: ignore[assignment]
        if len(out) < n:  # stuck: restart from random unseen configurations
            rest = History(history.space, history.objectives, history.X, history.Y, history.feasible,
                           history.pending, seen)
            extra = draw_unseen(self.space, rest, n - len(out), self.rng)
            for row, key in zip(extra, self.space.row_keys(extra) if len(extra) else []):
                out.append(row)
                self._proposed.append((key, row.copy(), True))
        return np.array(out).reshape(-1, self.space.width)
