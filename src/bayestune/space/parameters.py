"""The parameter types of a tuning space (BaCO's RIPOC: real, integer, permutation,
ordinal, categorical), plus perfect tiles (TVM's loop tilings).

Every parameter maps its user-facing values to a *raw* block of ``width`` float columns,
so a whole batch of configurations is one ``(N, D)`` matrix that sampling, constraints,
models and local search can process without Python loops:

=============  ================================  ==========================================
type           raw encoding (per row)            ``unit()`` feature for the models
=============  ================================  ==========================================
Real           the value                         (log-)normalised to [0, 1]
Integer        the value                         (log-)normalised to [0, 1]
Ordinal        index into the sorted values      (log-)normalised *value* in [0, 1]
Categorical    index into the values             the index (compared with Hamming)
Permutation    n columns: position of element i  the positions (compared per metric)
PerfectTile    n columns: the tile factors        log2 factor / log2 extent, one numeric each
=============  ================================  ==========================================

A permutation value follows BaCO's convention: ``p[i]`` is the (0-based) position that
element ``i`` takes, so ``(1, 3, 2, 0)`` puts loop 3 outermost, then loop 0, loop 2, loop 1.
"""

from __future__ import annotations

from bayestune.space.choices import Categorical, Ordinal
from bayestune.space.numeric import Integer, Real
from bayestune.space.parameter import Parameter
from bayestune.space.perfect_tile import MAX_PERFECT_TILES, PerfectTile
from bayestune.space.permutation import MAX_ENUMERABLE_PERMUTATION, PERMUTATION_METRICS, Permutation

__all__ = [
    "MAX_ENUMERABLE_PERMUTATION",
    "MAX_PERFECT_TILES",
    "PARAMETER_TYPES",
    "PERMUTATION_METRICS",
    "Categorical",
    "Integer",
    "Ordinal",
    "Parameter",
    "PerfectTile",
    "Permutation",
    "Real",
]

PARAMETER_TYPES: dict[str, type[Parameter]] = {
    cls.kind: cls for cls in (Real, Integer, Ordinal, Categorical, Permutation, PerfectTile)
}
