"""Mixed-type Matérn 5/2 kernel: per-type distances, PSD over all permutations, fast path."""

import itertools
import math

import numpy as np
import pytest

from bayestune.models.kernels import (
    FeatureBlock,
    MixedMatern52,
    block_sq_distances,
    blocks_for_parameters,
    matern52,
    matern52_with_derivative,
    scaled_sq_distances,
    sq_distance_stack,
)
from bayestune.space.parameters import Categorical, Integer, Permutation, Real

LENGTHSCALES = (0.1, 1.0, 5.0, 20.0)


@pytest.fixture(autouse=True)
def _single_blas_thread():
    """The eigendecompositions here are small; extra BLAS threads only add contention."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        yield


METRICS = ("spearman", "kendall", "hamming")


def all_permutations(n: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(n))), dtype=float)


def brute_force_d2(metric: str, a: np.ndarray, b: np.ndarray) -> float:
    """The normalised squared distance straight from the definitions in BaCO §4.1."""
    n = len(a)
    if metric == "spearman":
        return float(np.sum((a - b) ** 2)) / (n * (n * n - 1) / 3)
    if metric == "kendall":
        disc = sum(1 for i in range(n) for j in range(i + 1, n) if (a[i] - a[j]) * (b[i] - b[j]) < 0)
        return disc / (n * (n - 1) / 2)
    return float(np.sum(a != b)) / n


def min_eig_ratio(K: np.ndarray) -> float:
    return float(np.linalg.eigvalsh(K).min() / np.trace(K))


# ---- distances ------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", METRICS)
def test_permutation_distances_match_definitions(metric):
    perms = all_permutations(4)
    block = FeatureBlock("p", "permutation", 0, 4, metric)
    D2 = block_sq_distances(block, perms)
    expected = np.array([[brute_force_d2(metric, a, b) for b in perms] for a in perms])
    np.testing.assert_allclose(D2, expected, atol=1e-12)
    assert D2.min() == 0.0 and D2.max() == pytest.approx(1.0)


@pytest.mark.parametrize("metric", ["spearman", "kendall"])
def test_reversal_is_the_farthest_permutation(metric):
    n = 6
    block = FeatureBlock("p", "permutation", 0, n, metric)
    ident, rev = np.arange(n, dtype=float)[None], np.arange(n, dtype=float)[::-1][None]
    assert block_sq_distances(block, ident, rev)[0, 0] == pytest.approx(1.0)


def test_numeric_and_categorical_distances():
    F = np.array([[0.0, 2.0], [0.25, 2.0], [1.0, 0.0]])
    num = FeatureBlock("x", "numeric", 0)
    cat = FeatureBlock("c", "categorical", 1)
    np.testing.assert_allclose(block_sq_distances(num, F)[0], [0.0, 0.0625, 1.0])
    np.testing.assert_array_equal(block_sq_distances(cat, F)[0], [0.0, 0.0, 1.0])
    assert cat.metric == "hamming"


def mixed_blocks() -> list[FeatureBlock]:
    return [
        FeatureBlock("x", "numeric", 0),
        FeatureBlock("c", "categorical", 1),
        FeatureBlock("ps", "permutation", 2, 4, "spearman"),
        FeatureBlock("pk", "permutation", 6, 3, "kendall"),
        FeatureBlock("ph", "permutation", 9, 4, "hamming"),
    ]


def random_mixed(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.hstack(
        [
            rng.random((n, 1)),
            rng.integers(0, 3, (n, 1)),
            np.argsort(rng.random((n, 4)), axis=1),
            np.argsort(rng.random((n, 3)), axis=1),
            np.argsort(rng.random((n, 4)), axis=1),
        ]
    ).astype(float)


def test_embedding_fast_path_equals_per_block_sum():
    rng = np.random.default_rng(0)
    blocks = mixed_blocks()
    A, B = random_mixed(rng, 30), random_mixed(rng, 20)
    ls = np.array([0.3, 2.0, 0.7, 1.5, 4.0])
    stack = sq_distance_stack(blocks, A, B)
    expected = np.tensordot(1 / ls**2, stack, axes=1)
    np.testing.assert_allclose(scaled_sq_distances(blocks, A, B, ls), expected, atol=1e-12)
    # A category seen only in B must count as "different" from everything in A.
    B[0, 1] = 7
    stack = sq_distance_stack(blocks, A, B)
    expected = np.tensordot(1 / ls**2, stack, axes=1)
    np.testing.assert_allclose(scaled_sq_distances(blocks, A, B, ls), expected, atol=1e-12)


def test_matern_values_and_derivative():
    r2 = np.array([0.0, 0.04, 1.0, 9.0])
    r = np.sqrt(r2)
    expected = (1 + math.sqrt(5) * r + 5 * r2 / 3) * np.exp(-math.sqrt(5) * r)
    np.testing.assert_allclose(matern52(r2), expected)
    g, h = matern52_with_derivative(r2)
    np.testing.assert_allclose(g, expected)
    # dg/d(r²) = -h/2, checked by central differences away from 0.
    eps = 1e-6
    fd = (matern52(r2[1:] + eps) - matern52(r2[1:] - eps)) / (2 * eps)
    np.testing.assert_allclose(fd, -h[1:] / 2, rtol=1e-6)


# ---- positive semi-definiteness --------------------------------------------------------------


@pytest.mark.parametrize("n", [4, 5, 6])
@pytest.mark.parametrize("metric", METRICS)
def test_kernel_is_psd_over_all_permutations(n, metric):
    perms = all_permutations(n)
    kernel = MixedMatern52([FeatureBlock("p", "permutation", 0, n, metric)])
    for ell in LENGTHSCALES:
        K = kernel(perms, lengthscales=np.array([ell]))
        assert min_eig_ratio(K) >= -1e-8, (n, metric, ell)


@pytest.mark.parametrize("metric", METRICS)
def test_unsquarerooted_semimetric_is_not_psd(metric):
    """Negative control: using the normalised semimetric itself as d breaks PSD (DESIGN.md)."""
    perms = all_permutations(5)
    D2 = block_sq_distances(FeatureBlock("p", "permutation", 0, 5, metric), perms)
    worst = min(min_eig_ratio(matern52(D2**2 / ell**2)) for ell in LENGTHSCALES)
    assert worst < -1e-5


def test_mixed_kernel_is_psd_over_a_full_grid():
    perms = all_permutations(4)
    rows = [[x, c, *p, *q] for x in (0.0, 0.5, 1.0) for c in (0, 1, 2) for p in perms for q in all_permutations(3)[::2]]
    F = np.array(rows, dtype=float)
    blocks = [
        FeatureBlock("x", "numeric", 0),
        FeatureBlock("c", "categorical", 1),
        FeatureBlock("p", "permutation", 2, 4, "kendall"),
        FeatureBlock("q", "permutation", 6, 3, "hamming"),
    ]
    kernel = MixedMatern52(blocks)
    for ells in itertools.product(LENGTHSCALES, repeat=2):
        ls = np.array([ells[0], ells[1], ells[1], ells[0]])
        assert min_eig_ratio(kernel(F, lengthscales=ls, outputscale=2.0)) >= -1e-8, ls


# ---- validation -----------------------------------------------------------------------------


def test_block_validation_messages():
    with pytest.raises(ValueError, match="unknown kind"):
        FeatureBlock("a", "ordinalish", 0)
    with pytest.raises(ValueError, match="not allowed"):
        FeatureBlock("a", "numeric", 0, 1, "kendall")
    with pytest.raises(ValueError, match="width 1"):
        FeatureBlock("a", "categorical", 0, 2)
    assert FeatureBlock("p", "permutation", 0, 3).metric == "spearman"
    with pytest.raises(ValueError, match="overlap"):
        MixedMatern52([FeatureBlock("a", "numeric", 0), FeatureBlock("p", "permutation", 0, 3)])
    with pytest.raises(ValueError, match="unique"):
        MixedMatern52([FeatureBlock("a", "numeric", 0), FeatureBlock("a", "numeric", 1)])
    with pytest.raises(ValueError, match="positions 0..2"):
        block_sq_distances(FeatureBlock("p", "permutation", 0, 3), np.array([[0.0, 0.0, 1.0]]))
    with pytest.raises(ValueError, match="at least 3 columns"):
        MixedMatern52([FeatureBlock("p", "permutation", 0, 3)]).check_features(np.zeros((2, 2)))


def test_blocks_for_parameters_follow_unit_layout():
    params = [Real("a", 0, 1), Categorical("b", ["x", "y"]), Permutation("c", 4, metric="kendall"), Integer("d", 1, 8)]
    blocks = blocks_for_parameters(params)
    assert [(b.name, b.kind, b.start, b.width, b.metric) for b in blocks] == [
        ("a", "numeric", 0, 1, "euclidean"),
        ("b", "categorical", 1, 1, "hamming"),
        ("c", "permutation", 2, 4, "kendall"),
        ("d", "numeric", 6, 1, "euclidean"),
    ]


def test_scaled_distances_reuse_the_training_side_and_match_the_one_shot_function():
    from bayestune.models.kernels import ScaledDistances

    blocks = [
        FeatureBlock("x", "numeric", 0),
        FeatureBlock("c", "categorical", 1),
        FeatureBlock("p", "permutation", 2, 3, "kendall"),
    ]
    r = np.random.default_rng(0)
    B = np.column_stack([r.random(6), r.integers(0, 2, 6), np.tile([2.0, 0.0, 1.0], (6, 1))])
    A = np.column_stack([r.random(4), [0, 1, 2, 3], np.tile([0.0, 1.0, 2.0], (4, 1))])  # categories B never had
    ls = np.array([0.3, 2.0, 0.7])
    to_B = ScaledDistances(blocks, B, ls)
    for rows in (A, A[:2], A):  # narrower and wider one-hot layouts, then the first again from the cache
        np.testing.assert_array_equal(to_B(rows), scaled_sq_distances(blocks, rows, B, ls))
        expected = sum(sq_distance_stack(blocks, rows, B)[j] / ls[j] ** 2 for j in range(3))
        np.testing.assert_allclose(to_B(rows), expected, atol=1e-12)


def test_matern_in_place_gives_the_same_values():
    r2 = np.random.default_rng(1).random((5, 7)) * 4
    expected = matern52(r2)
    out = matern52(r2.copy(), in_place=True)
    np.testing.assert_array_equal(out, expected)
