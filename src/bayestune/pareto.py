"""Pareto fronts and the hypervolume indicator, for objectives minimised or maximised.

Conventions. ``Y`` is an ``(N, M)`` array of objective values in their own units and
``directions`` says, per column, whether it is minimised or maximised: a sequence of
:class:`~bayestune.objectives.Objective`, of ``"minimize"``/``"maximize"``, or of booleans
(True = minimise); ``None`` means every column is minimised. Internally maximised columns are
negated, so that "better" always means "smaller".

``y`` *dominates* ``y'`` when it is no worse in every objective and strictly better in at
least one. The Pareto front of a set is its non-dominated subset; rows with a NaN value, or
marked infeasible, are never on it (HyperMapper 2.0's constrained Pareto front). Identical
rows do not dominate each other, so duplicates on the front are all kept.

The hypervolume of a set is the measure of the region it dominates, bounded by a reference
point that every counted row must beat strictly in all objectives (rows that do not
contribute nothing). It is computed exactly: by a sweep for two objectives and by slicing
along the last objective (HSO: "hypervolume by slicing objectives") for three or more, each
slice being a hypervolume problem one dimension smaller. Slicing costs about ``n^(M-1)``
operations, so for many objectives *and* many points ``method="auto"`` switches to a
Monte-Carlo estimate (its standard error is returned by :func:`hypervolume_mc`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from bayestune.exceptions import BayestuneError

__all__ = [
    "hypervolume",
    "hypervolume_mc",
    "hypervolume_trace",
    "pareto_mask",
    "pareto_trials",
    "reference_point",
    "signs",
    "to_minimization",
]

#: ``method="auto"`` slices exactly while ``n ** (M - 2)`` stays below this.
EXACT_WORK_LIMIT = 2_000_000
#: Default number of Monte-Carlo samples.
MC_SAMPLES = 200_000


# ---- directions --------------------------------------------------------------------------------
def signs(directions: Sequence[Any] | None, m: int) -> np.ndarray:
    """+1 for minimised columns, -1 for maximised ones."""
    if directions is None:
        return np.ones(m)
    directions = list(directions)
    if len(directions) != m:
        raise BayestuneError(f"got {len(directions)} objective directions for {m} objective columns")
    out = np.empty(m)
    for j, d in enumerate(directions):
        if hasattr(d, "minimize"):
            minimize = bool(d.minimize)
        elif isinstance(d, (bool, np.bool_)):
            minimize = bool(d)
        elif d in ("minimize", "min"):
            minimize = True
        elif d in ("maximize", "max"):
            minimize = False
        else:
            raise BayestuneError(
                f"objective direction must be 'minimize', 'maximize', a boolean or an Objective, but got {d!r}"
            )
        out[j] = 1.0 if minimize else -1.0
    return out


def _as_matrix(Y: Any) -> np.ndarray:
    Y = np.asarray(Y, dtype=float)
    if Y.ndim == 1:
        Y = Y.reshape(-1, 1)
    if Y.ndim != 2:
        raise BayestuneError(f"objective values must be an (N, M) array, but got shape {Y.shape}")
    return Y


def to_minimization(Y: Any, directions: Sequence[Any] | None = None) -> np.ndarray:
    """``Y`` with maximised columns negated."""
    Y = _as_matrix(Y)
    return Y * signs(directions, Y.shape[1])


# ---- Pareto front ------------------------------------------------------------------------------
def _front_2d(Y: np.ndarray) -> np.ndarray:
    """Non-dominated mask of finite 2-D points (minimisation) by one sort and a sweep."""
    order = np.lexsort((Y[:, 1], Y[:, 0]))  # by y0, then y1
    a, b = Y[order, 0], Y[order, 1]
    n = len(a)
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = a[1:] != a[:-1]
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(n), 0))
    group_min = b[group_start]  # sorted by y1 inside a group: its first row has the group's minimum
    running = np.minimum.accumulate(b)
    before = np.full(n, np.inf)  # min of y1 over rows with a strictly smaller y0
    has_before = group_start > 0
    before[has_before] = running[group_start[has_before] - 1]
    keep = (b == group_min) & (b < before)
    mask = np.zeros(n, dtype=bool)
    mask[order] = keep
    return mask


def _front_nd(Y: np.ndarray) -> np.ndarray:
    """Non-dominated mask of finite points (minimisation) in any dimension.

    Rows are visited in lexicographic order, where a dominating row always comes first, and
    compared with the front found so far only (a dominated dominator is itself dominated by a
    front member, so nothing is missed).
    """
    order = np.lexsort(Y.T[::-1])
    front: list[int] = []
    F = np.empty((0, Y.shape[1]))
    for i in order:
        y = Y[i]
        if len(front) and np.any(np.all(F <= y, axis=1) & np.any(F < y, axis=1)):
            continue
        front.append(i)
        F = Y[front]
    mask = np.zeros(len(Y), dtype=bool)
    mask[front] = True
    return mask


def pareto_mask(Y: Any, directions: Sequence[Any] | None = None, feasible: Any = None) -> np.ndarray:
    """Which rows of ``Y`` are on the Pareto front of the feasible rows without NaN."""
    S = to_minimization(Y, directions)
    valid = np.all(np.isfinite(S), axis=1)
    if feasible is not None:
        feasible = np.asarray(feasible, dtype=bool).reshape(-1)
        if len(feasible) != len(S):
            raise BayestuneError(f"feasible has {len(feasible)} entries for {len(S)} rows")
        valid &= feasible
    mask = np.zeros(len(S), dtype=bool)
    idx = np.flatnonzero(valid)
    if not len(idx):
        return mask
    sub = S[idx]
    if sub.shape[1] == 1:
        keep = sub[:, 0] == sub[:, 0].min()
    elif sub.shape[1] == 2:
        keep = _front_2d(sub)
    else:
        keep = _front_nd(sub)
    mask[idx[keep]] = True
    return mask


def pareto_trials(trials: Iterable[Any], objectives: Sequence[Any]) -> list[Any]:
    """The feasible trials on the Pareto front, sorted by the first objective (best first).

    ``objectives``: :class:`~bayestune.objectives.Objective` objects, or mappings with
    ``name`` and ``minimize`` (the journal's metadata format).
    """
    names, dirs = _objective_names_and_directions(objectives)
    ok = [t for t in trials if t.feasible and all(n in t.values for n in names)]
    if not ok:
        return []
    Y = np.array([[t.values[n] for n in names] for t in ok], dtype=float)
    mask = pareto_mask(Y, dirs)
    S = to_minimization(Y, dirs)
    chosen = np.flatnonzero(mask)
    chosen = chosen[np.lexsort(S[chosen].T[::-1])]
    return [ok[i] for i in chosen]


def _objective_names_and_directions(objectives: Sequence[Any]) -> tuple[list[str], list[bool]]:
    names, dirs = [], []
    for o in objectives:
        if isinstance(o, Mapping):
            names.append(str(o["name"]))
            dirs.append(bool(o.get("minimize", True)))
        elif isinstance(o, str):
            names.append(o)
            dirs.append(True)
        else:
            names.append(o.name)
            dirs.append(bool(o.minimize))
    return names, dirs


# ---- reference point ---------------------------------------------------------------------------
def reference_point(
    Y: Any, directions: Sequence[Any] | None = None, feasible: Any = None, *, offset: float = 0.1
) -> np.ndarray:
    """A reference point just beyond the worst value of each objective on the front.

    Per objective: the front's worst value moved outwards by ``offset`` times the front's
    range (or by ``offset`` x |value|, or ``offset``, when the range is zero). Returned in
    the objectives' own units. Fix one reference point per problem when comparing runs.
    """
    S = to_minimization(Y, directions)
    mask = pareto_mask(Y, directions, feasible)
    if not mask.any():
        raise BayestuneError("no feasible, finite objective values to place a reference point by")
    F = S[mask]
    nadir, ideal = F.max(axis=0), F.min(axis=0)
    span = nadir - ideal
    fallback = np.where(np.abs(nadir) > 0, np.abs(nadir), 1.0)
    ref = nadir + offset * np.where(span > 0, span, fallback)
    return ref * signs(directions, S.shape[1])


# ---- hypervolume -------------------------------------------------------------------------------
def _hv_2d(P: np.ndarray, ref: np.ndarray) -> float:
    """Area dominated by points that all beat ``ref`` (minimisation)."""
    P = P[_front_2d(P)]
    P = P[np.argsort(P[:, 0], kind="stable")]
    x_next = np.append(P[1:, 0], ref[0])
    return float(np.sum((x_next - P[:, 0]) * (ref[1] - P[:, 1])))


def _hv_slicing(P: np.ndarray, ref: np.ndarray) -> float:
    """HSO: slice along the last objective; each slab is a hypervolume one dimension down."""
    m = P.shape[1]
    if m == 1:
        return float(ref[0] - P[:, 0].min())
    if m == 2:
        return _hv_2d(P, ref)
    P = P[_front_nd(P)]
    P = P[np.argsort(P[:, -1], kind="stable")]
    z = np.append(P[:, -1], ref[-1])
    total = 0.0
    for i in range(len(P)):
        depth = z[i + 1] - z[i]
        if depth > 0:
            total += depth * _hv_slicing(P[: i + 1, :-1], ref[:-1])
    return total


def _prepare(Y: Any, reference: Any, directions: Sequence[Any] | None, feasible: Any) -> tuple[np.ndarray, np.ndarray]:
    S = to_minimization(Y, directions)
    m = S.shape[1]
    ref = np.asarray(reference, dtype=float).reshape(-1)
    if len(ref) != m:
        raise BayestuneError(f"the reference point has {len(ref)} coordinates for {m} objectives")
    if not np.all(np.isfinite(ref)):
        raise BayestuneError(f"the reference point must be finite, but got {ref.tolist()}")
    ref = ref * signs(directions, m)
    keep = np.all(np.isfinite(S), axis=1) & np.all(S < ref, axis=1)
    if feasible is not None:
        keep &= np.asarray(feasible, dtype=bool).reshape(-1)
    return S[keep], ref


def hypervolume(
    Y: Any,
    reference: Any,
    directions: Sequence[Any] | None = None,
    *,
    feasible: Any = None,
    method: str = "auto",
    n_samples: int = MC_SAMPLES,
    seed: int = 0,
) -> float:
    """Hypervolume dominated by the (feasible) rows of ``Y`` and bounded by ``reference``.

    ``method``: ``"exact"``, ``"mc"`` (Monte Carlo with ``n_samples`` uniform samples) or
    ``"auto"`` (exact unless ``n^(M-2)`` exceeds :data:`EXACT_WORK_LIMIT`).
    """
    if method not in ("auto", "exact", "mc"):
        raise BayestuneError(f"hypervolume method must be one of ['auto', 'exact', 'mc'], but got {method!r}")
    P, ref = _prepare(Y, reference, directions, feasible)
    if not len(P):
        return 0.0
    m = P.shape[1]
    if m > 2 and method != "exact":
        P = P[_front_nd(P)]
    if method == "mc" or (method == "auto" and m > 3 and float(len(P)) ** (m - 2) > EXACT_WORK_LIMIT):
        return _hv_mc(P, ref, n_samples, seed)[0]
    return _hv_slicing(P, ref)


def _hv_mc(P: np.ndarray, ref: np.ndarray, n_samples: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    low = P.min(axis=0)
    box = float(np.prod(ref - low))
    hits, done = 0, 0
    chunk = max(1, min(n_samples, 2_000_000 // max(1, len(P) * P.shape[1])))
    while done < n_samples:
        k = min(chunk, n_samples - done)
        U = low + rng.random((k, P.shape[1])) * (ref - low)
        dominated = np.zeros(k, dtype=bool)
        for p in P:
            dominated |= np.all(p <= U, axis=1)
        hits += int(dominated.sum())
        done += k
    frac = hits / n_samples
    return box * frac, box * float(np.sqrt(frac * (1.0 - frac) / n_samples))


def hypervolume_mc(
    Y: Any,
    reference: Any,
    directions: Sequence[Any] | None = None,
    *,
    feasible: Any = None,
    n_samples: int = MC_SAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Monte-Carlo hypervolume estimate and its standard error."""
    P, ref = _prepare(Y, reference, directions, feasible)
    if not len(P):
        return 0.0, 0.0
    return _hv_mc(P, ref, n_samples, seed)


def hypervolume_trace(
    Y: Any, reference: Any, directions: Sequence[Any] | None = None, *, feasible: Any = None
) -> np.ndarray:
    """Hypervolume of the first ``k`` rows for k = 1..N (evaluation order): a convergence curve."""
    S = to_minimization(Y, directions)
    n = len(S)
    ok = np.all(np.isfinite(S), axis=1)
    if feasible is not None:
        ok &= np.asarray(feasible, dtype=bool).reshape(-1)
    ref_signed = np.asarray(reference, dtype=float).reshape(-1) * signs(directions, S.shape[1])
    out = np.zeros(n)
    front = np.empty((0, S.shape[1]))
    current = 0.0
    for k in range(n):
        y = S[k]
        if ok[k] and np.all(y < ref_signed) and not np.any(np.all(front <= y, axis=1)):
            front = np.vstack([front, y])
            front = front[pareto_mask(front)]
            current = hypervolume(front, ref_signed)
        out[k] = current
    return out
