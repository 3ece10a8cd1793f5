"""Structure learning from summarised logs (NOTEARS-linear) and the rules that make the result a
DAG BoGraph can optimise over (BoGraph §3.1.2).

NOTEARS (Zheng et al., NeurIPS 2018) finds a weighted adjacency ``W`` minimising
``1/(2n) ||X - XW||² + λ ||W||₁`` subject to the smooth acyclicity constraint
``h(W) = tr(exp(W∘W)) - d = 0``, solved by an augmented Lagrangian with L-BFGS-B on
``W = W⁺ - W⁻``. It is implemented here on scipy rather than taken from a library: causalnex is
unmaintained and pins an old numpy, lingam's dependencies (pygam, semopy) downgrade numpy and
scipy, gcastle is unmaintained since 2022 and pulls torch; the algorithm is two dozen lines.

Forbidden edges are not variables at all (their weights stay 0), so the optimiser never sees them: no
edge into a parameter, none out of an objective, none between parameters, the expert's
forbidden edges, and none into a formula node other than from its inputs. Since parameters
are roots and objectives sinks, a cycle can only run through metrics, so ``h`` is computed on
the metric block alone (the same value, a much smaller matrix exponential).

BIC on a linear refit is strict at 10-40 observations; :func:`add_dependent_parents` then adds
the parents a non-linear dependence test finds (recall first). :func:`repair` applies the
post-processing rules to any edge set (learned, expert or both): edges into parameters or out
of objectives reversed (dropped if reversing would close a cycle), dangling non-objective sinks
pruned, metrics that no parameter reaches pruned too (the configuration cannot move them;
sampled from their spread they would only add noise) unless the expert names them, and every
parameter without a path to the objective connected to it directly in an expert's DAG, left out
of a learned one (see :func:`repair`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize

from bayestune.bograph.dag import METRIC, OBJECTIVE, PARAMETER, Expert, new_dag, nodes_of
from bayestune.models.linalg import limit_blas_threads
from bayestune.settings import Rule, Settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class NotearsSettings(Settings):
    """NOTEARS-linear's constants (the paper's: λ = 0.1; a fixed threshold 0.3 if given): the
    ``notears`` option group of ``bograph``."""

    l1: float = 0.1                    # L1 weight of the NOTEARS fit
    w_threshold: float | None = None   # edge threshold on |w| (None: each node's parents chosen by BIC)
    recall_alpha: float | None = 0.25  # parents a dependence test on the residual adds to BIC's, at this level (None: off)
    strict_objectives: bool = False    # every parent the test adds to an objective passes the Bonferroni level
    cv_parents: str = "off"            # off | objectives | all: nodes whose parents a GP's leave-one-out likelihood cuts
    cv_margin: float = 0.0             # nats of leave-one-out log likelihood a parent must be worth (cv_parents)
    h_tol: float = 1e-8                # acyclicity tolerance of the augmented Lagrangian
    rho_max: float = 1e16              # largest penalty weight before it gives up
    max_outer: int = 100               # augmented-Lagrangian rounds

    def rules(self) -> list[Rule]:
        return [("l1", self.l1 >= 0, "`l1 >= 0`"),
                ("w_threshold", self.w_threshold is None or self.w_threshold >= 0, "`w_threshold >= 0`"),
                ("recall_alpha", self.recall_alpha is None or 0 < self.recall_alpha < 1, "`0 < recall_alpha < 1`"),
                self.one_of("cv_parents", ("off", "objectives", "all")),
                self.one_of("strict_objectives", (True, False)),
                ("cv_margin", self.cv_margin >= 0, "`cv_margin >= 0`"),
                ("h_tol", self.h_tol > 0, "`h_tol > 0`"), ("rho_max", self.rho_max > 0, "`rho_max > 0`"),
                self.at_least("max_outer", 1)]


def allowed_mask(names: Sequence[str], roles: Mapping[str, str], expert: Expert) -> np.ndarray:
    """``mask[i, j]`` is True where the edge ``names[i] -> names[j]`` may be learned."""
    index = {n: i for i, n in enumerate(names)}
    d = len(names)
    mask = np.ones((d, d), dtype=bool)
    np.fill_diagonal(mask, False)
    for j, n in enumerate(names):
        if roles[n] == PARAMETER:
            mask[:, j] = False          # parameters are roots
        if roles[n] == OBJECTIVE:
            mask[j, :] = False          # objectives are sinks
        if n in expert.formulas:        # a formula's parents are its inputs, nothing else
            mask[:, j] = False
    for a, b in expert.forbidden_edges:
        if a in index and b in index:
            mask[index[a], index[b]] = False
    return mask


def notears_linear(X: np.ndarray, mask: np.ndarray, cyclic: np.ndarray,
                   settings: NotearsSettings = NotearsSettings(), w_start: np.ndarray | None = None) -> np.ndarray:
    """The learned weighted adjacency (d, d) of data ``X`` (n, d), zero outside ``mask`` and
    wherever ``|w| < w_threshold`` (see :func:`notears_weights`)."""
    W = notears_weights(X, mask, cyclic, settings, w_start)
    if settings.w_threshold is None:
        return select_parents(X, W)
    W[np.abs(W) < settings.w_threshold] = 0.0
    return W


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
        cand = cand[np.argsort(-np.abs(W[cand, j]))][:max(1, n // 3)]
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


def _late(deadline: float | None) -> bool:  # a learning's time budget (a perf_counter() value) is spent
    return deadline is not None and time.perf_counter() > deadline


def add_dependent_parents(X: np.ndarray, W: np.ndarray, mask: np.ndarray, roots: np.ndarray, sinks: np.ndarray,
                          alpha: float = 0.25, strict_sinks: bool = False,
                          deadline: float | None = None) -> np.ndarray:
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
        if _late(deadline):
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
            partial = X[:, free] - A @ coef      # each candidate without what the parents explain
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
        bases = [np.exp(-0.5 * d2 / ls ** 2) + a * lin for ls in _LENGTHSCALES for a in _LINEAR_WEIGHTS]
    best = -np.inf
    eye = np.eye(n)
    for base in bases:
        for nu in (_NOISE_RATIOS if Z.shape[1] else (1.0,)):
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


def prune_parents_by_cv(X: np.ndarray, W: np.ndarray, margin: float = 0.0,
                        columns: np.ndarray | None = None, deadline: float | None = None) -> np.ndarray:
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
        if not chosen or (columns is not None and not columns[j]) or _late(deadline):
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
    from scipy import stats

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


def notears_weights(X: np.ndarray, mask: np.ndarray, cyclic: np.ndarray,
                    settings: NotearsSettings = NotearsSettings(), w_start: np.ndarray | None = None,
                    deadline: float | None = None) -> np.ndarray:
    """NOTEARS' weights before thresholding: (d, d), zero outside ``mask``.

    ``cyclic`` marks the nodes a cycle could run through (the metrics); acyclicity is enforced
    on their block only. Only the allowed entries are optimisation variables (parameters are
    roots, so most of the d² entries are fixed at 0). ``w_start`` (d, d), the previous update's
    unthresholded weights, warm-starts the solver: the structure changes little between updates.
    Past ``deadline`` (``time.perf_counter()``) it stops where it is; :func:`repair` breaks any cycle left.
    """
    n, d = X.shape
    cyc = np.flatnonzero(cyclic)
    k = len(cyc)
    free = np.flatnonzero(mask.reshape(-1))
    nf = len(free)
    if nf == 0:
        return np.zeros((d, d))
    cov = X.T @ X / n                       # the loss needs only the covariance: O(d³), not O(nd²)
    bounds = [(0.0, None)] * (2 * nf)

    def weights(w: np.ndarray) -> np.ndarray:
        W = np.zeros(d * d)
        W[free] = w[:nf] - w[nf:]
        return W.reshape(d, d)

    def h_and_grad(W: np.ndarray) -> tuple[float, np.ndarray]:
        G = np.zeros((d, d))
        if k == 0:
            return 0.0, G
        B = W[np.ix_(cyc, cyc)]
        E = linalg.expm(B * B)
        G[np.ix_(cyc, cyc)] = E.T * 2.0 * B
        return float(np.trace(E) - k), G

    def objective(w: np.ndarray, rho: float, alpha: float) -> tuple[float, np.ndarray]:
        W = weights(w)
        # 1/(2n)||X - XW||² = ½ tr((I - W)ᵀ C (I - W)) with C = XᵀX/n
        IW = np.eye(d) - W
        CIW = cov @ IW
        loss = 0.5 * float(np.sum(IW * CIW))
        g_loss = -CIW
        h, g_h = h_and_grad(W)
        value = loss + 0.5 * rho * h * h + alpha * h + settings.l1 * float(w.sum())
        g = (g_loss + (rho * h + alpha) * g_h).reshape(-1)[free]
        return value, np.concatenate([g + settings.l1, -g + settings.l1])

    w = np.zeros(2 * nf)
    if w_start is not None and w_start.shape == (d, d):
        start = w_start.reshape(-1)[free]
        w = np.concatenate([np.maximum(start, 0.0), np.maximum(-start, 0.0)])
    def callback(intermediate_result: object) -> None:
        if _late(deadline):
            raise StopIteration
    rho, alpha, h = 1.0, 0.0, np.inf
    for _ in range(settings.max_outer):
        while rho < settings.rho_max:
            res = optimize.minimize(objective, w, args=(rho, alpha), jac=True, method="L-BFGS-B", bounds=bounds,
                                    callback=callback if deadline is not None else None)
            h_new, _ = h_and_grad(weights(res.x))
            if h_new > 0.25 * h and not _late(deadline):
                rho *= 10.0
            else:
                break
        w, h = res.x, h_new
        alpha += rho * h
        if h <= settings.h_tol or rho >= settings.rho_max or _late(deadline):
            break
    return weights(w)


@dataclass(frozen=True)
class LearnedStructure:
    """A structure update: the DAG, what it cost and how far it reduces the dimension."""

    dag: object            # networkx.DiGraph
    seconds: float         # wall-clock time of structure learning (NOTEARS + repair)
    n_rows: int            # observations it was learned from
    learned_edges: int     # edges NOTEARS kept before repair
    names: tuple[str, ...] = ()          # the columns learned over
    weights: np.ndarray | None = None    # NOTEARS' unthresholded weights (the next update's warm start)
    cut_short: bool = False              # the deadline passed before learning finished


def learn_structure(data: np.ndarray, names: Sequence[str], roles: Mapping[str, str], expert: Expert,
                    target: str, settings: NotearsSettings = NotearsSettings(),
                    previous: LearnedStructure | None = None, deadline: float | None = None) -> LearnedStructure:
    """Learn a DAG over ``names`` from ``data`` (n, d), add the expert's edges and :func:`repair` it.

    ``previous``: the last update, whose weights warm-start NOTEARS on the columns both share.
    Parameters the learned edges do not connect to the target are left out (the logs say they
    do not matter, BoGraph §4.2.4), unless none is connected at all. Past ``deadline``, each stage keeps what it has.
    """
    start = time.perf_counter()
    X = np.asarray(data, dtype=float)
    sd = X.std(axis=0)
    informative = sd > 1e-12
    Xs = np.zeros_like(X)
    Xs[:, informative] = (X[:, informative] - X[:, informative].mean(axis=0)) / sd[informative]
    mask = allowed_mask(names, roles, expert)
    mask[~informative, :] = False
    mask[:, ~informative] = False
    cyclic = np.array([roles[n] == METRIC for n in names])
    w_start = None
    if previous is not None and previous.weights is not None:
        old = {n: i for i, n in enumerate(previous.names)}
        idx = np.array([old.get(n, -1) for n in names])
        w_start = np.zeros((len(names), len(names)))
        both = np.flatnonzero(idx >= 0)
        w_start[np.ix_(both, both)] = previous.weights[np.ix_(idx[both], idx[both])]
    with limit_blas_threads(1):  # tiny matrices: extra BLAS threads only spin (20x slower under load)
        raw = notears_weights(Xs, mask, cyclic, settings, w_start, deadline)
    if settings.w_threshold is None:
        W = select_parents(Xs, raw)
    else:
        W = np.where(np.abs(raw) >= settings.w_threshold, raw, 0.0)
    if settings.recall_alpha is not None:
        roots = np.array([roles[n] == PARAMETER for n in names])
        sinks = np.array([roles[n] == OBJECTIVE for n in names])
        W = add_dependent_parents(Xs, W, mask, roots, sinks, settings.recall_alpha, settings.strict_objectives,
                                  deadline)
    if settings.cv_parents != "off":
        only = np.array([roles[n] == OBJECTIVE for n in names]) if settings.cv_parents == "objectives" else None
        W = prune_parents_by_cv(Xs, W, settings.cv_margin, only, deadline)
    rows, cols = np.nonzero(W)
    strongest = np.argsort(-np.abs(W[rows, cols]), kind="stable")  # repair keeps the stronger of a cycle
    edges = [(names[rows[e]], names[cols[e]]) for e in strongest]
    cut, dag = _late(deadline), repair(roles, edges, expert, target, orphans="drop")
    return LearnedStructure(dag, time.perf_counter() - start, len(X), len(edges), tuple(names), raw, cut)


def repair(roles: Mapping[str, str], edges: Iterable[tuple[str, str]], expert: Expert, target: str,
           orphans: str = "attach") -> object:
    """The post-processed DAG of ``edges`` plus the expert's known edges (see the module docstring).

    ``orphans``: what becomes of parameters with no path to the target. ``attach`` connects
    them to it directly (an expert's DAG may simply not mention them); ``drop`` leaves them
    out of the model, as a learned structure found no effect of theirs (attaching every one of
    them would turn the target's model back into one GP over nearly all parameters), unless
    no parameter reaches the target at all.
    """
    import networkx as nx

    g = new_dag(roles)
    forbidden = set(expert.forbidden_edges)
    known = expert.all_known_edges()
    for a, b in known:
        g.add_edge(a, b)
    if not nx.is_directed_acyclic_graph(g):
        cycle = nx.find_cycle(g)
        raise_cycle(cycle)
    for a, b in edges:
        if roles[b] == PARAMETER or roles[a] == OBJECTIVE:
            a, b = b, a                      # reversed: parameters are roots, objectives sinks
        if (a, b) in forbidden or roles[b] == PARAMETER or roles[a] == OBJECTIVE or a == b:
            continue
        if b in expert.formulas and a not in expert.formulas[b].inputs:
            continue
        if g.has_edge(a, b):
            continue
        g.add_edge(a, b)
        if not nx.is_directed_acyclic_graph(g):
            g.remove_edge(a, b)              # the known and stronger edges win
    objectives = [n for n in nodes_of(g, OBJECTIVE)]
    sinks = set(objectives) | {target}
    named = expert.named()
    while True:  # dangling non-objective sinks pruned, and metrics no parameter reaches
        dangling = [n for n in g.nodes if roles[n] == METRIC and n not in sinks and n not in named
                    and (g.out_degree(n) == 0 or not any(roles[a] == PARAMETER for a in nx.ancestors(g, n)))]
        if not dangling:
            break
        g.remove_nodes_from(dangling)
    # every parameter keeps a way to the objective: directly, or into the modelled inputs of a
    # formula objective (whose parents are fixed by its expression)
    entries = [target]
    if target in expert.formulas:
        entries = [n for n in expert.formulas[target].inputs if roles[n] != PARAMETER and n not in expert.formulas]
    reach = nx.ancestors(g, target)
    if orphans == "drop" and any(roles[a] == PARAMETER for a in reach):
        return g
    for p in nodes_of(g, PARAMETER):
        if p not in reach:
            for entry in entries:
                if (p, entry) not in forbidden:
                    g.add_edge(p, entry)
    return g


def raise_cycle(cycle: Sequence[tuple[str, str]]) -> None:
    from bayestune.exceptions import BayestuneError

    raise BayestuneError(f"BoGraph expert knowledge: the known edges form a cycle {list(cycle)}")
