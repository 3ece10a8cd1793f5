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
from bayestune.bograph.parents import add_dependent_parents, past_deadline, prune_parents_by_cv, select_parents
from bayestune.models.linalg import limit_blas_threads
from bayestune.settings import Rule, Settings

logger = logging.getLogger(__name__)


#: The augmented Lagrangian's acyclicity tolerance, largest penalty weight and rounds.
H_TOL = 1e-8
RHO_MAX = 1e16
MAX_OUTER = 100


@dataclass(frozen=True)
class NotearsSettings(Settings):
    """NOTEARS-linear as BoGraph learns with it (the paper's λ = 0.1; each node's parents chosen
    by BIC): the ``notears`` option group of ``bograph``."""

    l1: float = 0.1  # L1 weight of the NOTEARS fit
    recall_alpha: float | None = (
        0.25  # parents a dependence test on the residual adds to BIC's, at this level (None: off)
    )
    cv_parents: str = "off"  # off | objectives | all: nodes whose parents a GP's leave-one-out likelihood cuts

    def rules(self) -> list[Rule]:
        return [
            ("l1", self.l1 >= 0, "`l1 >= 0`"),
            ("recall_alpha", self.recall_alpha is None or 0 < self.recall_alpha < 1, "`0 < recall_alpha < 1`"),
            self.one_of("cv_parents", ("off", "objectives", "all")),
        ]


def allowed_mask(names: Sequence[str], roles: Mapping[str, str], expert: Expert) -> np.ndarray:
    """``mask[i, j]`` is True where the edge ``names[i] -> names[j]`` may be learned."""
    index = {n: i for i, n in enumerate(names)}
    d = len(names)
    mask = np.ones((d, d), dtype=bool)
    np.fill_diagonal(mask, False)
    for j, n in enumerate(names):
        if roles[n] == PARAMETER:
            mask[:, j] = False  # parameters are roots
        if roles[n] == OBJECTIVE:
            mask[j, :] = False  # objectives are sinks
        if n in expert.formulas:  # a formula's parents are its inputs, nothing else
            mask[:, j] = False
    for a, b in expert.forbidden_edges:
        if a in index and b in index:
            mask[index[a], index[b]] = False
    return mask


def notears_linear(
    X: np.ndarray,
    mask: np.ndarray,
    cyclic: np.ndarray,
    settings: NotearsSettings = NotearsSettings(),
    w_start: np.ndarray | None = None,
) -> np.ndarray:
    """The learned weighted adjacency (d, d) of data ``X`` (n, d), zero outside ``mask`` and
    where BIC drops a parent (see :func:`notears_weights`)."""
    return select_parents(X, notears_weights(X, mask, cyclic, settings, w_start))


def notears_weights(
    X: np.ndarray,
    mask: np.ndarray,
    cyclic: np.ndarray,
    settings: NotearsSettings = NotearsSettings(),
    w_start: np.ndarray | None = None,
    deadline: float | None = None,
) -> np.ndarray:
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
    cov = X.T @ X / n  # the loss needs only the covariance: O(d³), not O(nd²)
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
        if past_deadline(deadline):
            raise StopIteration

    rho, alpha, h = 1.0, 0.0, np.inf
    for _ in range(MAX_OUTER):
        while rho < RHO_MAX:
            res = optimize.minimize(
                objective,
                w,
                args=(rho, alpha),
                jac=True,
                method="L-BFGS-B",
                bounds=bounds,
                callback=callback if deadline is not None else None,
            )
            h_new, _ = h_and_grad(weights(res.x))
            if h_new > 0.25 * h and not past_deadline(deadline):
                rho *= 10.0
            else:
                break
        w, h = res.x, h_new
        alpha += rho * h
        if h <= H_TOL or rho >= RHO_MAX or past_deadline(deadline):
            break
    return weights(w)


@dataclass(frozen=True)
class LearnedStructure:
    """A structure update: the DAG, what it cost and how far it reduces the dimension."""

    dag: object  # networkx.DiGraph
    seconds: float  # wall-clock time of structure learning (NOTEARS + repair)
    n_rows: int  # observations it was learned from
    learned_edges: int  # edges NOTEARS kept before repair
    names: tuple[str, ...] = ()  # the columns learned over
    weights: np.ndarray | None = None  # NOTEARS' unthresholded weights (the next update's warm start)
    cut_short: bool = False  # the deadline passed before learning finished


def learn_structure(
    data: np.ndarray,
    names: Sequence[str],
    roles: Mapping[str, str],
    expert: Expert,
    target: str,
    settings: NotearsSettings = NotearsSettings(),
    previous: LearnedStructure | None = None,
    deadline: float | None = None,
) -> LearnedStructure:
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
    W = select_parents(Xs, raw)
    if settings.recall_alpha is not None:
        roots = np.array([roles[n] == PARAMETER for n in names])
        sinks = np.array([roles[n] == OBJECTIVE for n in names])
        W = add_dependent_parents(Xs, W, mask, roots, sinks, settings.recall_alpha, deadline=deadline)
    if settings.cv_parents != "off":
        only = np.array([roles[n] == OBJECTIVE for n in names]) if settings.cv_parents == "objectives" else None
        W = prune_parents_by_cv(Xs, W, columns=only, deadline=deadline)
    rows, cols = np.nonzero(W)
    strongest = np.argsort(-np.abs(W[rows, cols]), kind="stable")  # repair keeps the stronger of a cycle
    edges = [(names[rows[e]], names[cols[e]]) for e in strongest]
    cut, dag = past_deadline(deadline), repair(roles, edges, expert, target, orphans="drop")
    return LearnedStructure(dag, time.perf_counter() - start, len(X), len(edges), tuple(names), raw, cut)


def repair(
    roles: Mapping[str, str], edges: Iterable[tuple[str, str]], expert: Expert, target: str, orphans: str = "attach"
) -> object:
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
            a, b = b, a  # reversed: parameters are roots, objectives sinks
        if (a, b) in forbidden or roles[b] == PARAMETER or roles[a] == OBJECTIVE or a == b:
            continue
        if b in expert.formulas and a not in expert.formulas[b].inputs:
            continue
        if g.has_edge(a, b):
            continue
        g.add_edge(a, b)
        if not nx.is_directed_acyclic_graph(g):
            g.remove_edge(a, b)  # the known and stronger edges win
    objectives = [n for n in nodes_of(g, OBJECTIVE)]
    sinks = set(objectives) | {target}
    named = expert.named()
    while True:  # dangling non-objective sinks pruned, and metrics no parameter reaches
        dangling = [
            n
            for n in g.nodes
            if roles[n] == METRIC
            and n not in sinks
            and n not in named
            and (g.out_degree(n) == 0 or not any(roles[a] == PARAMETER for a in nx.ancestors(g, n)))
        ]
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
