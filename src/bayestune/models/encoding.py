"""From a search space's raw rows to model features and the blocks that describe them.

Numeric parameters (real, integer, ordinal) become their (log-)normalised unit value,
categoricals their index (compared by Hamming distance), permutations the positions of their
elements (compared by the parameter's metric; BaCO compares the inverse, ``value.index(i)``, under
Spearman: not adopted, a change of every permutation model that no paired benchmark has judged),
perfect tiles one numeric feature per level
(log2 factor over log2 extent; per level, because the kernel's numeric blocks are one column
wide and each level deserves its own length-scale). Parameters with a single value carry no
information and are left out, so they cannot distort length-scale fitting.

``ordinal_scale`` overrides the space's per-parameter log/linear rule for every ordinal
(``"log"`` where all values are positive, ``"linear"``, or ``"index"``: equally spaced ranks) —
the alternatives a learned input warping would choose between (see
``benchmarks/surrogate_fit.py`` for how well each ranks the recorded GPU spaces).
:func:`distinct_ordinal_scales` tells which of them actually change a space's features, so a
choice between them (``bo``'s ``ordinal_scale="auto"``) fits no model twice on the same input.
"""

from __future__ import annotations

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.models.kernels import FeatureBlock
from bayestune.space.parameters import Ordinal, Permutation
from bayestune.space.space import Space

ORDINAL_SCALES = ("log", "linear", "index")


def _ordinal_units(values: np.ndarray, scale: str) -> np.ndarray:
    """Each ordinal value's position in [0, 1] on ``scale`` (log falls back to linear when a
    value is not positive)."""
    if scale == "index":
        t = np.arange(len(values), dtype=float)
    elif scale == "log" and values[0] > 0:
        t = np.log(values)
    else:
        t = values.astype(float)
    span = t[-1] - t[0]
    return (t - t[0]) / span if span > 0 else np.zeros_like(t)


def distinct_ordinal_scales(space: Space, scales) -> list[str | None]:
    """The members of ``scales`` (``None``: the space's own rule) whose ordinal features differ
    from those of every earlier member, in order: on a space whose ordinals are all equally
    spaced, linear and index are one warping, and a space without ordinals has only one."""
    kept: list[str | None] = []
    keys: list[tuple[bytes, ...]] = []
    ordinals = [p for p in space.parameters if isinstance(p, Ordinal) and p.cardinality > 1]
    for scale in scales:
        if scale is not None and scale not in ORDINAL_SCALES:
            raise BayestuneError(f"ordinal scale must be one of {ORDINAL_SCALES} or None, but got {scale!r}")
        key = tuple(
            np.round(
                p.unit(np.arange(p.cardinality, dtype=float)).ravel()
                if scale is None
                else _ordinal_units(np.asarray(p.values, dtype=float), scale),
                12,
            ).tobytes()
            for p in ordinals
        )
        if key not in keys:
            keys.append(key)
            kept.append(scale)
    return kept


class FeatureEncoder:
    """Maps raw rows of ``space`` to the model-feature matrix described by ``blocks``."""

    def __init__(
        self, space: Space, *, permutation_metric: str | None = None, ordinal_scale: str | None = None
    ) -> None:
        if ordinal_scale is not None and ordinal_scale not in ORDINAL_SCALES:
            raise BayestuneError(f"ordinal_scale must be one of {ORDINAL_SCALES} or None, but got {ordinal_scale!r}")
        self.space = space
        self.ordinal_scale = ordinal_scale
        self._ordinal_units = {
            p.name: _ordinal_units(np.asarray(p.values, dtype=float), ordinal_scale)
            for p in space.parameters
            if ordinal_scale is not None and isinstance(p, Ordinal)
        }
        self.blocks: list[FeatureBlock] = []
        #: per block, the raw-matrix column of its parameter's first value it reads (for models
        #: that need raw values block by block, such as BoGraph's node models)
        self.raw_columns: list[int] = []
        self._sources: list[tuple[str, slice]] = []
        start = 0
        for p in space.parameters:
            if p.cardinality == 1:
                continue
            if p.kind == "categorical":
                block = FeatureBlock(p.name, "categorical", start, 1, "hamming")
            elif isinstance(p, Permutation):
                block = FeatureBlock(p.name, "permutation", start, p.width, permutation_metric or p.metric)
            elif p.kind == "perfect_tile":
                for level in range(p.width):
                    self.blocks.append(FeatureBlock(f"{p.name}[{level}]", "numeric", start + level, 1, "euclidean"))
                    self.raw_columns.append(space.slices[p.name].start + level)
                self._sources.append((p.name, space.slices[p.name]))
                start += p.width
                continue
            else:
                block = FeatureBlock(p.name, "numeric", start, 1, "euclidean")
            self.blocks.append(block)
            self.raw_columns.append(space.slices[p.name].start)
            self._sources.append((p.name, space.slices[p.name]))
            start += block.width
        self.width = start

    def transform(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float).reshape(-1, self.space.width)
        F = np.empty((len(X), max(self.width, 0)))
        start = 0
        for name, s in self._sources:
            p = self.space[name]
            if name in self._ordinal_units:
                F[:, start] = self._ordinal_units[name][p.index_of(X[:, s])]
                start += 1
                continue
            unit = p.unit(X[:, s])
            F[:, start : start + unit.shape[1]] = unit
            start += unit.shape[1]
        return F
