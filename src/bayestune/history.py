"""What a strategy sees of the past: evaluations as raw rows, and how to draw new ones.

Kept below the strategies so the initial design and the optimizer can use it without
importing any strategy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bayestune.objectives import Objective
from bayestune.space.space import Space
from bayestune.trial import Trial

#: Rounds of sampling before concluding that (almost) every configuration has been seen.
MAX_UNSEEN_ROUNDS = 50


@dataclass
class History:
    """Finished and in-flight evaluations as raw rows.

    ``Y[i, j]`` is objective ``j`` of row ``i`` in its own units (NaN where the evaluation
    failed); ``feasible[i]`` is False for failures and infeasible outputs. ``metrics[i]`` is
    everything row ``i`` reported (objectives and extra logged metrics), for strategies that
    model the system's logs; it is empty when the caller keeps no metrics. ``repeats[i]`` holds
    the repeated measurements behind row ``i``'s values (objective name -> repeats; empty when
    none were kept), so a model can read the measurement noise. ``censored[i]`` says row ``i``'s
    first objective is a bound (measuring stopped early: at least this bad), not a measurement.
    """

    space: Space
    objectives: Sequence[Objective]
    X: np.ndarray
    Y: np.ndarray
    feasible: np.ndarray
    pending: np.ndarray
    seen: set[bytes] = field(default_factory=set)
    metrics: Sequence[Mapping[str, float]] = field(default_factory=list)
    repeats: Sequence[Mapping[str, tuple[float, ...]]] = field(default_factory=list)
    censored: np.ndarray | None = None  # None: no row is censored

    @property
    def censored_rows(self) -> np.ndarray:
        """Row ``i`` holds a bound of its first objective (see the class docstring)."""
        if self.censored is None or len(self.censored) != self.n:
            return np.zeros(self.n, dtype=bool)
        return np.asarray(self.censored, dtype=bool)

    @classmethod
    def empty(cls, space: Space, objectives: Sequence[Objective]) -> History:
        return cls(
            space,
            list(objectives),
            np.empty((0, space.width)),
            np.empty((0, len(objectives))),
            np.empty(0, dtype=bool),
            np.empty((0, space.width)),
        )

    @property
    def n(self) -> int:
        return len(self.X)

    @property
    def n_feasible(self) -> int:
        return int(self.feasible.sum())

    def with_seen(self, seen: set[bytes]) -> History:
        """The same evaluations with another set of keys to avoid (e.g. plus this batch's picks)."""
        return replace(self, seen=seen)

    def signed_Y(self) -> np.ndarray:
        """Objective values turned into quantities to minimise (maximised ones negated)."""
        signs = np.array([1.0 if o.minimize else -1.0 for o in self.objectives])
        return self.Y * signs


class RunMemory:
    """The optimizer's view of its journal as rows: finished trials and in-flight configurations.

    Filled only with what the journal returned (finished trials) or was told (started ones), so
    it never holds anything the journal does not. Rows are kept beside the trials so an ``ask``
    does not re-encode the run, in-flight configurations included.
    """

    def __init__(self, space: Space, objectives: Sequence[Objective]) -> None:
        self.space = space
        self.objectives = list(objectives)
        self.trials: list[Trial] = []
        self.seen: set[bytes] = set()
        self._rows: list[np.ndarray] = []
        self._values: list[np.ndarray] = []
        self._feasible: list[bool] = []
        self._pending: dict[bytes, tuple[int, np.ndarray]] = {}  # key -> (trial id, row)

    @property
    def n_pending(self) -> int:
        return len(self._pending)

    @property
    def n_feasible(self) -> int:
        return sum(self._feasible)

    def add_finished(self, trial: Trial, x: np.ndarray, key: bytes) -> None:
        """A finished trial (canonical config) with its row ``x`` and key."""
        self.trials.append(trial)
        self._rows.append(x)
        self._feasible.append(trial.feasible)
        self._values.append(
            np.array([trial.values.get(o.name, np.nan) if trial.feasible else np.nan for o in self.objectives])
        )
        self.seen.add(key)

    def add_pending(self, key: bytes, trial_id: int, x: np.ndarray) -> None:
        """A configuration the journal started as trial ``trial_id``."""
        self._pending[key] = (trial_id, x)
        self.seen.add(key)

    def take_pending(self, key: bytes) -> int | None:
        """The journal's id of the in-flight configuration with this key (no longer in flight), or None."""
        pending = self._pending.pop(key, None)
        return None if pending is None else pending[0]

    def history(self) -> History:
        """What a strategy sees: a fresh :class:`History` (the caller may extend its ``seen`` and ``pending``)."""
        width = self.space.width
        return History(
            self.space,
            self.objectives,
            np.array(self._rows).reshape(-1, width),
            np.array(self._values).reshape(-1, len(self.objectives)),
            np.array(self._feasible, dtype=bool),
            np.array([x for _, x in self._pending.values()]).reshape(-1, width),
            set(self.seen),
            metrics=[t.values for t in self.trials],
            repeats=[t.repeats for t in self.trials],
            censored=np.array([t.censored and t.feasible for t in self.trials], dtype=bool),
        )


def draw_unseen(
    space: Space, history: History, n: int, rng: np.random.Generator, *, method: str = "cot", use_prior: bool = False
) -> np.ndarray:
    """``n`` feasible, distinct rows never evaluated nor pending.

    Small spaces are enumerated so the last unseen configurations are still found; large
    ones are sampled in growing batches.
    """
    seen = history.seen
    count = space.count_feasible()
    if count is not None and count <= 200_000:
        if len(seen) >= count:
            return np.empty((0, space.width))
        if (count <= 4 * (len(seen) + n) or count <= 20_000) and (all_rows := space.enumerate(limit=count)) is not None:
            keys = space.row_keys(all_rows)
            unseen = np.array([k not in seen for k in keys])
            rows = all_rows[unseen]
            if use_prior and space.has_prior and len(rows) > n:
                w = space.prior_weight(rows)
                idx = rng.choice(len(rows), size=n, replace=False, p=w / w.sum())
            else:
                idx = rng.permutation(len(rows))[:n]
            return rows[idx]
    out: list[np.ndarray] = []
    taken: set[bytes] = set()
    batch = max(16, 2 * n)
    for _ in range(MAX_UNSEEN_ROUNDS):
        X = space.sample(batch, rng, method=method, use_prior=use_prior)
        for row, key in zip(X, space.row_keys(X)):
            if key not in seen and key not in taken:
                taken.add(key)
                out.append(row)
                if len(out) == n:
                    return np.array(out)
        batch = min(batch * 2, 1 << 16)
    return np.array(out).reshape(-1, space.width)


def top_up(
    space: Space,
    history: History,
    chosen: Sequence[np.ndarray] | np.ndarray,
    seen: set[bytes],
    n: int,
    rng: np.random.Generator,
    **draw_options: Any,
) -> np.ndarray:
    """``chosen`` rows, completed to ``n`` with random feasible rows outside ``seen``.

    Every strategy ends a batch this way when its own proposals run short (a small or
    exhausted neighbourhood), so a batch is short only when the space is.
    """
    rows = [np.asarray(r) for r in chosen]
    if len(rows) < n:
        rows.extend(draw_unseen(space, history.with_seen(seen), n - len(rows), rng, **draw_options))
    return np.array(rows).reshape(-1, space.width)
