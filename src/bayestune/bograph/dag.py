"""The DAG BoGraph models: a networkx DiGraph whose nodes carry a role, and the expert's knowledge.

Roles are ``parameter`` (roots: the configuration), ``metric`` (a logged metric or a summary
factor) and ``objective`` (sinks). The expert API (:class:`Expert`) says what the logs cannot:
edges known to exist, edges known not to, deterministic node functions (``edp = power *
latency**2``) and custom node models. Formulas are compiled with the whitelisting expression
compiler of known constraints, never ``eval``'d.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayestune.exceptions import BayestuneError, ConstraintError
from bayestune.settings import Settings

PARAMETER, METRIC, OBJECTIVE = "parameter", "metric", "objective"
ROLES = (PARAMETER, METRIC, OBJECTIVE)


def networkx_module() -> Any:
    try:
        import networkx
    except ImportError:  # pragma: no cover - depends on the environment
        raise BayestuneError("BoGraph needs networkx: pip install -e '.[bograph]' in the bayestune checkout") from None
    return networkx


class Formula:
    """A deterministic node: a numeric expression over other nodes' values (``power * latency**2``)."""

    def __init__(self, node: str, expression: str) -> None:
        from bayestune.space.expressions.compiler import NUMBER, Compiler, Variable, parse

        if not isinstance(expression, str) or not expression.strip():
            raise BayestuneError(f"formula of node {node!r} must be a non-empty expression, but got {expression!r}")
        try:
            source, tree = parse(expression)
            called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
            names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called})
            compiler = Compiler(expression, source, {n: Variable(NUMBER) for n in names}, "nodes")
            compiled = compiler.compile(tree)
        except ConstraintError as exc:
            raise BayestuneError(f"formula of node {node!r}: {exc}") from None
        self.node, self.expression, self.inputs = node, expression, tuple(names)
        self._fn = compiled.fn

    def __call__(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        env = {n: np.asarray(values[n], dtype=float) for n in self.inputs}
        with np.errstate(all="ignore"):
            out = np.asarray(self._fn(env), dtype=float)
        shape = np.broadcast_shapes(*(v.shape for v in env.values())) if env else out.shape
        return np.broadcast_to(out, shape).astype(float)

    def __repr__(self) -> str:
        return f"Formula({self.node!r}, {self.expression!r})"


@dataclass(frozen=True)
class ExpertSettings(Settings):
    """The expert's knowledge as options (the ``expert`` option group of ``bograph``)."""

    known_edges: list | None = None  # [[from, to], ...] always in the DAG
    forbidden_edges: list | None = None  # [[from, to], ...] never in the DAG
    formulas: dict | None = None  # {node: "power * latency**2"}: deterministic nodes

    def expert(self) -> Expert:
        return Expert.from_options(self.known_edges, self.forbidden_edges, self.formulas)


@dataclass
class Expert:
    """What an expert knows about the system (BoGraph's prior DAG).

    ``known_edges`` are always in the DAG; ``forbidden_edges`` never; ``formulas`` make a node
    deterministic (its parents are the names it reads); ``models`` give a node a custom model
    (any object with ``fit(parents, y)`` and ``predict(parents) -> (mean, std)``, see
    :mod:`~bayestune.bograph.node_models`). Node names are parameter, metric or objective names.
    """

    known_edges: list[tuple[str, str]] = field(default_factory=list)
    forbidden_edges: list[tuple[str, str]] = field(default_factory=list)
    formulas: dict[str, Formula] = field(default_factory=dict)
    models: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_options(
        cls,
        known_edges: Iterable[Sequence[str]] | None = None,
        forbidden_edges: Iterable[Sequence[str]] | None = None,
        formulas: Mapping[str, str] | None = None,
        models: Mapping[str, Any] | None = None,
    ) -> Expert:
        """An expert from JSON-like values (lists of ``[from, to]`` pairs, ``node -> expression``)."""
        return cls(
            _edges(known_edges, "known_edges"),
            _edges(forbidden_edges, "forbidden_edges"),
            {str(k): Formula(str(k), v) for k, v in (formulas or {}).items()},
            dict(models or {}),
        )

    def named(self) -> set[str]:
        """Every node the expert mentions: these metrics are kept as they are, never summarised away."""
        names = {n for e in self.known_edges + self.forbidden_edges for n in e}
        names |= set(self.formulas) | set(self.models)
        for f in self.formulas.values():
            names |= set(f.inputs)
        return names

    def all_known_edges(self) -> list[tuple[str, str]]:
        """Known edges plus one from every input of a formula to its node."""
        edges = list(self.known_edges)
        for node, formula in self.formulas.items():
            edges.extend((i, node) for i in formula.inputs)
        return list(dict.fromkeys(edges))

    def check(self, nodes: Mapping[str, str]) -> None:
        """Raise if the expert names a node that is not one of ``nodes`` (name -> role)."""
        unknown = sorted(n for n in self.named() if n not in nodes)
        if unknown:
            known = sorted(nodes)
            raise BayestuneError(
                f"BoGraph expert knowledge names unknown node(s) {unknown}; the nodes are the "
                f"parameters, objectives and logged metrics: {known[:20]}"
                + (f" ... ({len(known) - 20} more)" if len(known) > 20 else "")
            )
        both = sorted(set(self.known_edges) & set(self.forbidden_edges))
        if both:
            raise BayestuneError(f"BoGraph expert knowledge: edge(s) {both} are both known and forbidden")
        for node in self.formulas:
            if nodes[node] == PARAMETER:
                raise BayestuneError(
                    f"BoGraph formula for {node!r}: a parameter is set by the configuration, not computed"
                )


def _edges(value: Iterable[Sequence[str]] | None, what: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for edge in value or []:
        if isinstance(edge, str) or len(edge) != 2 or not all(isinstance(n, str) for n in edge):
            raise BayestuneError(
                f"BoGraph {what}: every edge must be a pair [from, to] of node names, but got {edge!r}"
            )
        out.append((edge[0], edge[1]))
    return out


def new_dag(roles: Mapping[str, str], edges: Iterable[tuple[str, str]] = ()) -> Any:
    """A DiGraph with every node of ``roles`` (name -> role, stored as the ``role`` attribute)."""
    nx = networkx_module()
    g = nx.DiGraph()
    for name, role in roles.items():
        if role not in ROLES:
            raise BayestuneError(f"node {name!r}: role must be one of {list(ROLES)}, but got {role!r}")
        g.add_node(name, role=role)
    g.add_edges_from(edges)
    return g


def nodes_of(g: Any, role: str) -> list[str]:
    return [n for n, r in g.nodes(data="role") if r == role]


def modelled_nodes(g: Any, target: str) -> list[str]:
    """The non-parameter nodes the target depends on, itself included, in topological order
    (what a sample of the target must compute)."""
    nx = networkx_module()
    needed = nx.ancestors(g, target) | {target}
    return [n for n in nx.topological_sort(g) if n in needed and g.nodes[n]["role"] != PARAMETER]


def effective_dimension(g: Any, target: str) -> int:
    """BoGraph's max dimension: the largest in-degree among the nodes the target depends on."""
    return max((g.in_degree(n) for n in modelled_nodes(g, target)), default=0)


def describe(g: Any) -> dict[str, Any]:
    """The DAG as JSON-ready data: nodes with roles and edges."""
    return {"nodes": {n: r for n, r in g.nodes(data="role")}, "edges": [list(e) for e in g.edges]}
