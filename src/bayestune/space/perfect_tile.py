"""Perfect-tile parameters: an ordered factorisation of a loop extent into ``levels`` factors
whose product is the extent, the innermost factor at most ``max_innermost`` (TVM
MetaSchedule's ``SamplePerfectTile``; a Halide split chain is the same object).

Why a type of its own rather than one integer per level with a product constraint: the
valid tilings are a tiny, exactly enumerable subset of the per-level grid (165 of 9^4 for
256 into 4 levels), so every value the optimizer proposes is valid by construction (TVM
silently rewrites a tile whose product is wrong), the local moves are the natural ones
(move one prime factor from a level to another) and the model compares tilings by their
log2 factors, where "twice as large a tile" is one step whatever the extent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from bayestune.exceptions import SpaceError
from bayestune.space.parameter import IntegerTuple, is_numeric

#: The factorisation table is built in full; larger ones are refused with a clear error.
MAX_PERFECT_TILES = 1_000_000


def prime_factors(n: int) -> list[int]:
    """Prime factors of ``n`` with multiplicity, ascending (trial division: extents are small)."""
    out, d = [], 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n //= d
        d += 1
    if n > 1:
        out.append(n)
    return out


def count_unbounded(extent: int, levels: int) -> int:
    """Ordered factorisations of ``extent`` into ``levels`` factors, ignoring the innermost cap:
    each prime's multiplicity is split over the levels independently (stars and bars)."""
    primes = prime_factors(extent)
    return math.prod(math.comb(primes.count(p) + levels - 1, levels - 1) for p in set(primes))


