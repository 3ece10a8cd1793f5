"""The evidence-driven transfer (mode ``auto``): the sources' best configurations open the
design only while this run's own measurements say they are better than its other points.

A warm-start design pays from the first evaluation when the source is a sibling (its best
configurations are near the optimum here too) and costs evaluations when it is not, and nothing
tells the two apart before something is measured. So the design alternates: the default
configuration, then a source pick and a cold design point in turn, and after every measurement
the gate compares the source picks measured so far with the design's other measurements: its
statistic is the share of (source pick, other point) pairs the pick wins (the Mann-Whitney
AUC; a failure loses to everything, ties count half). While it is at least :data:`TRUST_AUC`
the gate stays open; the first time it falls below, it closes for good and the rest of the
design is the cold one. With several sources (a folder of caches from other devices) each has
its own gate over its own picks, and the source turns go to the trusted ones. One load spike
must not drop a good source: a pick measured :data:`SPIKE_FACTOR` times worse than every other
design point is set aside once per source (:func:`is_spike`), and the run's note says so.

Why this rule: from an unrelated source the picks are random points, so each pick wins about
half its comparisons and the gate closes after one or two of them (an open gate after ``k``
picks has roughly ``2^-k`` chance); a sibling's picks beat random points nearly always and keep
it open for the whole design. The picks replace cold design points rather than add to them, so
a closed gate costs the few evaluations its picks took: measured on shuffled sources
(``benchmarks/results/transfer/transfer_auto.md``), a median of 1–2.5 picks, which at 10 evaluations
leaves the run a pick or two behind the cold start and at 40 within 1–2 % of it (paired).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bayestune.history import History
from bayestune.space.space import Space
from bayestune.transfer.design import warm_start_rows
from bayestune.transfer.runs import PriorRun

logger = logging.getLogger(__name__)

#: Share of pairwise comparisons the source picks must win against the design's other points
#: to keep the gate open: 1/2 is what random picks win on average.
TRUST_AUC = 0.75
#: A pick measured this many times worse than every other design measurement so far is a
#: spike (a load burst during its run), not evidence: the first one of a source is set aside, a
#: second counts. 3x let an unrelated source's worst picks through on the GPU spaces, whose slow
#: configurations are 10-50x the fast ones (paired runs: issue 42's README note); at 10x a random
#: pick is almost never past every other point.
SPIKE_FACTOR = 10.0


def is_spike(value: float, others: Sequence[float], minimize: bool) -> bool:
    """Whether ``value`` (a raw objective value) is :data:`SPIKE_FACTOR` times worse than every
    finite one of ``others`` (positive values only: a ratio needs them)."""
    finite = [x for x in others if np.isfinite(x)]
    if not finite or not np.isfinite(value) or value <= 0 or min(finite) <= 0:
        return False
    return value > SPIKE_FACTOR * max(finite) if minimize else value * SPIKE_FACTOR < min(finite)


def pairwise_auc(picks: Sequence[float], others: Sequence[float]) -> float:
    """Share of (pick, other) pairs where the pick is lower (better); ties count half, and a
    non-finite value (a failure) is worse than any finite one. NaN when either side is empty."""
    a = np.where(np.isfinite(picks), picks, np.inf)[:, None] if len(picks) else np.empty((0, 1))
    b = np.where(np.isfinite(others), others, np.inf)[None, :] if len(others) else np.empty((1, 0))
    if a.size == 0 or b.size == 0:
        return float("nan")
    wins = (a < b).sum() + 0.5 * (a == b).sum()
    return float(wins / (a.shape[0] * b.shape[1]))


@dataclass(frozen=True)
class SourceGate:
    """One source's gate: open or closed, after how many of its picks, and why."""

    name: str
    open: bool
    n_picks: int
    auc: float
    closed_at: int | None = None  # the evaluation (1-based) after which it closed
    spike_at: int | None = None  # the evaluation of a pick set aside as a spike (not counted)

    def describe(self, n_others: int) -> str:
        won = (
            ""
            if np.isnan(self.auc)
            else (
                f"its picks won {100 * self.auc:.0f}% of the comparisons with the "
                f"{n_others} other design measurement(s)"
            )
        )
        spike = (
            ""
            if self.spike_at is None
            else f"; the pick of evaluation {self.spike_at} was set aside, measured over "
            f"{SPIKE_FACTOR:g}x worse than every other design point (a spike, not evidence)"
        )
        if self.open:
            return (
                f"{self.name}: trusted after {self.n_picks} measured pick(s)"
                + (f" ({won}, at least the {100 * TRUST_AUC:.0f}% needed)" if won else "")
                + spike
            )
        return (
            f"{self.name}: dropped after evaluation {self.closed_at} ({self.n_picks} pick(s) measured; "
            f"{won}, below the {100 * TRUST_AUC:.0f}% needed){spike}"
        )


