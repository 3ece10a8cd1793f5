"""Each node's parents, chosen from NOTEARS' weights (BoGraph §3.1.2, the statistics after the
structure search): a BIC cut of the linear refit, a non-linear dependence test that adds what the
linear cut missed, and a leave-one-out GP likelihood that prunes what does not predict.

Kept apart from :mod:`bayestune.bograph.structure`, which runs NOTEARS and repairs the DAG: these
are per-node regressions that never see the acyclicity constraint.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import linalg, stats


def select_parents(X: np.ndarray, W: np.ndarray, min_weight: float = 1e-3) -> np.ndarray:
    """``W`` with each node's parents cut to the subset BIC prefers.

    A fixed threshold on standardised weights is the wrong test at 10-40 observations: it keeps
    spurious edges at small n and drops real but modest ones. Per node, the candidate parents
    (``|w| >= min_weight`` after NOTEARS' L1) enter by decreasing ``|w|``; the prefix minimising
    ``n log(RSS/n) + k log n`` of the least-squares refit is kept, at most ``n // 3`` of them.
    """
    n = X.shape[0]
    out = np.zeros_like(W)
    for j in range(W.shape[1]):
        cand = np.flatnonzero(np.abs(W[:, j]) >= min_weight)
        if not len(cand):
            continue
        cand = cand[np.argsort(-np.abs(W[cand, j]))][: max(1, n // 3)]
        y = X[:, j]
        best_k, best_bic = 0, n * np.log(float(y @ y) / n + 1e-12)
        for k in range(1, len(cand) + 1):
            A = X[:, cand[:k]]
            coef = np.linalg.lstsq(A, y, rcond=None)[0]
            r = y - A @ coef
            bic = n * np.log(float(r @ r) / n + 1e-12) + k * np.log(n)
            if bic < best_bic:
                best_k, best_bic = k, bic
        out[cand[:best_k], j] = W[cand[:best_k], j]
    return out


def past_deadline(deadline: float | None) -> bool:
    """Whether a learning's time budget (a ``perf_counter()`` value) is spent."""
    return deadline is not None and time.perf_counter() > deadline


def add_dependent_parents(
    X: np.ndarray,
    W: np.ndarray,
    mask: np.ndarray,
    roots: np.ndarray,
    sinks: np.ndarray,
    alpha: float = 0.25,
    strict_sinks: bool = False,
    deadline: float | None = None,
) -> np.ndarray:
    """``W`` with the parents a dependence test finds that a linear BIC left out (recall first).

    At 10-40 observations BIC on a linear refit drops real parents whose effect is modest or
    non-linear (a cache size acting through ``2^-size``, a switch acting on one level only), and
    a parameter the DAG leaves out is one the acquisition cannot set. Per node, forward selection:
    the residual of the least-squares fit on the parents so far is tested against each allowed
    candidate (:func:`_dependence_pvalue`: level-wise ANOVA and partial correlation), and the most
    significant is added while its p-value is below ``alpha``, up to ``n // 2`` parents. A metric's
    first parent must pass the Bonferroni-corrected level (a pure-noise counter gets none).
    Candidates are the allowed parameters (``roots``) of every node, and the allowed metrics too
    for the objectives (``sinks``); metric-to-metric edges stay NOTEARS' (testing both
    directions would only make cycles).

    ``strict_sinks``: every parent added to an objective must pass the Bonferroni-corrected
    level too. An objective computed from logged metrics is explained by them up to noise, so
    after its metric parents the uncorrected test adds a parameter every few steps by chance
    (the SoC's EDP gathered 8-14 parents where 2 are true).

    The level is lenient on purpose (default 0.25, uncorrected after a node's first parent):
    a parameter missing from the DAG is one the acquisition cannot set, while a spurious parent
    costs its GP one more length-scale that ARD can make long. On the synthetic SoC this raises
    the recall of the parameters that reach the objective from 0.44 to 0.90 at 20 observations
    (``python -m benchmarks.bograph_diagnose``). Objectives first: past ``deadline``, the rest keep their parents.
    """
    n = X.shape[0]
    out = W.copy()
    for j in sorted(range(W.shape[1]), key=lambda c: not sinks[c]):
        if past_deadline(deadline):
            break
        allowed = mask[:, j] & (roots | sinks[j])
        if not allowed.any():
            continue
        chosen = list(np.flatnonzero(out[:, j]))
        y = X[:, j]
        while len(chosen) < max(1, n // 2):
            A = np.column_stack([np.ones(n)] + [X[:, c] for c in chosen])
            r = y - A @ np.linalg.lstsq(A, y, rcond=None)[0]
            if float(r @ r) <= 1e-12 * n:
                break
            free = [c for c in np.flatnonzero(allowed) if c not in chosen]
            if not free:
                break
            coef = np.linalg.lstsq(A, X[:, free], rcond=None)[0]
            partial = X[:, free] - A @ coef  # each candidate without what the parents explain
            p = [_dependence_pvalue(X[:, c], r, len(chosen) + 1, partial[:, i]) for i, c in enumerate(free)]
            best = int(np.argmin(p))
            # a metric's first parent: the least of len(free) p-values must pass (Bonferroni), else a
            # pure-noise counter gathers parents by chance
            strict = (not chosen and not sinks[j]) or (strict_sinks and sinks[j])
            if p[best] >= (alpha / len(free) if strict else alpha):
                break
            c = free[best]
            corr = float(np.corrcoef(X[:, c], r)[0, 1]) if np.std(X[:, c]) > 0 else 0.0
            out[c, j] = np.copysign(max(abs(corr), 1e-3), corr if np.isfinite(corr) else 1.0)
            chosen.append(c)
    return out


#: The GP hyperparameter grid of :func:`loo_log_likelihood` (standardised inputs and output):
#: RBF length-scales in units of sqrt(number of inputs), noise-to-signal ratios, linear-term weights.
_LENGTHSCALES = (0.25, 0.5, 1.0, 2.0, 4.0)
_NOISE_RATIOS = (0.003, 0.02, 0.1, 0.3, 1.0)
_LINEAR_WEIGHTS = (0.0, 1.0)


def loo_log_likelihood(Z: np.ndarray, y: np.ndarray) -> float:
    """Leave-one-out log predictive density of ``y`` (n,) under a zero-mean GP on ``Z`` (n, k),
    best over a small hyperparameter grid (RBF + linear kernel, overall scale in closed form).

    In closed form (Rasmussen & Williams §5.4.2): with ``K⁻¹``, the held-out residual is
    ``[K⁻¹y]_i / [K⁻¹]_ii`` and its variance ``1 / [K⁻¹]_ii``; scaling ``K`` by ``c`` scales every
    variance by ``c``, so the best ``c`` is the mean standardised squared residual. ``k = 0`` is
    the marginal model (no parents). Cheap: a few dozen Cholesky factorisations of ``n × n``.
    """
    n = len(y)
    y = (y - y.mean()) / (y.std() + 1e-12)
    if Z.shape[1] == 0:
        bases = [np.zeros((n, n))]
    else:
        k = Z.shape[1]
        sq = np.sum(Z * Z, axis=1)
        d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * Z @ Z.T, 0.0) / k
        lin = Z @ Z.T / k
        bases = [np.exp(-0.5 * d2 / ls**2) + a * lin for ls in _LENGTHSCALES for a in _LINEAR_WEIGHTS]
    best = -np.inf
    eye = np.eye(n)
    for base in bases:
        for nu in _NOISE_RATIOS if Z.shape[1] else (1.0,):
            try:
                L = linalg.cho_factor(base + nu * eye, lower=True)
            except linalg.LinAlgError:
                continue
            Kinv = linalg.cho_solve(L, eye)
            d = np.diag(Kinv)
            e = (Kinv @ y) / d
            v = 1.0 / d
            c = float(np.mean(e * e / v)) + 1e-12
            ll = float(-0.5 * np.sum(np.log(2 * np.pi * c * v) + e * e / (c * v)))
            best = max(best, ll)
    return best


def prune_parents_by_cv(
    X: np.ndarray, W: np.ndarray, margin: float = 0.0, columns: np.ndarray | None = None, deadline: float | None = None
) -> np.ndarray:
    """``W`` with each node's parents cut to those a GP's leave-one-out likelihood wants.

    The dependence test is lenient (recall first) and every parent it adds is one more input of
    the node's GP: at 20 observations nodes gathered up to 10 parents, at 30 up to 12. Per node,
    backward elimination from all its parents: while dropping some parent leaves
    :func:`loo_log_likelihood` of the node within ``margin`` nats of the current set (or raises
    it), the parent whose removal scores best goes. The held-out likelihood judges what the
    node's GP will face: a spurious input lowers it, a non-linear effect a linear test misses
    raises it. (Greedy forward selection from no parents was tried too: it lost half the
    recall, since each of several modest parents alone explains too little.)

    Opt-in (``NotearsSettings.cv_parents``): on the synthetic SoC it cuts the objective's
    in-degree from 8.8 to 4.0 at 20 observations, but the learned DAG then reached 1.10x the
    optimum in 3 seeds of 10 against 7 without (docs/bograph.md, Benchmarks).
    """
    out = W.copy()
    for j in range(W.shape[1]):
        chosen = [int(c) for c in np.flatnonzero(W[:, j])]
        if not chosen or (columns is not None and not columns[j]) or past_deadline(deadline):
            continue
        out[:, j] = 0.0
        y = X[:, j]
        score = loo_log_likelihood(X[:, chosen], y)
        while chosen:
            scores = [loo_log_likelihood(X[:, [c for c in chosen if c != r]], y) for r in chosen]
            best = int(np.argmax(scores))
            if scores[best] < score - margin:
                break
            score = scores[best]
            chosen.pop(best)
        out[chosen, j] = W[chosen, j]
    return out


def _dependence_pvalue(x: np.ndarray, r: np.ndarray, used: int, partial: np.ndarray | None = None) -> float:
    """P-value of "``r`` does not depend on ``x``" (``used``: degrees of freedom already spent on
    ``r``): the smaller of a one-way ANOVA of ``r`` over ``x``'s levels (at most 4, else terciles)
    and a test of the partial correlation (``partial``: ``x`` without what ``r``'s regressors
    explain; default ``x``), doubled (Bonferroni over the two)."""

    n = len(r)
    levels = np.unique(x)
    if len(levels) < 2:
        return 1.0
    if len(levels) <= 4:
        groups = np.searchsorted(levels, x)
    else:
        groups = np.digitize(x, np.quantile(x, [1 / 3, 2 / 3])[:2])
    labels = np.unique(groups)
    k = len(labels)
    p_anova = 1.0
    dof = n - used - k + 1
    if k >= 2 and dof >= 1:
        means = np.array([r[groups == g].mean() for g in labels])
        counts = np.array([(groups == g).sum() for g in labels])
        between = float(np.sum(counts * (means - r.mean()) ** 2)) / (k - 1)
        within = float(sum(np.sum((r[groups == g] - m) ** 2) for g, m in zip(labels, means))) / dof
        if within > 0:
            p_anova = float(stats.f.sf(between / within, k - 1, dof))
    p_lin = 1.0
    dof = n - used - 1
    z = x if partial is None else partial
    if dof >= 1 and np.std(z) > 1e-9 * (np.std(x) + 1e-300) and np.std(r) > 0:
        rho = float(np.clip(np.corrcoef(z, r)[0, 1], -0.999999, 0.999999))
        t = rho * np.sqrt(dof / (1 - rho * rho))
        p_lin = float(2 * stats.t.sf(abs(t), dof))
    return min(1.0, 2 * min(p_anova, p_lin))
