"""Structure learning from summarised logs (NOTEARS-linear) and the rules that make the result a
DAG BoGraph can optimise over (BoGraph §3.1.2).

NOTEARS (Zheng et al., NeurIPS 2018) finds a weighted adjacency ``W`` minimising
``1/(2n) ||X - XW||² + λ ||W||₁`` subject to the smooth acyclicity constraint
``h(W) = tr(exp(W∘W)) - d = 0``, solved by an augmented Lagrangian with L-BFGS-B on
``W = W⁺ - W⁻``. It is implemented here on scipy rather than taken from a library: causalnex is
unmaintained and pins an old numpy, lingam's dependencies (pygam, semopy) downgrade numpy and
scipy, gcastle is unmaintained since 2022 and pulls torch; the algorithm is two dozen lines.

Forbidden edges are bounds ``(0, 0)`` on their weights, so the optimiser never sees them: no
edge into a parameter, none out of an objective, none between parameters, the expert's
forbidden edges, and none into a formula node other than from its inputs. Since parameters
are roots and objectives sinks, a cycle can only run through metrics, so ``h`` is computed on
the metric block alone (the same value, a much smaller matrix exponential).

:func:`repair` then applies the post-processing rules to any edge set (learned, expert or
both): edges into parameters or out of objectives reversed (dropped if reversing would close
a cycle), dangling non-objective sinks pruned, and every parameter without a path to the
objective connected to it directly.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize

from bayestune.bograph.dag import METRIC, OBJECTIVE, PARAMETER, Expert, new_dag, nodes_of

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class NotearsSettings:
    """NOTEARS-linear's constants (the paper's defaults: λ = 0.1, threshold 0.3)."""

    l1: float = 0.1
    w_threshold: float = 0.3
    h_tol: float = 1e-8
    rho_max: float = 1e16
    max_outer: int = 100


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
                   settings: NotearsSettings = NotearsSettings()) -> np.ndarray:
    """The learned weighted adjacency (d, d) of data ``X`` (n, d), zero outside ``mask``.

    ``cyclic`` marks the nodes a cycle could run through (the metrics); acyclicity is enforced
    on their block only.
    """
    n, d = X.shape
    cyc = np.flatnonzero(cyclic)
    k = len(cyc)
    free = mask.reshape(-1)
    bounds = [(0.0, None) if f else (0.0, 0.0) for f in free] * 2

    def weights(w: np.ndarray) -> np.ndarray:
        return (w[:d * d] - w[d * d:]).reshape(d, d)

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
        R = X - X @ W
        loss = 0.5 / n * float(np.sum(R * R))
        g_loss = -1.0 / n * X.T @ R
        h, g_h = h_and_grad(W)
        value = loss + 0.5 * rho * h * h + alpha * h + settings.l1 * float(w.sum())
        g = (g_loss + (rho * h + alpha) * g_h).reshape(-1)
        return value, np.concatenate([g + settings.l1, -g + settings.l1])

    w = np.zeros(2 * d * d)
    rho, alpha, h = 1.0, 0.0, np.inf
    for _ in range(settings.max_outer):
        while rho < settings.rho_max:
            res = optimize.minimize(objective, w, args=(rho, alpha), jac=True, method="L-BFGS-B", bounds=bounds)
            h_new, _ = h_and_grad(weights(res.x))
            if h_new > 0.25 * h:
                rho *= 10.0
            else:
                break
        w, h = res.x, h_new
        alpha += rho * h
        if h <= settings.h_tol or rho >= settings.rho_max:
            break
    W = weights(w)
    W[np.abs(W) < settings.w_threshold] = 0.0
    return W


@dataclass(frozen=True)
class LearnedStructure:
    """A structure update: the DAG, what it cost and how far it reduces the dimension."""

    dag: object            # networkx.DiGraph
    seconds: float         # wall-clock time of structure learning (NOTEARS + repair)
    n_rows: int            # observations it was learned from
    learned_edges: int     # edges NOTEARS kept before repair


def learn_structure(data: np.ndarray, names: Sequence[str], roles: Mapping[str, str], expert: Expert,
                    target: str, settings: NotearsSettings = NotearsSettings()) -> LearnedStructure:
    """Learn a DAG over ``names`` from ``data`` (n, d), add the expert's edges and :func:`repair` it."""
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
    W = notears_linear(Xs, mask, cyclic, settings)
    edges = [(names[i], names[j]) for i, j in zip(*np.nonzero(W))]
    dag = repair(roles, edges, expert, target)
    return LearnedStructure(dag, time.perf_counter() - start, len(X), len(edges))


def repair(roles: Mapping[str, str], edges: Iterable[tuple[str, str]], expert: Expert, target: str) -> object:
    """The post-processed DAG of ``edges`` plus the expert's known edges (see the module docstring)."""
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
    while True:                              # dangling non-objective sinks pruned
        dangling = [n for n in g.nodes if g.out_degree(n) == 0 and n not in sinks and roles[n] == METRIC]
        if not dangling:
            break
        g.remove_nodes_from(dangling)
    # every parameter keeps a way to the objective: directly, or into the modelled inputs of a
    # formula objective (whose parents are fixed by its expression)
    entries = [target]
    if target in expert.formulas:
        entries = [n for n in expert.formulas[target].inputs if roles[n] != PARAMETER and n not in expert.formulas]
    reach = nx.ancestors(g, target)
    for p in nodes_of(g, PARAMETER):
        if p not in reach:
            for entry in entries:
                if (p, entry) not in forbidden:
                    g.add_edge(p, entry)
    return g


def raise_cycle(cycle: Sequence[tuple[str, str]]) -> None:
    from bayestune.exceptions import BayestuneError

    raise BayestuneError(f"BoGraph expert knowledge: the known edges form a cycle {list(cycle)}")
