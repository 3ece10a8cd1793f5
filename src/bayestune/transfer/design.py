"""The warm-start design: the sources' best configurations first.

The configurations a source found fastest are the cheapest guess for a related device; they are
taken in rank order, alternating between sources so that one large source cannot crowd out
another, and skipping any already evaluated or outside the space.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bayestune.history import History
from bayestune.space.space import Space
from bayestune.transfer.runs import PriorRun


def warm_start_rows(space: Space, runs: Sequence[PriorRun], n: int, history: History) -> np.ndarray:
    """Up to ``n`` distinct unseen feasible rows: the sources' best, interleaved by rank."""
    ranked = []
    for run in runs:
        order = np.argsort(np.where(run.feasible, run.y, np.inf), kind="stable")
        ranked.append(run.X[order[: run.n_feasible]])
    seen = set(history.seen)
    out: list[np.ndarray] = []
    depth = max((len(r) for r in ranked), default=0)
    for i in range(depth):
        for rows in ranked:
            if len(out) >= n:
                return np.array(out).reshape(-1, space.width)
            if i < len(rows):
                key = space.row_keys(rows[i : i + 1])[0]
                if key not in seen:
                    seen.add(key)
                    out.append(rows[i])
    return np.array(out).reshape(-1, space.width)
