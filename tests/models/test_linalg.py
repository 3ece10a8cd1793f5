"""Cholesky with jitter and the inverse from the factor: the GP's dense linear algebra."""

import numpy as np
import pytest

from bayestune.models.linalg import CholeskyError, cho_inverse, cho_solve, cholesky


def spd(n: int, seed: int = 0) -> np.ndarray:
    A = np.random.default_rng(seed).normal(size=(n, n))
    return A @ A.T + n * np.eye(n)


def test_factor_solve_and_inverse_agree_with_numpy():
    K = spd(7)
    L, jitter = cholesky(K)
    assert jitter == 0.0
    np.testing.assert_allclose(L @ L.T, K, atol=1e-10)
    b = np.arange(7.0)
    np.testing.assert_allclose(cho_solve(L, b), np.linalg.solve(K, b), atol=1e-10)
    inverse = np.linalg.inv(K)
    np.testing.assert_allclose(cho_inverse(L), inverse, atol=1e-10)
    lower = cho_inverse(L, lower_only=True)
    np.testing.assert_allclose(np.tril(lower), np.tril(inverse), atol=1e-10)


def test_only_the_lower_triangle_is_read():
    K = spd(6, seed=1)
    garbage = K.copy()
    garbage[np.triu_indices(6, k=1)] = np.nan
    np.testing.assert_array_equal(cholesky(garbage)[0], cholesky(K)[0])


def test_singular_matrices_get_jitter_and_indefinite_ones_fail():
    ones = np.ones((4, 4))  # duplicate rows, no noise
    L, jitter = cholesky(ones)
    assert jitter > 0 and np.all(np.isfinite(L))
    with pytest.raises(CholeskyError, match="not positive definite"):
        cholesky(-np.eye(3))


def test_solve_lower_matches_scipy_bit_for_bit_and_may_overwrite():
    from scipy.linalg import solve_triangular

    from bayestune.models.linalg import solve_lower

    L, _ = cholesky(spd(9))
    B = np.random.default_rng(1).normal(size=(30, 9))
    expected = solve_triangular(L, B.T, lower=True, check_finite=False)
    np.testing.assert_array_equal(solve_lower(L, B.T), expected)
    np.testing.assert_array_equal(solve_lower(np.ascontiguousarray(L), B.T), expected)
    np.testing.assert_array_equal(solve_lower(L, B.copy().T, overwrite_b=True), expected)


def test_blas_thread_cap_applies_and_is_lifted():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from bayestune.models.linalg import limit_blas_threads

    before = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    for _ in range(2):  # the second time from the kept library scan
        with limit_blas_threads(1):
            assert all(i["num_threads"] == 1 for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas")
        assert [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"] == before
