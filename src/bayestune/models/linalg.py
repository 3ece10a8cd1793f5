"""Dense linear algebra of the Gaussian process: jittered Cholesky factorisation, solves
with the factor, and a cap on BLAS threads for the small matrices involved."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from scipy.linalg import lapack

#: Diagonal jitter tried, in units of the mean diagonal, when a Cholesky factorisation fails.
JITTERS = (0.0, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4)


class CholeskyError(np.linalg.LinAlgError):
    """The kernel matrix stayed indefinite even with the largest jitter."""


@contextmanager
def limit_blas_threads(n_threads: int | None) -> Iterator[None]:
    """Cap BLAS threads for the duration of a fit/predict (no-op for ``None``).

    The matrices here are small (N up to ~1000), where extra BLAS threads gain little,
    while an optimiser usually shares the machine with the compilers and benchmarks it
    tunes: oversubscribed OpenBLAS threads then spin and made fits 3-10x slower here.
    """
    if n_threads is None:
        yield
        return
    controller = _blas_controller()
    if controller is None:  # pragma: no cover - threadpoolctl comes with scikit-learn
        yield
        return
    with controller.limit(limits=n_threads, user_api="blas"):
        yield


_controller: Any = None
_modules_at_scan = -1


def _blas_controller() -> Any:
    """A threadpoolctl controller of the loaded BLAS libraries (``None`` without threadpoolctl).

    Finding the libraries walks every loaded shared object (~2 ms, once per suggestion before);
    the scan is kept and redone only when modules were imported since, which is how a new BLAS
    library would arrive.
    """
    global _controller, _modules_at_scan
    if _controller is None or len(sys.modules) != _modules_at_scan:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover
            return None
        _controller, _modules_at_scan = ThreadpoolController(), len(sys.modules)
    return _controller


def cholesky(K: np.ndarray) -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of ``K``, adding escalating diagonal jitter if needed.

    Returns the factor and the jitter that was added (0.0 when none was needed). Only
    duplicate (or near-duplicate) rows combined with a tiny noise make ``K`` numerically
    singular; the jitter then acts as extra noise of at most 1e-4 of the signal variance.
    Only the lower triangle of ``K`` is read, so callers may leave the upper one unfilled.
    """
    for rel in JITTERS:
        jitter = rel * float(np.mean(np.diag(K))) if rel else 0.0
        A = K if rel == 0.0 else K + jitter * np.eye(K.shape[0])
        L, info = lapack.dpotrf(A, lower=1, clean=1, overwrite_a=0)
        if info == 0:
            return L, jitter
    raise CholeskyError(f"kernel matrix not positive definite even with jitter {JITTERS[-1]:g} x mean diagonal")


def cho_solve(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    x, info = lapack.dpotrs(L, b, lower=1)
    if info != 0:  # pragma: no cover - dpotrs only fails on invalid arguments
        raise np.linalg.LinAlgError(f"dpotrs failed with info={info}")
    return x


def solve_lower(L: np.ndarray, B: np.ndarray, *, overwrite_b: bool = False) -> np.ndarray:
    """``L⁻¹ B`` for a lower triangular ``L``: LAPACK trtrs called as
    ``scipy.linalg.solve_triangular(L, B, lower=True, check_finite=False)`` calls it (same
    results), without that wrapper's per-call checks. ``overwrite_b`` lets a Fortran-ordered
    ``B`` (e.g. the transpose of a C-ordered matrix) hold the solution."""
    if L.flags.f_contiguous:
        x, info = lapack.dtrtrs(L, B, lower=1, overwrite_b=overwrite_b)
    else:  # trtrs wants Fortran order: solve the transposed (upper) system instead
        x, info = lapack.dtrtrs(L.T, B, lower=0, trans=1, overwrite_b=overwrite_b)
    if info != 0:
        raise np.linalg.LinAlgError(f"dtrtrs failed with info={info} (singular factor?)")
    return x


def cho_inverse(L: np.ndarray, *, lower_only: bool = False) -> np.ndarray:
    """``K⁻¹`` from the lower Cholesky factor.

    LAPACK potri fills the lower triangle and leaves the (zeroed) upper one alone, so the
    full inverse is that triangle plus its transpose minus the doubled diagonal;
    ``lower_only`` skips that step for callers that read the lower triangle only.
    """
    inv, info = lapack.dpotri(L, lower=1)
    if info != 0:  # pragma: no cover
        raise np.linalg.LinAlgError(f"dpotri failed with info={info}")
    if lower_only:
        return inv
    diag = inv.diagonal().copy()
    inv += inv.T
    inv.flat[:: inv.shape[0] + 1] -= diag
    return inv
