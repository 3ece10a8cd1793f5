"""The escape step: a proposer that leaves a confirmed local minimum (on with ``trust_region.fail_tolerance: coverage``).

Why: on needle-shaped spaces a run either finds the optimum or stops in one secondary minimum
that drains a large share of the space, several parameters away from the optimum (issue 39's
diagnosis). Once the trust region has covered the incumbent's one-parameter neighbourhood and
the incumbent still holds (the region grew past radius one around it), the incumbent is a
*confirmed* local minimum; more proposals next to it or next to the model's favourite are
wasted. The next :data:`PROPOSALS` model suggestions then each start with the minimum of a GP
posterior draw over unseen configurations that are more than :data:`BASIN` parameters away
from every confirmed minimum of the run: somewhere the model has not ruled out, outside the basins
already known. A run whose incumbent keeps improving never escapes.
"""

from __future__ import annotations

import numpy as np

from bayestune.bostep.proposers import Pick, ProposalSchedule, Turn
from bayestune.bostep.stall import posterior_minimum
from bayestune.search.trust_region import HammingTrustRegion, TrustRegionSettings, parameters_changed

#: Model suggestions that escape after each newly confirmed minimum.
PROPOSALS = 3
#: Escapes stay more than this many parameters away from every confirmed minimum: a secondary
#: basin's members are mostly one or two parameters from its minimum (issue 39's diagnosis).
BASIN = 2


class EscapeStep:
    """The proposer: see the module docstring. It reads the trust region whose coverage confirms
    a minimum, so it is only useful beside one."""

    def __init__(self, proposals: int, region: HammingTrustRegion | None) -> None:
        self.proposals = proposals
        self.region = region
        self.confirmed: list[np.ndarray] = []  # the confirmed local minima, in order
        self._keys: set[bytes] = set()
        self._left = 0
        #: escape proposals made (for tests and benchmarks)
        self.picks = 0

    def takes_turn(self, turn: Turn) -> bool:
        return self.region is not None and self.proposals > 0

    def pick(self, pick: Pick) -> np.ndarray | None:
        """A one-row matrix while escapes are due (None: the next proposer decides)."""
        assert self.region is not None  # takes_turn said so
        incumbent = pick.ranked()[0]
        key = pick.space.row_keys(incumbent.reshape(1, -1))[0]
        if self.region.confirms(float(np.min(pick.fit.y))) and key not in self._keys:  # covered, and it still holds
            self._keys.add(key)
            self.confirmed.append(incumbent)
            self._left = self.proposals
        if self._left <= 0:
            return None
        minima, space = np.array(self.confirmed), pick.space

        def outside_basins(X: np.ndarray) -> np.ndarray:
            away = np.ones(len(X), dtype=bool)
            for m in minima:
                away &= parameters_changed(space, X, m) > BASIN
            return away

        row = posterior_minimum(pick, outside_basins)
        self._left -= 1
        self.picks += row is not None
        return row


def add_escape(schedule: ProposalSchedule, settings: TrustRegionSettings) -> None:
    """Put an escape step first among ``schedule``'s turn takers (a confirmed minimum's escapes
    come before the trust region's turn) when the region grows by coverage."""
    if settings.covers:
        schedule.turn_takers.insert(0, EscapeStep(PROPOSALS, schedule.trust_region.region))
