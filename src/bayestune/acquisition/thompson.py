"""Thompson sampling over a candidate set: one joint draw of the GP posterior, its minimum.

Why: EI concentrates where the model already expects the optimum; a posterior draw instead
picks each candidate with the probability that it is the best, so unexplored regions whose
uncertainty admits a better value are tried in proportion to that chance. Used as the
exploration step of a stalled run (``bo``'s ``stall_action="thompson"``), where the model is
confidently wrong about the basin. The draw is joint over at most ``max_candidates`` rows (an
m x m posterior covariance and its Cholesky factor), sampled uniformly from the candidates.
"""

from __future__ import annotations

import numpy as np

from bayestune.models.gp import GaussianProcess
from bayestune.models.linalg import CholeskyError, cholesky

#: Rows in one joint posterior draw: the covariance is m x m (m = 1000: 8 MB; a whole pick, 100
#: training points, ~0.09 CPU s on this machine).
MAX_CANDIDATES = 1000


def thompson_pick(
    gp: GaussianProcess,
    F: np.ndarray,
    rng: np.random.Generator,
    *,
    weights: np.ndarray | None = None,
    max_candidates: int = MAX_CANDIDATES,
) -> int | None:
    """Index into ``F`` (encoded candidate rows) of the minimum of one posterior draw of the
    noise-free latent function; ``weights`` (e.g. P(feasible)) below 0.5 exclude a row.
    ``None`` when no candidate is left."""
    index = np.arange(len(F))
    if weights is not None:
        index = index[np.asarray(weights) >= 0.5]
    if not len(index):
        return None
    if len(index) > max_candidates:
        index = rng.choice(index, max_candidates, replace=False)
    mean, cov = gp.posterior_covariance(F[index])
    try:
        L, _ = cholesky(cov)  # escalating jitter for rows next to training points
    except CholeskyError:  # numerically singular: independent draws from the marginals
        draw = mean + np.sqrt(np.clip(np.diag(cov), 0.0, None)) * rng.standard_normal(len(index))
    else:
        draw = mean + L @ rng.standard_normal(len(index))
    return int(index[int(np.argmin(draw))])
