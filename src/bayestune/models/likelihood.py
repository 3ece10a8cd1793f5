"""What a GP's hyperparameter search climbs: the log marginal likelihood of the latent targets,
the Gamma prior on the length-scales (as a density of ``log ℓ``), and the packed training
distances every evaluation reads. The model and why it is fitted this way:
:mod:`bayestune.models.gp`, which samples, screens and polishes θ against these functions.

θ = (log ℓ_1, …, log ℓ_P, log σ², log σ_n²); ``n_blocks`` is P.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from bayestune.models.kernels import matern52, matern52_with_derivative
from bayestune.models.linalg import CholeskyError, cho_inverse, cho_solve, cholesky

LOG_2PI = math.log(2.0 * math.pi)
#: Objective value returned for θ whose kernel matrix cannot be factorised at all.
FAILED_OBJECTIVE = 1e25


class TrainingData:
    """What every likelihood evaluation of one fit reads: the per-block squared distances of the
    lower triangle (diagonal included) packed into ``(P, N(N+1)/2)`` — K is symmetric and the
    Cholesky factorisation reads one triangle, so half the kernel entries are never computed —
    the latent targets and the measured per-point noise in latent units (``None``: homoscedastic).
    """

    def __init__(self, D2_packed: np.ndarray, y: np.ndarray, noise: np.ndarray | None) -> None:
        self.D2 = np.ascontiguousarray(D2_packed)
        self.y, self.noise = y, noise
        n = y.shape[0]
        self.rows, self.cols = np.tril_indices(n)
        self.flat = self.rows * n + self.cols  # position of each packed entry in a flattened n x n matrix
        #: Weight of each packed entry in a sum over the full symmetric matrix.
        self.weight = np.where(self.rows == self.cols, 1.0, 2.0)

    @classmethod
    def from_full(cls, D2: np.ndarray, y: np.ndarray, noise: np.ndarray | None) -> TrainingData:
        rows, cols = np.tril_indices(y.shape[0])
        return cls(D2[:, rows, cols], y, noise)

    def subset(self, rows: np.ndarray) -> TrainingData:
        """The data of the (sorted) ``rows`` only."""
        r, c = np.tril_indices(len(rows))
        a, b = rows[r], rows[c]  # a >= b because rows are sorted
        return TrainingData(
            self.D2[:, a * (a + 1) // 2 + b], self.y[rows], None if self.noise is None else self.noise[rows]
        )

    def kernel_matrix(self, values: np.ndarray, diagonal: float) -> np.ndarray:
        """The symmetric matrix with the packed ``values`` in its lower triangle (the upper one is
        left at zero: LAPACK's lower Cholesky never reads it), plus ``diagonal`` and the noise."""
        n = self.y.shape[0]
        K = np.zeros((n, n))
        K.ravel()[self.flat] = values
        K.flat[:: n + 1] += diagonal
        if self.noise is not None:
            K.flat[:: n + 1] += self.noise
        return K


def unpack(theta: np.ndarray, n_blocks: int) -> tuple[np.ndarray, float, float]:
    """θ as length-scales, output scale σ² and nugget σ_n² (θ holds their logs)."""
    P = n_blocks
    return np.exp(theta[:P]), float(np.exp(theta[P])), float(np.exp(theta[P + 1]))


def log_prior(
    theta: np.ndarray, n_blocks: int, lengthscale_prior: tuple[float, float] | None
) -> tuple[float, np.ndarray]:
    """Log density of ``log ℓ`` under the Gamma prior on ℓ, and its gradient in θ.

    ``log p(log ℓ) = α log β − log Γ(α) + α log ℓ − β ℓ`` (Gamma density times the
    Jacobian ℓ). Only the length-scale entries of the gradient are non-zero.
    """
    grad = np.zeros_like(theta)
    if lengthscale_prior is None:
        return 0.0, grad
    a, b = lengthscale_prior
    P = n_blocks
    log_ls = theta[:P]
    ls = np.exp(log_ls)
    value = float(np.sum(a * math.log(b) - gammaln(a) + a * log_ls - b * ls))
    grad[:P] = a - b * ls
    return value, grad


def log_marginal_likelihood(
    theta: np.ndarray, data: TrainingData, n_blocks: int, eval_gradient: bool
) -> tuple[float, np.ndarray | None]:
    """Log marginal likelihood of ``data``'s latent targets under θ.

    The gradient is ``½ tr((ααᵀ − K⁻¹) ∂K/∂θ_i)`` with
    ``∂K/∂log ℓ_j = σ² h(r) ∘ D_j/ℓ_j²``, ``∂K/∂log σ² = K_f`` and
    ``∂K/∂log σ_n² = σ_n² I`` (see :func:`matern52_with_derivative` for ``h``). Measured
    per-point noise (heteroscedastic fits) is a constant on the diagonal: no θ-gradient.
    """
    ls, s2, noise = unpack(theta, n_blocks)
    y, n, P = data.y, data.y.shape[0], len(ls)
    inv_l2 = 1.0 / (ls * ls)
    r2 = inv_l2 @ data.D2
    if eval_gradient:
        g, h = matern52_with_derivative(r2)
    else:
        g, h = matern52(r2), None
    try:
        L, _ = cholesky(data.kernel_matrix(g * s2, noise))
    except CholeskyError:
        return -FAILED_OBJECTIVE, (np.zeros_like(theta) if eval_gradient else None)
    alpha = cho_solve(L, y)
    lml = -0.5 * float(y @ alpha) - float(np.sum(np.log(np.diag(L)))) - 0.5 * n * LOG_2PI
    if not eval_gradient:
        return lml, None
    K_inv = cho_inverse(L, lower_only=True)
    W = K_inv.ravel()[data.flat]  # packed ααᵀ − K⁻¹, each entry weighted by its count in the full matrix
    np.negative(W, out=W)
    W += alpha[data.rows] * alpha[data.cols]
    W *= data.weight
    grad = np.empty_like(theta)
    grad[P] = 0.5 * s2 * float(W @ g)
    grad[P + 1] = 0.5 * noise * (float(alpha @ alpha) - float(np.trace(K_inv)))
    h *= W  # in place: h becomes (ααᵀ − K⁻¹) ∘ h, the weight of every d_j²
    grad[:P] = (0.5 * s2) * (data.D2 @ h) * inv_l2
    return lml, grad


def neg_log_posterior(
    x: np.ndarray,
    template: np.ndarray,
    free: np.ndarray,
    data: TrainingData,
    n_blocks: int,
    lengthscale_prior: tuple[float, float] | None,
) -> tuple[float, np.ndarray]:
    """The minimised objective over the free entries of θ, with its gradient."""
    theta = template.copy()
    theta[free] = x
    lml, g = log_marginal_likelihood(theta, data, n_blocks, eval_gradient=True)
    lp, gp = log_prior(theta, n_blocks, lengthscale_prior)
    value = -(lml + lp)
    if not math.isfinite(value):
        return FAILED_OBJECTIVE, np.zeros(int(free.sum()))
    return value, -(g + gp)[free]
