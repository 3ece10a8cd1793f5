"""Who proposes each suggestion of a BO step: a list of proposers, each reading its own option
group, asked in order (SMAC3's ``random_design/`` is the shape).

* the ε-random step (``acquisition_search.epsilon``, HyperMapper's and BaCO's ε-greedy: peer
  behaviour their files set) replaces a whole suggestion by random configurations, before any
  model is fitted;
* turn takers may claim the first pick of a model suggestion: the experimental stall step
  (:mod:`bayestune.bostep.stall`), then the Hamming trust region every
  ``trust_region.every``-th model suggestion (:mod:`bayestune.search.trust_region`); the first
  that answers proposes;
* the global maximiser of the score (``acquisition_search``) makes every other pick.

Why a list: each proposer is a part with its own settings, so a new way of proposing is one
more member rather than one more branch inside the step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from bayestune.history import History
from bayestune.models.base import ModelFit
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.search.local_search import AcquisitionSearchSettings, Score, maximize
from bayestune.search.trust_region import TrustRegionSettings
from bayestune.space.space import Space


@dataclass(frozen=True)
class Turn:
    """One model suggestion, as a turn taker decides whether it is its turn."""

    targets: np.ndarray  # the history's targets (minimised)
    feasible: np.ndarray  # which rows of the history are feasible
    n_evaluated: int  # evaluations so far
    n: int  # configurations asked for
    index: int  # this model suggestion's number, counted from 1 (a resumed run counts afresh)


@dataclass
class Pick:
    """What a proposer sees when it picks: the fit, the score to climb and what is taken."""

    space: Space
    history: History
    fit: ModelFit
    encoder: FeatureEncoder
    classifier: FeasibilityClassifier | None
    score: Score
    seen: set[bytes]
    candidates: EnumeratedCandidates
    rng: np.random.Generator

    def unseen(self) -> np.ndarray | None:
        """Every unseen feasible row of a small space (None: too many to enumerate)."""
        return self.candidates.unseen(self.seen)

    def ranked(self) -> np.ndarray:
        """The fit's training rows, best target first."""
        return self.fit.X[np.argsort(self.fit.y)]


class TurnTaker(Protocol):
    """A proposer that may claim the first pick of a model suggestion."""

    def takes_turn(self, turn: Turn) -> bool: ...

    def pick(self, pick: Pick) -> np.ndarray | None: ...


class TrustRegionTurn:
    """The trust region's turns (the ``trust_region`` group) around the incumbent."""

    def __init__(self, settings: TrustRegionSettings) -> None:
        self.settings = settings
        self.region = settings.region()
        #: proposals made (for tests and benchmarks)
        self.picks = 0

    def takes_turn(self, turn: Turn) -> bool:
        return self.region is not None and self.settings.is_turn(turn.index)

    def pick(self, pick: Pick) -> np.ndarray | None:
        """The region's proposal as a one-row matrix (None: the next proposer decides)."""
        assert self.region is not None  # takes_turn said so
        order = np.argsort(pick.fit.y)
        incumbent, best = pick.fit.X[order[0]], float(pick.fit.y[order[0]])
        row = self.region.pick(
            pick.space, pick.score, incumbent, best, pick.rng, seen=pick.seen, candidates=pick.unseen()
        )
        self.picks += row is not None
        return row


class GlobalMaximiser:
    """The maximiser of the score over the whole space (the ``acquisition_search`` group)."""

    def __init__(self, settings: AcquisitionSearchSettings) -> None:
        self.settings = settings

    def pick(self, pick: Pick, n: int) -> np.ndarray:
        """Up to ``n`` rows, best first."""
        return maximize(
            pick.space,
            pick.score,
            pick.rng,
            seen=pick.seen,
            n=n,
            candidates=pick.unseen(),
            evaluated_best=pick.ranked(),
            settings=self.settings,
        )


class ProposalSchedule:
    """The proposers of one step, asked in order: see the module docstring."""

    def __init__(
        self,
        search: AcquisitionSearchSettings,
        trust_region: TrustRegionSettings,
        *turn_takers: TurnTaker,
    ) -> None:
        self.epsilon = search.epsilon
        self.trust_region = TrustRegionTurn(trust_region)
        #: asked in this order for the first pick of a model suggestion
        self.turn_takers: list[TurnTaker] = [*turn_takers, self.trust_region]
        self.maximiser = GlobalMaximiser(search)
        self.n_model_suggestions = 0

    @property
    def local_picks(self) -> int:
        """Trust-region proposals made (for tests and benchmarks)."""
        return self.trust_region.picks

    def random_step(self, rng: np.random.Generator) -> bool:
        """The ε-greedy step: random configurations instead of the model's picks."""
        return self.epsilon > 0 and rng.random() < self.epsilon

    def turns(self, targets: np.ndarray, feasible: np.ndarray, n_evaluated: int, n: int) -> list[TurnTaker]:
        """The turn takers whose turn this model suggestion is, in order; it is counted."""
        self.n_model_suggestions += 1
        turn = Turn(targets, feasible, n_evaluated, n, self.n_model_suggestions)
        return [p for p in self.turn_takers if p.takes_turn(turn)]

    def first_pick(self, pick: Pick, turns: list[TurnTaker]) -> np.ndarray | None:
        """The first answer of the turn takers ``turns`` (None: the maximiser picks)."""
        for proposer in turns:
            rows = proposer.pick(pick)
            if rows is not None:
                return rows
        return None
