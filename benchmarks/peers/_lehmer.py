"""Permutations as Lehmer codes, for peers without a permutation type (Optuna, SMAC): ``n - 1``
integers, digit k in ``0..n-1-k``, so that every code is a valid permutation.

Its own module so that peer adapters share it without importing each other (each adapter
imports the registry, which imports every adapter).
"""

from __future__ import annotations

from collections.abc import Sequence


def lehmer_to_positions(code: Sequence[int], n: int) -> tuple[int, ...]:
    """Permutation value (``p[i]`` = position of element i) of a Lehmer code of ``n - 1``
    digits (digit k in ``0..n-1-k`` picks, among the elements not placed yet, the one at
    position k; the last position takes the remaining element)."""
    remaining = list(range(n))
    positions = [0] * n
    for k in range(n):
        digit = int(code[k]) if k < n - 1 else 0
        element = remaining.pop(digit)
        positions[element] = k
    return tuple(positions)


def positions_to_lehmer(positions: Sequence[int]) -> list[int]:
    """Inverse of :func:`lehmer_to_positions`."""
    n = len(positions)
    order = sorted(range(n), key=lambda i: positions[i])  # element at each position
    remaining = list(range(n))
    code = []
    for k in range(n - 1):
        idx = remaining.index(order[k])
        code.append(idx)
        remaining.pop(idx)
    return code
