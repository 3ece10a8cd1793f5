"""The pool of every feasible configuration of a small space, for exact maximisation."""

from __future__ import annotations

import numpy as np

from bayestune.space import Space


class EnumeratedCandidates:
    """Every feasible configuration of a space with at most ``limit`` of them, enumerated once
    (lazily, on the first call), so the acquisition can be maximised exactly; ``None`` from
    :meth:`unseen` for larger spaces."""

    def __init__(self, space: Space, limit: int) -> None:
        self.space, self.limit = space, limit
        self._rows: np.ndarray | None = None
        self._keys: list[bytes] | None = None
        self._done = False

    def unseen(self, seen: set[bytes]) -> np.ndarray | None:
        """The enumerated rows whose keys are not in ``seen``, or ``None`` for a large space."""
        if not self._done:
            self._done = True
            self._rows = self.space.enumerate(limit=self.limit)
            if self._rows is not None:
                self._keys = self.space.row_keys(self._rows)
        if self._rows is None or self._keys is None:
            return None
        keep = np.fromiter((k not in seen for k in self._keys), dtype=np.bool_, count=len(self._keys))
        return self._rows[keep]
