"""From a search space's raw rows to model features and the blocks that describe them.

Numeric parameters (real, integer, ordinal) become their (log-)normalised unit value,
categoricals their index (compared by Hamming distance), permutations the positions of their
elements (compared by the parameter's metric). Parameters with a single value carry no
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
            else:
                block = FeatureBlock(p.name, "numeric", start, 1, "euclidean")
            self.blocks.append(block)
            self._sources.append((p.name, space.slices[p.name]))
            start += block.width
        self.width = start

    def transform(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float).reshape(-1, self.space.width)
        F = np.empty((len(X), max(self.width, 0)))
        for block, (name, s) in zip(self.blocks, self._sources):
            F[:, block.start:block.start + block.width] = self.space[name].unit(X[:, s])
        return F
