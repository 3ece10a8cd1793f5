"""From a search space's raw rows to model features and the blocks that describe them.

Numeric parameters (real, integer, ordinal) become their (log-)normalised unit value,
categoricals their index (compared by Hamming distance), permutations the positions of their
elements (compared by the parameter's metric), perfect tiles one numeric feature per level
(log2 factor over log2 extent; per level, because the kernel's numeric blocks are one column
wide and each level deserves its own length-scale). Parameters with a single value carry no
information and are left out, so they cannot distort length-scale fitting.
"""

from __future__ import annotations

import numpy as np

from bayestune.models.kernels import FeatureBlock
from bayestune.space.space import Space


class FeatureEncoder:
    """Maps raw rows of ``space`` to the model-feature matrix described by ``blocks``."""

    def __init__(self, space: Space, *, permutation_metric: str | None = None) -> None:
        self.space = space
        self.blocks: list[FeatureBlock] = []
        self._sources: list[tuple[str, slice]] = []
        start = 0
        for p in space.parameters:
            if p.cardinality == 1:
                continue
            if p.kind == "categorical":
                block = FeatureBlock(p.name, "categorical", start, 1, "hamming")
            elif p.kind == "permutation":
                block = FeatureBlock(p.name, "permutation", start, p.width,
                                     permutation_metric or getattr(p, "metric", "spearman"))
            elif p.kind == "perfect_tile":
                for level in range(p.width):
                    self.blocks.append(FeatureBlock(f"{p.name}[{level}]", "numeric", start + level, 1, "euclidean"))
                self._sources.append((p.name, space.slices[p.name]))
                start += p.width
                continue
            else:
                block = FeatureBlock(p.name, "numeric", start, 1, "euclidean")
            self.blocks.append(block)
            self._sources.append((p.name, space.slices[p.name]))
            start += block.width
        self.width = start

    def transform(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float).reshape(-1, self.space.width)
        F = np.empty((len(X), max(self.width, 0)))
        start = 0
        for name, s in self._sources:
            unit = self.space[name].unit(X[:, s])
            F[:, start:start + unit.shape[1]] = unit
            start += unit.shape[1]
        return F
