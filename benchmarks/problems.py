"""Benchmark problems: a search space, a black box and (where known) the global optimum.

Four kinds:

``gpu``
    The Kernel Tuner cache files in ``<repo>/../shared/data/gpu-kernels`` (override with the
    environment variable ``BAYESTUNE_DATA``: that directory or its parent), replayed through
    :func:`bayestune.evaluators.replay.load_kernel_tuner_cache` with the T1 definition of the
    kernel. Objective ``time`` (ms); the optimum is the best recorded time of the known-feasible
    set. Names are the file stems, e.g. ``gemm_RTX_3090``.
``synthetic``
    Closed-form functions on mixed spaces (formulas below); all are discrete except
    ``hartmann6_real``, and their optimum is found by enumerating every feasible configuration
    (once per process, cached). Values are made positive so that best/optimum is meaningful.
``halide``
    Live Halide schedules JIT-compiled and timed on this CPU: see
    :mod:`benchmarks.halide_problems`. Optimum unknown (``None``): reports use the best value
    any strategy found for that problem in the same results file.
``multiobjective``
    Problems with several objectives, scored by hypervolume: see
    :mod:`benchmarks.multiobjective_problems`. Not in the group ``all``, which lists the
    problems every single-objective strategy can run.

Synthetic formulas (``a_i = log2 p_i``; every value is to be minimised):

``branin_mixed``
    Branin ``B(x1, x2) = (x2 - 5.1/(4 pi^2) x1^2 + 5/pi x1 - 6)^2 + 10 (1 - 1/(8 pi)) cos(x1) + 10``
    with ``x1`` an ordinal grid of 61 points on [-5, 10] (step 0.25), ``x2`` an integer in
    [0, 15]; a categorical ``variant`` scales and offsets it (``fast``: B, ``medium``:
    0.8 B + 1, ``slow``: 1.3 B + 0.2 — ``medium`` wins where B is large, so the categorical
    interacts with the rest); a 4-element permutation ``order`` adds 0.25 x its Kendall
    distance (0..6 discordant pairs) to the order ``(2, 0, 3, 1)``. 70,272 configurations.
``hartmann6`` / ``hartmann6_real``
    ``H6(x) + 4.322368011415515`` (``H6`` the standard Hartmann 6-D function with its usual
    A, P, alpha; the shift puts the continuous minimum, -3.322368..., at 1.0), on ordinals
    {0, 0.1, ..., 1} (1,771,561 configurations) or on reals in [0, 1] (optimum 1.0, analytic).
``forrester_2d`` (our 2-D extension; documented here because there is no standard one)
    ``g(x1) + g(x2 / 100) + 13.04148 + (7 if variant == "low" else 0)`` with ``x1`` an ordinal
    grid of 101 points on [0, 1], ``x2`` an integer in [0, 100], and ``g`` the Forrester
    function ``f(x) = (6x - 2)^2 sin(12x - 4)`` for ``variant = "high"`` or its classic
    low-fidelity version ``0.5 f(x) + 10 (x - 0.5) - 5`` for ``"low"``. The two variants have
    their minima far apart (x ~ 0.76 vs x ~ 0), the "low" one a deceptive near-optimum.
    20,402 configurations.
``taco_like``
    A TACO-style schedule of a tiled ``C[i,j] += A[i,k] B[k,j]`` (I = J = 2048, K = 64): a
    5-loop permutation ``order`` of (i0, i1, j0, j1, k), split factors ``split_i``/``split_j``
    (powers of two up to 256), ``unroll`` (1..8), OpenMP ``chunk`` (1..128) and ``omp``
    (static/dynamic). Known constraints: ``split_i * split_j <= 4096``, ``unroll <= split_j``,
    inner split loops inside their outer ones (``order[1] > order[0]``, ``order[3] > order[2]``).
    Hidden constraints: a parallel ``k`` loop is a race (failure ``runtime``), and
    ``unroll * split_j > 512`` exceeds the code-size limit (failure ``compile``). The cost model
    (see :func:`taco_cost`) mimics locality: stride of the innermost loop, SIMD width reached,
    unrolling, the tile's working set against a 256 KiB cache, loop overhead of tiny tiles,
    a reduction loop placed outermost, load balance of the parallel outermost loop over 32
    threads with static or dynamic chunks, plus a deterministic +-3 % ruggedness term.
``sparse_chain`` (BaCO's p1..p5 Chain-of-Trees example, scaled up)
    Ten ordinals ``p1..p10`` in {1, 2, ..., 64}; constraints ``p1 >= p2 >= p3 >= p4 >= p5``
    and ``p7 >= p6``, ``p8 >= 2 p7``, ``p9 >= p8``, ``p10 >= 2 p9``: 58,212 feasible of
    7^10 = 282,475,249 (0.02 %). Value ``1 + 0.1 sum_i w_i (a_i - t_i)^2 + 0.05 (a_1 - a_6)^2``
    with targets ``t = (3, 5, 2, 4, 1, 4, 2, 3, 5, 2)`` that violate the constraints, so the
    optimum lies on the constraint boundary.

Stated optima (by enumeration; see ``STATED_OPTIMA``): branin_mixed 0.491110 at x1 = 3.25,
x2 = 2, fast, order (2, 0, 3, 1); hartmann6 1.100807 at (0.2, 0.2, 0.5, 0.3, 0.3, 0.7);
hartmann6_real 1.0 (analytic); forrester_2d 1.008147 at x1 = 0.76, x2 = 76, high; taco_like
0.341977 at order (1, 2, 0, 4, 3) (j0 outermost and parallel, j1 innermost), split_i = 128,
split_j = 32, unroll = 8, chunk = 1, static; sparse_chain 2.83 at p = (8, 8, 8, 8, 2, 4, 4, 8,
8, 16).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bayestune.evaluators.replay import load_kernel_tuner_cache
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real, Space
from bayestune.trial import Result
from benchmarks.halide_problems import HALIDE_PROBLEMS, build_halide_problem
from benchmarks.multiobjective_problems import MULTIOBJECTIVE_PROBLEMS, build_multiobjective_problem
from benchmarks.problem import Problem

KINDS = ("gpu", "synthetic", "halide", "multiobjective")
#: The groups ``all`` stands for: every problem a single-objective strategy can run.
SINGLE_OBJECTIVE_KINDS = ("gpu", "synthetic", "halide")
REPO = Path(__file__).resolve().parents[1]

#: Kernel name (file-name prefix) -> T1 definition in ``<data>/t1/``.
T1_FILES = {
    "convolution": "convolution_milo.json",
    "convolution-v2": "convolution-v2.json",
    "dedispersion": "dedispersion_milo.json",
    "gemm": "gemm_milo.json",
    "pnpoly": "pnpoly.json",
}


# ---------------------------------------------------------------------------------------
# GPU replay problems
# ---------------------------------------------------------------------------------------
def data_dir() -> Path:
    """The directory holding the GPU cache files (it may not exist)."""
    env = os.environ.get("BAYESTUNE_DATA")
    if env:
        base = Path(env)
        return base / "gpu-kernels" if (base / "gpu-kernels").is_dir() else base
    return REPO.parent / "shared" / "data" / "gpu-kernels"


def gpu_problem_names() -> list[str]:
    d = data_dir()
    if not d.is_dir():
        return []
    return sorted(p.name[: -len(".json.gz")] for p in d.glob("*.json.gz"))


def t1_file_for(name: str) -> Path | None:
    kernel = name.split("_")[0]
    t1 = T1_FILES.get(kernel)
    path = data_dir() / "t1" / t1 if t1 else None
    return path if path is not None and path.is_file() else None


def build_gpu_problem(name: str) -> Problem:
    path = data_dir() / f"{name}.json.gz"
    replay = load_kernel_tuner_cache(path, t1_path=t1_file_for(name), name=name)
    evaluator = replay.evaluator()
    best_key = min(
        (k for k, r in replay.records.items() if _recorded_time(r) is not None),
        key=lambda k: _recorded_time(replay.records[k]),
    )
    return Problem(
        name=name,
        kind="gpu",
        space=replay.space,
        objectives=[replay.objective],
        evaluate=evaluator.evaluate,
        optimum=replay.optimum,
        optimum_source="cache",
        description=f"Kernel Tuner cache {path.name} replayed ({replay.n_known_feasible} known-feasible, "
        f"{replay.n_failing} failing; constraints from {replay.constraint_source})",
        optimum_config=dict(zip(replay.space.names, best_key)),
        metadata={
            "file": str(path),
            "n_known_feasible": replay.n_known_feasible,
            "n_failing": replay.n_failing,
            "constraint_source": replay.constraint_source,
            "constants": replay.constants,
            **replay.metadata,
        },
    )


def _recorded_time(record: Mapping[str, Any]) -> float | None:
    t = record.get("time")
    if isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and t < 1e20:
        return float(t)
    return None


# ---------------------------------------------------------------------------------------
# Synthetic problems: vectorised formulas over constraint-style columns
# ---------------------------------------------------------------------------------------
Columns = Mapping[str, np.ndarray]


@dataclass
class Synthetic:
    """A closed-form problem: ``value(cols)`` and optional ``failure(cols)`` (an array of
    failure kinds, "" where the configuration works), both vectorised over rows."""

    name: str
    space_factory: Callable[[], Space]
    value: Callable[[Columns], np.ndarray]
    failure: Callable[[Columns], np.ndarray] | None = None
    description: str = ""
    analytic_optimum: float | None = None
    enumeration_limit: int = 2_000_000


def branin(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    b, c, r, s, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 6.0, 10.0, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * np.cos(x1) + s


def kendall_distance(positions: np.ndarray, target: tuple[int, ...]) -> np.ndarray:
    """Discordant pairs between each row of a position matrix and the target positions."""
    p = np.asarray(positions, dtype=np.int64).reshape(len(positions), -1)
    t = np.asarray(target)
    n = p.shape[1]
    d = np.zeros(len(p), dtype=np.int64)
    for i in range(n):
        for j in range(i + 1, n):
            d += (p[:, i] - p[:, j]) * (t[i] - t[j]) < 0
    return d


BRANIN_VARIANTS = {"fast": (1.0, 0.0), "medium": (0.8, 1.0), "slow": (1.3, 0.2)}
BRANIN_TARGET_ORDER = (2, 0, 3, 1)


def _branin_space() -> Space:
    return Space(
        [
            Ordinal("x1", [float(v) for v in np.round(np.linspace(-5.0, 10.0, 61), 4)]),
            Integer("x2", 0, 15),
            Categorical("variant", list(BRANIN_VARIANTS)),
            Permutation("order", 4),
        ]
    )


def _branin_value(cols: Columns) -> np.ndarray:
    variant = np.asarray(cols["variant"]).astype(str)
    scale = np.select([variant == k for k in BRANIN_VARIANTS], [v[0] for v in BRANIN_VARIANTS.values()])
    offset = np.select([variant == k for k in BRANIN_VARIANTS], [v[1] for v in BRANIN_VARIANTS.values()])
    base = branin(np.asarray(cols["x1"], float), np.asarray(cols["x2"], float))
    return scale * base + offset + 0.25 * kendall_distance(cols["order"], BRANIN_TARGET_ORDER)


HARTMANN_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
HARTMANN_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
HARTMANN_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)
HARTMANN_MIN = -3.322368011415515
HARTMANN_SHIFT = -HARTMANN_MIN + 1.0


def hartmann6(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=float).reshape(-1, 6)
    inner = np.einsum("ij,nij->ni", HARTMANN_A, (X[:, None, :] - HARTMANN_P[None]) ** 2)
    return -np.exp(-inner) @ HARTMANN_ALPHA


def _hartmann_space(real: bool) -> Space:
    grid = [round(0.1 * i, 1) for i in range(11)]
    return Space([Real(f"x{i}", 0.0, 1.0) if real else Ordinal(f"x{i}", grid) for i in range(1, 7)])


def _hartmann_value(cols: Columns) -> np.ndarray:
    X = np.column_stack([np.asarray(cols[f"x{i}"], float) for i in range(1, 7)])
    return hartmann6(X) + HARTMANN_SHIFT


def forrester(x: np.ndarray) -> np.ndarray:
    return (6 * x - 2) ** 2 * np.sin(12 * x - 4)


FORRESTER_SHIFT = 13.04148


def _forrester_space() -> Space:
    return Space(
        [
            Ordinal("x1", [round(0.01 * i, 2) for i in range(101)]),
            Integer("x2", 0, 100),
            Categorical("variant", ["high", "low"]),
        ]
    )


def _forrester_value(cols: Columns) -> np.ndarray:
    x1 = np.asarray(cols["x1"], float)
    x2 = np.asarray(cols["x2"], float) / 100.0
    low = np.asarray(cols["variant"]).astype(str) == "low"

    def g(x: np.ndarray) -> np.ndarray:
        hi = forrester(x)
        return np.where(low, 0.5 * hi + 10 * (x - 0.5) - 5, hi)

    return g(x1) + g(x2) + FORRESTER_SHIFT + np.where(low, 7.0, 0.0)


# TACO-like schedule ---------------------------------------------------------------------
TACO_LOOPS = ("i0", "i1", "j0", "j1", "k")
TACO_I = TACO_J = 2048
TACO_K = 64
TACO_THREADS = 32
TACO_CACHE_BYTES = 256 * 1024
POW2_256 = [2**i for i in range(9)]


def _taco_space() -> Space:
    return Space(
        [
            Permutation("order", 5),
            Ordinal("split_i", POW2_256, log=True),
            Ordinal("split_j", POW2_256, log=True),
            Ordinal("unroll", [1, 2, 4, 8], log=True),
            Ordinal("chunk", [2**i for i in range(8)], log=True),
            Categorical("omp", ["static", "dynamic"]),
        ],
        ["split_i * split_j <= 4096", "unroll <= split_j", "order[1] > order[0]", "order[3] > order[2]"],
    )


def _element_at(positions: np.ndarray, position: int) -> np.ndarray:
    """Loop index (0..4) at a given position for every row."""
    return np.argmax(np.asarray(positions) == position, axis=1)


def taco_cost(cols: Columns) -> np.ndarray:
    """Modelled runtime (ms) of the TACO-like schedule; see the module docstring."""
    pos = np.asarray(cols["order"], dtype=np.int64)
    si = np.asarray(cols["split_i"], float)
    sj = np.asarray(cols["split_j"], float)
    unroll = np.asarray(cols["unroll"], float)
    chunk = np.asarray(cols["chunk"], float)
    dynamic = np.asarray(cols["omp"]).astype(str) == "dynamic"
    inner = _element_at(pos, 4)
    outer = _element_at(pos, 0)
    # stride of the innermost loop (unit stride on B and C for j1)
    stride = np.array([5.0, 3.0, 4.0, 1.0, 1.6])[inner]
    # SIMD: only a unit-stride innermost j1 vectorises, up to 8 lanes
    simd = np.where(inner == 3, 1.0 / (0.25 + 0.75 * np.minimum(sj, 8) / 8), 4.0)
    # unrolling helps innermost j1/k a little, bloats the others
    lu = np.log2(unroll)
    unroll_f = np.where((inner == 3) | (inner == 4), 1.0 - 0.06 * lu, 1.0 + 0.05 * lu)
    # working set of one (i1, j1) tile with its k panel
    ws = 4.0 * (si * TACO_K + TACO_K * sj + si * sj)
    cache = 1.0 + 0.6 * np.maximum(0.0, np.log2(ws / TACO_CACHE_BYTES))
    overhead = 1.0 + 0.6 / si + 0.6 / sj
    # a reduction loop outside the tile loops re-reads the C tile every time
    k_pos = pos[:, 4]
    k_pen = 1.0 + 0.12 * np.maximum(0, 3 - k_pos)
    # the outermost loop runs in parallel over 32 threads
    extent = np.select(
        [outer == 0, outer == 1, outer == 2, outer == 3, outer == 4],
        [TACO_I / si, si, TACO_J / sj, sj, np.full_like(si, TACO_K)],
    )
    chunks = np.ceil(extent / chunk)
    rounds = np.ceil(chunks / TACO_THREADS)
    static_eff = chunks / (rounds * TACO_THREADS)
    dyn_eff = np.minimum(1.0, chunks / TACO_THREADS) / (1.0 + 0.002 * chunks / TACO_THREADS)
    eff = np.maximum(np.where(dynamic, dyn_eff, static_eff), 1.0 / TACO_THREADS)
    serial_ms = 2.0 * TACO_I * TACO_J * TACO_K / 1e9 * 25.0  # ~ 25 ms/GFLOP scalar
    raw = np.column_stack([pos, np.log2(si), np.log2(sj), lu, np.log2(chunk), dynamic])
    rugged = 1.0 + 0.03 * np.sin(raw @ np.array([1.3, 2.9, 0.7, 4.1, 3.3, 1.1, 2.3, 0.9, 1.7, 3.7]))
    return serial_ms * stride * simd * unroll_f * cache * overhead * k_pen * rugged / (eff * TACO_THREADS)


def taco_failures(cols: Columns) -> np.ndarray:
    pos = np.asarray(cols["order"], dtype=np.int64)
    outer = _element_at(pos, 0)
    unroll = np.asarray(cols["unroll"], float)
    sj = np.asarray(cols["split_j"], float)
    kinds = np.full(len(pos), "", dtype=object)
    kinds[unroll * sj > 512] = "compile"
    kinds[outer == 4] = "runtime"
    return kinds


# Sparse chain (BaCO p1..p5 scaled up) -----------------------------------------------------
SPARSE_TARGETS = np.array([3, 5, 2, 4, 1, 4, 2, 3, 5, 2], dtype=float)
SPARSE_WEIGHTS = np.array([1.0, 0.8, 1.2, 0.6, 1.0, 0.9, 1.1, 0.7, 1.0, 1.3])
SPARSE_CONSTRAINTS = [
    "p1 >= p2",
    "p2 >= p3",
    "p3 >= p4",
    "p4 >= p5",
    "p7 >= p6",
    "p8 >= 2 * p7",
    "p9 >= p8",
    "p10 >= 2 * p9",
]


def _sparse_space() -> Space:
    values = [2**i for i in range(7)]
    return Space([Ordinal(f"p{i}", values, log=True) for i in range(1, 11)], SPARSE_CONSTRAINTS)


def _sparse_value(cols: Columns) -> np.ndarray:
    a = np.column_stack([np.log2(np.asarray(cols[f"p{i}"], float)) for i in range(1, 11)])
    return 1.0 + 0.1 * ((a - SPARSE_TARGETS) ** 2 @ SPARSE_WEIGHTS) + 0.05 * (a[:, 0] - a[:, 5]) ** 2


SYNTHETIC: dict[str, Synthetic] = {
    s.name: s
    for s in [
        Synthetic(
            "branin_mixed",
            _branin_space,
            _branin_value,
            description="Branin on an ordinal x integer grid with a categorical variant and a permutation term",
        ),
        Synthetic(
            "hartmann6",
            lambda: _hartmann_space(False),
            _hartmann_value,
            description="Hartmann-6 (+4.3224) on ordinals {0, 0.1, ..., 1}",
        ),
        Synthetic(
            "hartmann6_real",
            lambda: _hartmann_space(True),
            _hartmann_value,
            description="Hartmann-6 (+4.3224) on reals in [0, 1]",
            analytic_optimum=1.0,
        ),
        Synthetic(
            "forrester_2d",
            _forrester_space,
            _forrester_value,
            description="2-D Forrester with a high/low-fidelity categorical (our definition)",
        ),
        Synthetic(
            "taco_like",
            _taco_space,
            taco_cost,
            taco_failures,
            description="TACO-like 5-loop permutation + tiling cost model with hidden failures",
        ),
        Synthetic(
            "sparse_chain",
            _sparse_space,
            _sparse_value,
            description="10 chained powers-of-two ordinals, 0.02 % feasible (BaCO p1..p5 scaled up)",
        ),
    ]
}


def _iter_feasible(space: Space, limit: int, chunk: int = 200_000):
    """Feasible raw rows in chunks: enumerated by the Chain-of-Trees, or (for an unconstrained
    grid too large to build at once) by slicing the Cartesian product of the parameter grids."""
    count = space.count_feasible()
    if count is None or count > limit:
        raise ValueError(f"{space!r} has {count} feasible configurations; cannot enumerate (limit {limit})")
    if space.constraints or count <= chunk:
        yield space.enumerate(limit=limit)
        return
    grids = [p.grid() for p in space.parameters]
    sizes = [len(g) for g in grids]
    for start in range(0, count, chunk):
        flat = np.arange(start, min(count, start + chunk))
        X = np.empty((len(flat), space.width))
        rem = flat
        for p, g, size in reversed(list(zip(space.parameters, grids, sizes))):
            X[:, space.slices[p.name]] = g[rem % size]
            rem = rem // size
        yield X


@functools.cache
def enumerated_optimum(name: str) -> tuple[float, dict[str, Any], int]:
    """(minimum value, its configuration, number of working configurations) by enumeration."""
    syn = SYNTHETIC[name]
    space = syn.space_factory()
    best, best_row, n_ok = math.inf, None, 0
    for X in _iter_feasible(space, syn.enumeration_limit):
        cols = space.columns(X)
        values = np.asarray(syn.value(cols), dtype=float)
        if syn.failure is not None:
            values = np.where(syn.failure(cols) == "", values, np.inf)
        n_ok += int(np.isfinite(values).sum())
        i = int(np.argmin(values))
        if values[i] < best:
            best, best_row = float(values[i]), X[i].copy()
    return best, space.to_config(best_row), n_ok


def build_synthetic_problem(name: str) -> Problem:
    syn = SYNTHETIC[name]
    space = syn.space_factory()

    def evaluate(config: Mapping[str, Any]) -> Result:
        try:
            X = space.to_matrix([config])
        except Exception as exc:
            return Result.failure(f"not a configuration of {name}: {exc}", "invalid")
        if not space.is_feasible(X)[0]:
            return Result.failure("violates a known constraint", "invalid")
        cols = space.columns(X)
        if syn.failure is not None:
            kind = str(syn.failure(cols)[0])
            if kind:
                return Result.failure(f"{name}: modelled {kind} failure", kind)
        return Result(values={"value": float(syn.value(cols)[0])})

    if syn.analytic_optimum is not None:
        optimum, source, config = syn.analytic_optimum, "analytic", None
    else:
        optimum, config, _ = enumerated_optimum(name)
        source = "enumeration"
    return Problem(
        name=name,
        kind="synthetic",
        space=space,
        objectives=["value"],
        evaluate=evaluate,
        optimum=optimum,
        optimum_source=source,
        description=syn.description,
        optimum_config=config,
    )


#: The optima stated in the docs (found once by enumeration; the tests check that they still
#: are the enumerated minimum and that evaluating the configuration gives the value).
STATED_OPTIMA: dict[str, tuple[float, dict[str, Any]]] = {
    "branin_mixed": (0.49110954914123894, {"x1": 3.25, "x2": 2, "variant": "fast", "order": (2, 0, 3, 1)}),
    "hartmann6": (1.1008071112379452, {"x1": 0.2, "x2": 0.2, "x3": 0.5, "x4": 0.3, "x5": 0.3, "x6": 0.7}),
    "forrester_2d": (1.0081466744149825, {"x1": 0.76, "x2": 76, "variant": "high"}),
    "taco_like": (
        0.3419771982335948,
        {"order": (1, 2, 0, 4, 3), "split_i": 128, "split_j": 32, "unroll": 8, "chunk": 1, "omp": "static"},
    ),
    "sparse_chain": (
        2.83,
        {"p1": 8, "p2": 8, "p3": 8, "p4": 8, "p5": 2, "p6": 4, "p7": 4, "p8": 8, "p9": 8, "p10": 16},
    ),
}


# ---------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------
def problem_names(kind: str | None = None) -> list[str]:
    """Every problem available here (GPU ones only when the data directory exists)."""
    names = {
        "gpu": gpu_problem_names(),
        "synthetic": list(SYNTHETIC),
        "halide": list(HALIDE_PROBLEMS),
        "multiobjective": list(MULTIOBJECTIVE_PROBLEMS),
    }
    if kind is None:
        return [n for k in KINDS for n in names[k]]
    return list(names[kind])


def problem_kind(name: str) -> str:
    if name in SYNTHETIC:
        return "synthetic"
    if name in HALIDE_PROBLEMS:
        return "halide"
    if name in MULTIOBJECTIVE_PROBLEMS:
        return "multiobjective"
    return "gpu"


def timing_sensitive(name: str) -> bool:
    """Whether ``name`` is measured live (known without building the problem)."""
    return name in HALIDE_PROBLEMS or MULTIOBJECTIVE_PROBLEMS.get(name, (None, False))[1]


def resolve_problems(spec: str) -> list[str]:
    """``gemm_RTX_3090,branin_mixed`` or a group (``gpu``, ``synthetic``, ``halide``,
    ``multiobjective``, or ``all`` for the single-objective ones)."""
    out: list[str] = []
    known = problem_names()
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item == "all":
            chosen = [n for kind in SINGLE_OBJECTIVE_KINDS for n in problem_names(kind)]
        elif item in KINDS:
            chosen = problem_names(item)
            if not chosen and item == "gpu":
                raise ValueError(f"no GPU cache files in {data_dir()} (set BAYESTUNE_DATA)")
        elif item in known:
            chosen = [item]
        else:
            raise ValueError(f"unknown problem {item!r}; known: {known} or a group {list(KINDS) + ['all']}")
        out.extend(c for c in chosen if c not in out)
    return out


_CACHE: dict[str, Problem] = {}


def get_problem(name: str) -> Problem:
    """The problem called ``name``, built once per process."""
    if name not in _CACHE:
        if name in SYNTHETIC:
            _CACHE[name] = build_synthetic_problem(name)
        elif name in HALIDE_PROBLEMS:
            _CACHE[name] = build_halide_problem(name)
        elif name in MULTIOBJECTIVE_PROBLEMS:
            _CACHE[name] = build_multiobjective_problem(name)
        elif name in gpu_problem_names():
            _CACHE[name] = build_gpu_problem(name)
        else:
            raise ValueError(f"unknown problem {name!r}; known: {problem_names()}")
    return _CACHE[name]


def close_problems() -> None:
    for p in _CACHE.values():
        if p.close is not None:
            p.close()
    _CACHE.clear()
