"""Quickstart black box: time a blocked 256x256 matrix multiply in numpy.

The schedule space has the shape of a real loop-nest tuning problem (tiles, unrolling,
a vectorization choice, a loop order), and every evaluation is a real measurement of the
schedule it describes, taking a few milliseconds:

* ``tile_x``, ``tile_y``: the rows and columns of the C block computed at a time;
* ``unroll``: how many 32-wide slices of the k loop one block product covers;
* ``vectorize``: the micro-kernel of a block product: ``blas`` (``np.matmul``), ``einsum``
  (numpy's own loops) or ``broadcast`` (elementwise products then a sum);
* ``loop_order``: a permutation of the block loops (i, j, k); ``loop_order[e]`` is the
  nesting depth of loop ``e`` (0 = outermost), so ``(2, 0, 1)`` runs j, then k, then i.

Use it in-process (``"blackbox": {"python": "blackbox.py:run"}``) or as a command,
``python blackbox.py 64 32 2 blas 0,1,2``, which prints ``runtime_ms: <value>``.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

N = 256  # matrix size
K_SLICE = 32  # k elements per unroll step
REPEATS = 3  # timed runs per evaluation; the fastest counts

_rng = np.random.default_rng(0)
A = _rng.standard_normal((N, N))
B = _rng.standard_normal((N, N))
REFERENCE = A @ B

KERNELS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "blas": np.matmul,
    "einsum": lambda a, b: np.einsum("ik,kj->ij", a, b),
    "broadcast": lambda a, b: (a[:, :, None] * b[None, :, :]).sum(axis=1),
}


def blocked_matmul(
    a: np.ndarray, b: np.ndarray, tile_x: int, tile_y: int, unroll: int, vectorize: str, loop_order: Sequence[int]
) -> np.ndarray:
    """``a @ b`` computed block by block in the given loop order."""
    n, depth = a.shape
    m = b.shape[1]
    tk = K_SLICE * unroll
    kernel = KERNELS[vectorize]
    steps = (range(0, n, tile_x), range(0, m, tile_y), range(0, depth, tk))
    nest = sorted(range(3), key=lambda loop: loop_order[loop])  # loops from outermost to innermost
    where = [nest.index(loop) for loop in range(3)]  # position of i, j, k in a nest tuple
    c = np.zeros((n, m))
    for point in itertools.product(*(steps[loop] for loop in nest)):
        i, j, k = point[where[0]], point[where[1]], point[where[2]]
        c[i : i + tile_x, j : j + tile_y] += kernel(a[i : i + tile_x, k : k + tk], b[k : k + tk, j : j + tile_y])
    return c


def run(config: Mapping[str, Any]) -> dict[str, float]:
    """Runtime in milliseconds of the schedule ``config`` (fastest of a few runs)."""
    args = (
        int(config["tile_x"]),
        int(config["tile_y"]),
        int(config["unroll"]),
        str(config["vectorize"]),
        tuple(config["loop_order"]),
    )
    c = blocked_matmul(A, B, *args)
    if not np.allclose(c, REFERENCE):
        raise ArithmeticError(f"schedule {dict(config)} computed a wrong product")
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        blocked_matmul(A, B, *args)
        best = min(best, time.perf_counter() - start)
    return {"runtime_ms": best * 1e3}


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit("usage: python blackbox.py TILE_X TILE_Y UNROLL VECTORIZE LOOP_ORDER   (e.g. 64 32 2 blas 0,1,2)")
    tile_x, tile_y, unroll, vectorize, order = sys.argv[1:]
    result = run(
        {
            "tile_x": tile_x,
            "tile_y": tile_y,
            "unroll": unroll,
            "vectorize": vectorize,
            "loop_order": [int(p) for p in order.split(",")],
        }
    )
    print(f"runtime_ms: {result['runtime_ms']:.4f}")
