"""Mixed-type Matérn 5/2 kernel over numeric, categorical and permutation features (BaCO §3.2, §4.1).

Every parameter ``j`` contributes a distance ``d_j(x, x')`` in [0, 1]; the kernel is

    r² = Σ_j d_j² / ℓ_j²,        k(x, x') = σ² (1 + √5 r + 5 r²/3) exp(−√5 r)

(the standard Matérn 5/2; BaCO's Eq. 1 drops the ``/3``). The per-type distances are

=========================  ================================================================
block                      d_j²
=========================  ================================================================
numeric                    (x − x')²   (features already (log-)normalised to [0, 1])
categorical                1[x ≠ x']
permutation, spearman      Σ_i (π_i − π'_i)² / (n(n²−1)/3)      (the max over permutations)
permutation, kendall       discordant pairs / (n(n−1)/2)
permutation, hamming       #{i : π_i ≠ π'_i} / n
=========================  ================================================================

Why the permutation rows use the *square roots* of BaCO's semimetrics as ``d_j``: each of
these ``d_j²`` is a squared Euclidean distance between fixed embeddings of the values —
positions (Spearman), the ±1 signs of all element pairs (Kendall: a discordant pair
contributes (±2)² = 4), one-hot position indicators (Hamming, and categoricals: a changed
value contributes 1² + 1²). Scaling each embedding by ``1/ℓ_j`` and concatenating gives one
Euclidean space in which ``r`` is the plain distance, and the Matérn 5/2 function is positive
definite in every dimension, so the kernel is positive semi-definite *by construction*.
Plugging the raw Spearman sum or the raw Kendall/Hamming counts in as ``d_j`` (i.e. squaring
them again) breaks this: negative eigenvalues appear over all permutations of 5–6 elements
at length-scales ≥ 1 (see DESIGN.md and the PSD tests).

The same embedding gives the fast path for predictions: ``r²`` between ``M`` candidates and
``N`` training points is one ``(M, m) @ (m, N)`` product. Training–training distances are
kept *per block* (exactly, from integer arithmetic for permutations), because the
length-scale gradients need each ``d_j²`` separately and they do not depend on ``ℓ``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from bayestune.space.parameter import Parameter

SQRT5 = math.sqrt(5.0)

#: Allowed metrics per block kind; the first one is the default.
BLOCK_METRICS: dict[str, tuple[str, ...]] = {
    "numeric": ("euclidean",),
    "categorical": ("hamming",),
    "permutation": ("spearman", "kendall", "hamming"),
}


@dataclass(frozen=True)
class FeatureBlock:
    """Columns ``[start, start + width)`` of the model-feature matrix that form one parameter.

    ``metric`` defaults to the natural metric of the kind: ``"euclidean"`` for numeric,
    ``"hamming"`` for categorical and ``"spearman"`` for permutations (BaCO's default).
    A permutation block holds the position of elements ``0..n-1`` (``width = n``).
    """

    name: str
    kind: str
    start: int
    width: int = 1
    metric: str = "euclidean"

    def __post_init__(self) -> None:
        if self.kind not in BLOCK_METRICS:
            raise ValueError(f"feature block {self.name!r}: unknown kind {self.kind!r}; allowed: {list(BLOCK_METRICS)}")
        allowed = BLOCK_METRICS[self.kind]
        if self.metric == "euclidean" and self.kind != "numeric":
            object.__setattr__(self, "metric", allowed[0])  # the dataclass default means "natural metric"
        if self.metric not in allowed:
            raise ValueError(
                f"feature block {self.name!r}: metric {self.metric!r} is not allowed for kind "
                f"{self.kind!r}; allowed: {list(allowed)}"
            )
        if not isinstance(self.start, (int, np.integer)) or self.start < 0:
            raise ValueError(f"feature block {self.name!r}: `start >= 0` must hold, but got start={self.start!r}")
        if not isinstance(self.width, (int, np.integer)) or self.width < 1:
            raise ValueError(f"feature block {self.name!r}: `width >= 1` must hold, but got width={self.width!r}")
        if self.kind != "permutation" and self.width != 1:
            raise ValueError(
                f"feature block {self.name!r}: a {self.kind} block has width 1, but got width={self.width}"
            )

    @property
    def stop(self) -> int:
        return self.start + self.width


def validate_blocks(blocks: Sequence[FeatureBlock]) -> tuple[FeatureBlock, ...]:
    """Check that block names are unique and their columns do not overlap."""
    blocks = tuple(blocks)
    if not blocks:
        raise ValueError("a kernel needs at least one feature block, but got none")
    for b in blocks:
        if not isinstance(b, FeatureBlock):
            raise ValueError(f"expected FeatureBlock objects, but got {b!r}")
    names = [b.name for b in blocks]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"feature block names must be unique, but got duplicates {dupes}")
    used = np.zeros(max(b.stop for b in blocks), dtype=int)
    for b in blocks:
        used[b.start : b.stop] += 1
    if np.any(used > 1):
        shared = np.flatnonzero(used > 1).tolist()
        raise ValueError(f"feature blocks must not overlap, but column(s) {shared} are shared")
    return blocks


def blocks_for_parameters(parameters: Sequence[Parameter]) -> list[FeatureBlock]:
    """Feature blocks matching ``Parameter.unit()`` features laid out side by side.

    Real, Integer and Ordinal parameters are numeric; Categorical and Permutation keep
    their kind (and a permutation its metric).
    """
    numeric_kinds = {"real", "integer", "ordinal"}
    blocks, start = [], 0
    for p in parameters:
        kind = "numeric" if p.kind in numeric_kinds else p.kind
        metric = getattr(p, "metric", "euclidean") if kind == "permutation" else "euclidean"
        width = int(p.width)
        blocks.append(FeatureBlock(p.name, kind, start, width, metric))
        start += width
    return blocks


# ---- per-block embeddings -----------------------------------------------------------------


def _category_indices(block: FeatureBlock, F: np.ndarray) -> np.ndarray:
    col = F[:, block.start]
    idx = np.rint(col)
    if np.any(idx < 0) or np.any(np.abs(col - idx) > 1e-9):
        bad = col[(idx < 0) | (np.abs(col - idx) > 1e-9)][0]
        raise ValueError(f"categorical block {block.name!r}: features must be category indices >= 0, but got {bad!r}")
    return idx.astype(np.int64)


def _permutation_positions(block: FeatureBlock, F: np.ndarray) -> np.ndarray:
    cols = F[:, block.start : block.stop]
    pos = np.rint(cols).astype(np.int64)
    ok = np.all(np.abs(cols - pos) <= 1e-9, axis=1) & np.all(np.sort(pos, axis=1) == np.arange(block.width), axis=1)
    if not np.all(ok):
        row = cols[np.flatnonzero(~ok)[0]]
        raise ValueError(
            f"permutation block {block.name!r}: each row must hold the positions 0..{block.width - 1} "
            f"in some order, but got {row.tolist()}"
        )
    return pos


def _pair_signs(pos: np.ndarray) -> np.ndarray:
    """±1 for every element pair i < j: the Kendall embedding (one column per pair)."""
    i, j = np.triu_indices(pos.shape[1], k=1)
    return np.sign(pos[:, i] - pos[:, j]).astype(float)


def _one_hot(idx: np.ndarray, n_values: int) -> np.ndarray:
    """Rows of ``idx`` (N, c) as concatenated one-hot vectors (N, c * n_values)."""
    n, c = idx.shape
    out = np.zeros((n, c * n_values))
    out[np.arange(n)[:, None], np.arange(c)[None, :] * n_values + idx] = 1.0
    return out


def _permutation_scale(block: FeatureBlock) -> float:
    """Factor turning the squared embedding distance into the normalised ``d²`` in [0, 1]."""
    n = block.width
    if n < 2:
        return 0.0  # a single element has one ordering: every distance is zero
    if block.metric == "spearman":
        return 3.0 / (n * (n * n - 1))  # max Σ(π−π')² over permutations is n(n²−1)/3 (reversal)
    if block.metric == "kendall":
        return 1.0 / (4.0 * (n * (n - 1) / 2))  # each discordant pair adds (±2)² = 4
    return 1.0 / (2.0 * n)  # hamming: each moved element adds 1² + 1²


def _integer_embedding(block: FeatureBlock, F: np.ndarray, n_categories: int = 0) -> np.ndarray:
    """Unscaled, integer-valued embedding whose squared distances are proportional to ``d²``."""
    if block.kind == "numeric":
        return F[:, block.start : block.stop]
    if block.kind == "categorical":
        return _one_hot(_category_indices(block, F)[:, None], n_categories)
    pos = _permutation_positions(block, F)
    if block.metric == "spearman":
        return pos.astype(float)
    if block.metric == "kendall":
        return _pair_signs(pos)
    return _one_hot(pos, block.width)


def _embedding_scale(block: FeatureBlock) -> float:
    if block.kind == "numeric":
        return 1.0
    if block.kind == "categorical":
        return 0.5
    return _permutation_scale(block)


def _sq_euclidean(A: np.ndarray, B: np.ndarray, B_norms: np.ndarray | None = None) -> np.ndarray:
    """Pairwise squared Euclidean distances via the Gram trick (exact for integer-valued rows);
    ``B_norms`` are the rows' squared norms of ``B`` when already known."""
    d = (A * A).sum(axis=1)[:, None] + ((B * B).sum(axis=1) if B_norms is None else B_norms)[None, :]
    G = A @ B.T
    G *= 2.0
    d -= G
    return np.maximum(d, 0.0, out=d)


def block_sq_distances(block: FeatureBlock, A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
    """Exact ``d_j²`` between the rows of ``A`` and ``B`` (``(N_A, N_B)``, values in [0, 1])."""
    A = np.asarray(A, dtype=float)
    B = A if B is None else np.asarray(B, dtype=float)
    if block.kind == "numeric":
        diff = A[:, block.start][:, None] - B[:, block.start][None, :]
        return diff * diff
    if block.kind == "categorical":
        a, b = _category_indices(block, A), _category_indices(block, B)
        return (a[:, None] != b[None, :]).astype(float)
    ea, eb = _integer_embedding(block, A), _integer_embedding(block, B)
    # Integer rows make the Gram trick exact; the scale is applied afterwards.
    return _sq_euclidean(ea, eb) * _permutation_scale(block)


def sq_distance_stack(blocks: Sequence[FeatureBlock], A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
    """Per-block ``d_j²`` stacked into ``(P, N_A, N_B)``; the cache the GP keeps for training data."""
    A = np.asarray(A, dtype=float)
    nb = A.shape[0] if B is None else np.asarray(B).shape[0]
    out = np.empty((len(blocks), A.shape[0], nb))
    for j, block in enumerate(blocks):
        out[j] = block_sq_distances(block, A, B)
    return out


def _embedding_width(block: FeatureBlock, n_categories: int) -> int:
    if block.kind == "numeric":
        return 1
    if block.kind == "categorical":
        return n_categories
    if block.metric == "spearman":
        return block.width
    if block.metric == "kendall":
        return block.width * (block.width - 1) // 2
    return block.width * block.width


def scaled_embedding(
    blocks: Sequence[FeatureBlock],
    F: np.ndarray,
    lengthscales: np.ndarray,
    n_categories: Sequence[int],
    category_indices: dict[int, np.ndarray] | None = None,
) -> np.ndarray:
    """Concatenated embedding scaled so that squared Euclidean distances equal ``r²``.

    ``n_categories[j]`` is the one-hot width of categorical block ``j`` (ignored for the
    others); two matrices are only comparable if they were embedded with the same widths.
    ``category_indices[j]``: block ``j``'s category indices of ``F`` when already read.
    """
    scales = [math.sqrt(_embedding_scale(block)) / ell for block, ell in zip(blocks, lengthscales)]
    widths = [
        _embedding_width(block, ncat) if scale > 0 else 0 for block, scale, ncat in zip(blocks, scales, n_categories)
    ]
    n = F.shape[0]
    if not sum(widths):
        return np.zeros((n, 1))
    out = np.empty((n, sum(widths)))
    col = 0
    for j, (block, scale, width) in enumerate(zip(blocks, scales, widths)):
        if not width:
            continue
        part = out[:, col : col + width]
        if block.kind == "numeric":
            np.multiply(F[:, block.start : block.stop], scale, out=part)
        elif block.kind == "categorical":  # the one-hot rows times the scale
            idx = category_indices[j] if category_indices and j in category_indices else _category_indices(block, F)
            part.fill(0.0)
            part[np.arange(n), idx] = 1.0 * scale
        else:
            np.multiply(_integer_embedding(block, F), scale, out=part)
        col += width
    return out


def _category_maxima(blocks: Sequence[FeatureBlock], F: np.ndarray) -> tuple[dict[int, np.ndarray], dict[int, int]]:
    """Category indices of every categorical block of ``F`` (checked) and their maxima."""
    idx = {j: _category_indices(b, F) for j, b in enumerate(blocks) if b.kind == "categorical"}
    return idx, {j: int(i.max(initial=0)) for j, i in idx.items()}


def scaled_sq_distances(
    blocks: Sequence[FeatureBlock], A: np.ndarray, B: np.ndarray, lengthscales: np.ndarray
) -> np.ndarray:
    """``r² = Σ_j d_j²/ℓ_j²`` between rows of ``A`` and ``B`` with a single matrix product."""
    return ScaledDistances(blocks, B, lengthscales)(A)


class ScaledDistances:
    """``r²`` from any rows ``A`` to fixed rows ``B`` at fixed length-scales: ``B``'s scaled
    embedding and squared norms are computed once per one-hot layout and reused, so each call
    embeds ``A`` and takes one matrix product. The values are those of
    :func:`scaled_sq_distances`, bit for bit (the one-hot widths are still the larger category
    count of ``A`` and ``B``, so the sums run over the same columns)."""

    def __init__(self, blocks: Sequence[FeatureBlock], B: np.ndarray, lengthscales: np.ndarray) -> None:
        self.blocks = tuple(blocks)
        self.B = np.asarray(B, dtype=float)
        self.lengthscales = np.asarray(lengthscales, dtype=float)
        self._B_indices, self._B_maxima = _category_maxima(self.blocks, self.B)
        self._B_embedded: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, A: np.ndarray) -> np.ndarray:
        A = np.asarray(A, dtype=float)
        A_indices, A_maxima = _category_maxima(self.blocks, A)
        ncat = tuple(max(A_maxima[j], self._B_maxima[j]) + 1 if j in A_maxima else 0 for j in range(len(self.blocks)))
        if ncat not in self._B_embedded:
            EB = scaled_embedding(self.blocks, self.B, self.lengthscales, ncat, self._B_indices)
            self._B_embedded[ncat] = EB, (EB * EB).sum(axis=1)
        EB, B_norms = self._B_embedded[ncat]
        return _sq_euclidean(scaled_embedding(self.blocks, A, self.lengthscales, ncat, A_indices), EB, B_norms)


# ---- the Matérn 5/2 function of r² ----------------------------------------------------------


def matern52(r2: np.ndarray, in_place: bool = False) -> np.ndarray:
    """Unit-variance Matérn 5/2 as a function of the squared scaled distance; ``in_place``:
    computed in the (float, non-negative) ``r2`` array itself, saving two temporaries."""
    r2 = r2 if in_place else np.maximum(r2, 0.0)
    sr = np.sqrt(r2)
    sr *= SQRT5
    g = np.multiply(r2, 5.0 / 3.0, out=r2 if in_place else None)
    g += sr
    g += 1.0
    np.negative(sr, out=sr)
    np.exp(sr, out=sr)
    g *= sr
    return g


def matern52_with_derivative(r2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``g(r)`` and ``h(r) = (5/3)(1 + √5 r) exp(−√5 r)``.

    ``h`` is what the length-scale gradient needs: with ``r² = Σ d_j²/ℓ_j²``,
    ``∂g/∂log ℓ_j = h · d_j²/ℓ_j²`` (from ``dg/dr = −(5/3) r (1 + √5 r) e^{−√5 r}`` and
    ``∂r/∂log ℓ_j = −d_j²/(ℓ_j² r)``; the ``r`` cancels, so it is finite at ``r = 0``).
    """
    # In-place arithmetic: at N = 500 these are 250k-entry arrays evaluated hundreds of
    # times per fit, and fresh temporaries cost more than the arithmetic.
    r2 = np.maximum(r2, 0.0)
    sr = np.sqrt(r2)
    sr *= SQRT5
    e = np.negative(sr)
    np.exp(e, out=e)
    h = np.add(sr, 1.0)  # 1 + √5 r
    g = np.multiply(r2, 5.0 / 3.0, out=sr)
    g += h
    g *= e
    h *= e
    h *= 5.0 / 3.0
    return g, h


class MixedMatern52:
    """The kernel of the module doc for a fixed list of feature blocks (one length-scale each)."""

    def __init__(self, blocks: Sequence[FeatureBlock]) -> None:
        self.blocks = validate_blocks(blocks)
        self.names = tuple(b.name for b in self.blocks)
        self.n_columns = max(b.stop for b in self.blocks)

    def check_features(self, F: np.ndarray, what: str = "F") -> np.ndarray:
        """``F`` as a finite float matrix with enough columns for every block."""
        F = np.asarray(F, dtype=float)
        if F.ndim != 2:
            raise ValueError(f"{what} must be a 2-D feature matrix (N, D), but got shape {F.shape}")
        if F.shape[1] < self.n_columns:
            raise ValueError(
                f"{what} needs at least {self.n_columns} columns for the feature blocks, but got {F.shape[1]}"
            )
        if not np.all(np.isfinite(F)):
            row = int(np.flatnonzero(~np.all(np.isfinite(F), axis=1))[0])
            raise ValueError(f"{what} must be finite, but row {row} is {F[row].tolist()}")
        return F

    def sq_distances(self, A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
        return sq_distance_stack(self.blocks, A, B)

    def __call__(
        self, A: np.ndarray, B: np.ndarray | None = None, *, lengthscales: np.ndarray, outputscale: float = 1.0
    ) -> np.ndarray:
        B_ = A if B is None else B
        r2 = scaled_sq_distances(self.blocks, A, B_, lengthscales)
        if B is None:
            np.fill_diagonal(r2, 0.0)
        return outputscale * matern52(r2)
