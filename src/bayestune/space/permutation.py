"""Permutation parameters: an ordering of ``n`` elements (BaCO's convention: ``value[i]`` is
the position element ``i`` takes)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from bayestune.exceptions import SpaceError
from bayestune.space.parameter import IntegerTuple, is_finite_number, is_numeric

#: Permutations up to this many elements can be enumerated (9! = 362,880 rows).
MAX_ENUMERABLE_PERMUTATION = 9
#: Lexicographic ranks are int64: 20! < 2**63 < 21!. Larger permutations work everywhere
#: except where a rank is needed (a Chain-of-Trees over them is never built: see the limit above).
MAX_RANKED_PERMUTATION = 20
#: The most elements a permutation may have: each configuration holds n positions, and distances
#: between two of them take n**2 steps (Kendall), so beyond this a run cannot work anyway.
MAX_PERMUTATION_SIZE = 1_000
PERMUTATION_METRICS = ("spearman", "kendall", "hamming")


def _permutation_table(n: int) -> np.ndarray:
    """All permutations of ``n`` elements in lexicographic order, as position vectors."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int16).reshape(-1, n)


class Permutation(IntegerTuple):
    """An ordering of ``n`` elements (e.g. a loop order); ``value[i]`` = position of element i."""

    kind = "permutation"

    def __init__(self, name: str, n: int, *, metric: str = "spearman", default: Sequence[int] | None = None) -> None:
        super().__init__(name)
        if is_numeric(n) and n > MAX_PERMUTATION_SIZE:  # before any arithmetic on it (n! of 10**12 never ends)
            shown = f"an integer of {int(n).bit_length()} bits" if isinstance(n, int) and n > 10**30 else repr(n)
            raise SpaceError(
                f"parameter {name!r}: a permutation needs 1 <= n <= {MAX_PERMUTATION_SIZE:,} elements, "
                f"but got n={shown}"
            )
        if not is_finite_number(n) or int(n) != n or int(n) < 1:
            raise SpaceError(f"parameter {name!r}: a permutation needs `n >= 1` elements, but got n={n!r}")
        if metric not in PERMUTATION_METRICS:
            raise SpaceError(
                f"parameter {name!r}: unknown permutation metric {metric!r}; allowed: {list(PERMUTATION_METRICS)}"
            )
        self.n = int(n)
        self.width = self.n
        self.metric = metric
        self._table: np.ndarray | None = None
        self._default = self.validate(default) if default is not None else None

    @property
    def cardinality(self) -> float:
        return float(math.factorial(self.n)) if self.n <= 170 else math.inf  # 171! overflows a float

    @property
    def default(self) -> tuple[int, ...]:
        return self._default if self._default is not None else tuple(range(self.n))

    def validate(self, value: Any) -> tuple[int, ...]:
        if isinstance(value, str):  # "(1, 0, 2)" or "1,0,2" from CSV files
            text = value.strip().strip("()[]")
            try:
                value = [int(x) for x in text.split(",") if x.strip()]
            except ValueError:
                raise SpaceError(f"parameter {self.name!r}: cannot read a permutation from {value!r}") from None
        try:
            items = [int(v) for v in value]
            ok = all(float(a) == b for a, b in zip(value, items))
        except (TypeError, ValueError):
            ok = False
        if not ok or sorted(items) != list(range(self.n)):
            raise SpaceError(f"parameter {self.name!r}: expected a permutation of 0..{self.n - 1}, but got {value!r}")
        return tuple(items)

    def in_domain(self, raw: np.ndarray) -> np.ndarray:
        r = np.asarray(raw, dtype=float).reshape(-1, self.n)
        ok = np.all(np.isfinite(r) & (r == np.rint(r)), axis=1)
        srt = np.sort(np.where(np.isfinite(r), r, -1), axis=1)
        return ok & np.all(srt == np.arange(self.n), axis=1)

    def grid(self) -> np.ndarray:
        if self.n > MAX_ENUMERABLE_PERMUTATION:
            raise SpaceError(
                f"parameter {self.name!r}: a permutation of {self.n} elements has {math.factorial(self.n)} "
                f"values, too many to enumerate (limit n <= {MAX_ENUMERABLE_PERMUTATION})"
            )
        if self._table is None:
            self._table = _permutation_table(self.n)
        return self._table.astype(float)

    @cached_property
    def _radix(self) -> np.ndarray:
        """Place values of the Lehmer code digits: (n-1)!, ..., 1!, 0!."""
        if self.n > MAX_RANKED_PERMUTATION:
            raise SpaceError(
                f"parameter {self.name!r}: a permutation of {self.n} elements has no 64-bit rank "
                f"(limit n <= {MAX_RANKED_PERMUTATION})"
            )
        return np.array([math.factorial(self.n - 1 - i) for i in range(self.n)], dtype=np.int64)

    def index_of(self, raw: np.ndarray) -> np.ndarray:
        """Lexicographic rank via the Lehmer code, vectorised."""
        p = self.columns(raw)
        smaller_later = (p[:, None, :] < p[:, :, None]) & np.triu(np.ones((self.n, self.n), bool), 1)[None]
        lehmer = smaller_later.sum(axis=2)
        return lehmer.astype(np.int64) @ self._radix

    def raw_of_index(self, index: np.ndarray) -> np.ndarray:
        idx = np.asarray(index, dtype=np.int64).reshape(-1)
        if self.n <= MAX_ENUMERABLE_PERMUTATION:
            return self.grid()[idx]
        out = np.empty((len(idx), self.n))
        for k, rank in enumerate(idx):
            remaining, r = list(range(self.n)), int(rank)
            for i in range(self.n):
                q, r = divmod(r, int(self._radix[i]))
                out[k, i] = remaining.pop(q)
        return out

    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        return np.argsort(rng.random((n, self.n)), axis=1).astype(float)

    @cached_property
    def _moves(self) -> np.ndarray:
        """Index maps of all swaps of two positions and all moves of one element to another
        position: ``order[moves[k]]`` is the k-th neighbouring order."""
        n = self.n
        identity = np.arange(n)
        maps = []
        for i in range(n):
            for j in range(i + 1, n):
                m = identity.copy()
                m[i], m[j] = m[j], m[i]
                maps.append(m)
        for i in range(n):
            for j in range(n):
                if abs(i - j) > 1:  # moves by one position equal adjacent swaps
                    maps.append(np.insert(np.delete(identity, i), j, i))
        return np.unique(np.array(maps).reshape(-1, n), axis=0)

    def neighbours(self, raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """All swaps of two elements plus all moves of one element to another position."""
        return self.neighbours_many(raw, rng)[0]

    def neighbours_many(self, raw: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        pos = self.columns(raw)
        if self.n < 2 or len(pos) == 0:
            return np.empty((0, self.n)), np.empty(0, dtype=int)
        orders = np.argsort(pos, axis=1)  # orders[r, k] = element at position k
        moved = orders[:, self._moves]  # (m, n_moves, n)
        positions = np.argsort(moved, axis=2).reshape(-1, self.n)
        owner = np.repeat(np.arange(len(pos)), len(self._moves))
        ok = np.any(positions != pos[owner], axis=1)
        return positions[ok].astype(float), owner[ok]

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"name": self.name, "type": self.kind, "n": self.n}
        if self.metric != "spearman":
            spec["metric"] = self.metric
        if self._default is not None:
            spec["default"] = list(self._default)
        return spec