def _factorisations(extent: int, levels: int, max_innermost: int | None) -> np.ndarray:
    """All valid tilings in lexicographic order of their factors, ``(count, levels)`` int64."""
    divisors = [d for d in range(1, extent + 1) if extent % d == 0] if extent <= 1 << 16 else _divisors(extent)
    rows: list[tuple[int, ...]] = []

    def extend(prefix: tuple[int, ...], rest: int) -> None:
        if len(prefix) == levels - 1:
            if max_innermost is None or rest <= max_innermost:
                rows.append(prefix + (rest,))
            return
        for d in divisors:
            if d > rest:
                break
            if rest % d == 0:
                extend(prefix + (d,), rest // d)

    extend((), extent)
    return np.array(rows, dtype=np.int64).reshape(-1, levels)


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


class PerfectTile(IntegerTuple):
    """Tile sizes ``(f_0, ..., f_{levels-1})`` of a loop of ``extent`` iterations, outermost
    first: ``prod(f) == extent`` and ``f[-1] <= max_innermost`` (``None``: no cap)."""

    kind = "perfect_tile"

    def __init__(
        self,
        name: str,
        extent: int,
        levels: int,
        *,
        max_innermost: int | None = None,
        default: Sequence[int] | None = None,
    ) -> None:
        super().__init__(name)
        for key, value in (("extent", extent), ("levels", levels)):
            if not is_numeric(value) or int(value) != value or int(value) < 1:
                raise SpaceError(
                    f"parameter {name!r}: a perfect tile needs an integer `{key} >= 1`, but got {key}={value!r}"
                )
        if max_innermost is not None and (
            not is_numeric(max_innermost) or int(max_innermost) != max_innermost or int(max_innermost) < 1
        ):
            raise SpaceError(
                f"parameter {name!r}: `max_innermost` must be an integer >= 1 (or left out for no cap), "
                f"but got {max_innermost!r}"
            )
        self.extent, self.levels = int(extent), int(levels)
        self.max_innermost = int(max_innermost) if max_innermost is not None else None
        self.width = self.levels
        upper = count_unbounded(self.extent, self.levels)
        if upper > MAX_PERFECT_TILES:
            raise SpaceError(
                f"parameter {name!r}: {self.extent} has {upper:,} tilings into {self.levels} levels, "
                f"too many to enumerate (limit {MAX_PERFECT_TILES:,}); use fewer levels"
            )
        self._default = self.validate(default) if default is not None else None

    # ---- the table of valid tilings ----------------------------------------------------
    @cached_property
    def table(self) -> np.ndarray:
        """Every valid tiling, ``(cardinality, levels)`` int64, in lexicographic order."""
        return _factorisations(self.extent, self.levels, self.max_innermost)

    @cached_property
    def _divisors(self) -> np.ndarray:
        return np.array(_divisors(self.extent), dtype=np.int64)

    @cached_property
    def _keys(self) -> np.ndarray:
        """Mixed-radix key of each table row over divisor indices: sorted like the table."""
        return self._key(self.table)

    def _key(self, factors: np.ndarray) -> np.ndarray:
        n_div = len(self._divisors)
        idx = np.minimum(np.searchsorted(self._divisors, factors), n_div - 1)
        if self.levels * math.log2(max(n_div, 2)) < 62:
            return idx @ (n_div ** np.arange(self.levels - 1, -1, -1, dtype=np.int64))
        # 64-bit keys would overflow: rank the rows among the table's instead (still sorted).
        lookup = self.__dict__.setdefault("_rank", {tuple(r): i for i, r in enumerate(self.table.tolist())})
        return np.array([lookup.get(tuple(r), -1) for r in factors.tolist()], dtype=np.int64)

    @cached_property
    def _moves(self) -> np.ndarray:
        """(prime, from level, to level) of every one-prime move between two levels."""
        primes = sorted(set(prime_factors(self.extent)))
        return np.array(
            [(p, i, j) for p in primes for i in range(self.levels) for j in range(self.levels) if i != j],
            dtype=np.int64,
        ).reshape(-1, 3)

    # ---- description -------------------------------------------------------------------
    @property
    def cardinality(self) -> float:
        return float(len(self.table))

    @property
    def default(self) -> tuple[int, ...]:
        """The user's default, else no tiling: the whole extent at the outermost level."""
        if self._default is not None:
            return self._default
        return (self.extent,) + (1,) * (self.levels - 1)

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"name": self.name, "type": self.kind, "extent": self.extent, "levels": self.levels}
        if self.max_innermost is not None:
            spec["max_innermost"] = self.max_innermost
        if self._default is not None:
            spec["default"] = list(self._default)
        return spec

    # ---- value <-> raw -----------------------------------------------------------------
    def validate(self, value: Any) -> tuple[int, ...]:
        if isinstance(value, str):  # "(4, 8, 2, 4)" or "4,8,2,4" from CSV files
            try:
                value = [int(x) for x in value.strip().strip("()[]").split(",") if x.strip()]
            except ValueError:
                raise SpaceError(f"parameter {self.name!r}: cannot read tile sizes from {value!r}") from None
        try:
            items = [int(v) for v in value]
            ok = len(items) == self.levels and all(is_numeric(a) and float(a) == b for a, b in zip(value, items))
        except (TypeError, ValueError):
            ok = False
        if not ok or any(f < 1 for f in items):
            raise SpaceError(
                f"parameter {self.name!r}: expected {self.levels} positive integer tile sizes, but got {value!r}"
            )
        if math.prod(items) != self.extent:
            raise SpaceError(
                f"parameter {self.name!r}: tile sizes {tuple(items)} multiply to {math.prod(items)}, "
                f"but the extent is {self.extent}"
            )
        if self.max_innermost is not None and items[-1] > self.max_innermost:
            raise SpaceError(
                f"parameter {self.name!r}: innermost tile {items[-1]} of {tuple(items)} exceeds "
                f"max_innermost={self.max_innermost}"
            )
        return tuple(items)

    def in_domain(self, raw: np.ndarray) -> np.ndarray:
        r = np.asarray(raw, dtype=float).reshape(-1, self.levels)
        ok = np.all(np.isfinite(r) & (r == np.rint(r)) & (r >= 1), axis=1)
        f = np.where(ok[:, None], r, 1).astype(np.int64)
        ok &= np.prod(f, axis=1) == self.extent
        if self.max_innermost is not None:
            ok &= f[:, -1] <= self.max_innermost
        return ok

    # ---- enumeration (Chain-of-Trees) --------------------------------------------------
    def grid(self) -> np.ndarray:
        return self.table.astype(float)

    def index_of(self, raw: np.ndarray) -> np.ndarray:
        """Row of each tiling in :meth:`grid` (-1 for a row that is no valid tiling)."""
        f = self.columns(raw)
        pos = np.searchsorted(self._keys, self._key(f))
        pos = np.minimum(pos, len(self.table) - 1)
        found = np.all(self.table[pos] == f, axis=1) & self.in_domain(raw)
        return np.where(found, pos, -1).astype(np.int64)

    # ---- sampling and local moves ------------------------------------------------------
    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        """Uniform over the valid tilings."""
        return self.grid()[rng.integers(len(self.table), size=n)]

    def neighbours(self, raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Every tiling one prime factor moved from one level to another."""
        return self.neighbours_many(raw, rng)[0]

    def neighbours_many(self, raw: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        f = self.columns(raw)
        moves = self._moves
        if len(f) == 0 or len(moves) == 0:
            return np.empty((0, self.levels)), np.empty(0, dtype=int)
        owner = np.repeat(np.arange(len(f)), len(moves))
        p, src, dst = (np.tile(moves[:, k], len(f)) for k in range(3))
        cand = f[owner].copy()
        rows = np.arange(len(cand))
        ok = cand[rows, src] % p == 0
        cand[rows, src] //= np.where(ok, p, 1)
        cand[rows, dst] *= np.where(ok, p, 1)
        if self.max_innermost is not None:
            ok &= cand[:, -1] <= self.max_innermost
        return cand[ok].astype(float), owner[ok]

    # ---- model features ----------------------------------------------------------------
    def unit(self, raw: np.ndarray) -> np.ndarray:
        """log2 of each factor over log2 of the extent: each level in [0, 1], doubling a tile
        is the same step at every size."""
        f = np.asarray(raw, dtype=float).reshape(-1, self.levels)
        if self.extent == 1:
            return np.zeros_like(f)
        return np.log2(np.maximum(f, 1.0)) / math.log2(self.extent)