@dataclass(frozen=True)
class GateState:
    """What the evidence says so far, source by source; ``n_others``: the design's measurements
    that are no source's pick (the default, the cold design's points)."""

    sources: tuple[SourceGate, ...]
    n_others: int

    @property
    def open(self) -> bool:
        """Some source is still trusted."""
        return any(s.open for s in self.sources)

    @property
    def n_picks(self) -> int:
        return sum(s.n_picks for s in self.sources)

    @property
    def closed_at(self) -> int | None:
        """The evaluation after which the last source was dropped (None while one is open)."""
        return None if self.open else max((s.closed_at or 0) for s in self.sources)

    def describe(self) -> str:
        if self.n_picks == 0:
            return "auto transfer: no source pick measured yet"
        text = "auto transfer: " + "; ".join(s.describe(self.n_others) for s in self.sources if s.n_picks)
        return text + ("" if self.open else "; the rest of the design is the cold one")


class DesignGate:
    """Decides, design point by design point, whether the next one is a source pick (see the
    module docstring), each source gated on its own picks so that an unrelated cache in a folder
    of siblings does not shut out the others: at most ``top`` picks in all, within the first
    ``horizon`` evaluations. Stateless between calls: it reads everything from the history, so a
    resumed run reaches the same decision."""

    def __init__(self, space: Space, runs: Sequence[PriorRun], top: int, horizon: int) -> None:
        self.space = space
        self.top = top
        self.horizon = horizon  # the design's length: later (model-chosen) points are no evidence
        self.names = [r.name for r in runs]
        self.rows = [warm_start_rows(space, [r], top, History.empty(space, [])) for r in runs]
        self.keys = [space.row_keys(rows) if len(rows) else [] for rows in self.rows]
        self._key_sets = [set(k) for k in self.keys]
        self._all = set().union(*self._key_sets)
        default = space.to_matrix([space.default_config()])
        self._default = space.row_keys(default)[0]
        self._told: tuple | None = None

    def state(self, history: History) -> GateState:
        """The gate after the history's finished evaluations, replayed in order."""
        minimize = not history.objectives or history.objectives[0].minimize
        sign = 1.0 if minimize else -1.0
        z = np.where(history.feasible, sign * history.Y[:, 0], np.inf) if history.n else np.empty(0)
        raw = np.where(history.feasible, history.Y[:, 0], np.nan) if history.n else np.empty(0)
        n = len(self.names)
        picks: list[list[float]] = [[] for _ in range(n)]
        aucs = [float("nan")] * n
        closed: list[int | None] = [None] * n  # the evaluation that closed each source
        spikes: list[int | None] = [None] * n  # the evaluation of each source's pick set aside
        pick_rows: list[list[int]] = [[] for _ in range(n)]  # the history rows of each source's picks
        others: list[float] = []
        other_raw: list[float] = []
        for i, key in enumerate(self.space.row_keys(history.X[: self.horizon]) if history.n else []):
            if key not in self._all:
                others.append(z[i])
                other_raw.append(raw[i])
            for j in range(n):
                if closed[j] is None and key in self._key_sets[j]:
                    picks[j].append(z[i])
                    pick_rows[j].append(i)
            for j in range(n):
                if closed[j] is None and spikes[j] is None:  # judged as soon as others are measured
                    spiked = [k for k, r in enumerate(pick_rows[j]) if is_spike(raw[r], other_raw, minimize)]
                    if spiked:  # the first spike of a source is no evidence against it
                        spikes[j] = pick_rows[j].pop(spiked[0]) + 1
                        picks[j].pop(spiked[0])
            for j in range(n):
                if closed[j] is None and picks[j] and others:
                    aucs[j] = pairwise_auc(picks[j], others)
                    if aucs[j] < TRUST_AUC:
                        closed[j] = i + 1
        sources = tuple(
            SourceGate(self.names[j], closed[j] is None, len(picks[j]), aucs[j], closed[j], spikes[j]) for j in range(n)
        )
        return GateState(sources, len(others))

    def next_row(self, history: History) -> np.ndarray | None:
        """The next pick of a trusted source (the one with the fewest picks so far) when it is
        the sources' turn, else None (the caller takes a cold design point). ``history.seen``
        includes what is in flight."""
        state = self.state(history)
        self._tell(state)
        n_picks = sum(k in history.seen for k in self._all)
        n_others = len(history.seen) - n_picks - (self._default in history.seen and self._default not in self._all)
        if n_picks > n_others or n_picks >= self.top:  # alternate: a pick, then a cold point
            return None
        trusted = [j for j, s in enumerate(state.sources) if s.open]
        for j in sorted(trusted, key=lambda j: sum(k in history.seen for k in self.keys[j])):
            for row, key in zip(self.rows[j], self.keys[j]):
                if key not in history.seen:
                    return row
        return None

    def _tell(self, state: GateState) -> None:
        """Log each new decision once (it is also in the optimizer's transfer note)."""
        told = tuple((s.open, s.n_picks) for s in state.sources)
        if told != self._told and state.n_picks:
            self._told = told
            logger.info("%s", state.describe())
