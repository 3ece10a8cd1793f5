"""BoGraph's model part of a BO step: the logged metrics summarised, a DAG parameters ->
metrics -> objective learned on a schedule and merged with the expert's knowledge, one model
per node on its parents, and the target's posterior sampled through them.

On a schedule (default: every quarter of ``relearn.budget``, else every 10 observations) the
DAG is learned with NOTEARS (each node's parents chosen by BIC, plus those a dependence test on
the residual finds) and merged with the expert's knowledge (:mod:`bayestune.bograph.structure`).
Parameters it does not connect to the target are not modelled (the acquisition is flat in them)
and keep the incumbent's values (:meth:`GraphModel._holder`). Until there are more feasible
observations than parameters (``relearn.min_rows``) no structure is learned: the DAG is every
parameter into the target. The step scores the target's draws by Monte-Carlo EI
(:class:`bayestune.bograph.acquisition.GraphPosterior`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayestune.bograph.acquisition import DagPosterior, GraphPosterior, TargetScale
from bayestune.bograph.dag import METRIC, OBJECTIVE, PARAMETER, Expert, effective_dimension, modelled_nodes
from bayestune.bograph.node_models import CustomNode, FormulaNode, GPNode, MarginalNode
from bayestune.bograph.structure import NotearsSettings, learn_structure, repair
from bayestune.bograph.summarise import LogSummary, SummarySettings, summarise
from bayestune.exceptions import BayestuneError
from bayestune.history import History
from bayestune.models.base import ModelFit
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier
from bayestune.models.hyperparameters import FULL_FIT_EVERY
from bayestune.models.training import TrainingSet
from bayestune.objectives import Objective
from bayestune.settings import Rule, Settings
from bayestune.space.space import Space
from bayestune.trial import FEASIBLE_KEYS

logger = logging.getLogger(__name__)

#: Structure updates without a budget to take a quarter of: every this many observations.
DEFAULT_RELEARN_EVERY = 10
#: Seconds one structure learning may take (NOTEARS, then the parent tests). PostgreSQL's first
#: update took 52 s at a load of 20 (2-3 s quiet) before stand-ins were set aside; past the
#: budget the update keeps what it has: NOTEARS' current weights (their cycles broken at the
#: weakest edge) and the parents tested so far, the objective's first.
DEFAULT_MAX_SECONDS = 10.0


@dataclass(frozen=True)
class RelearnSettings(Settings):
    """When the structure is (re)learned (the ``relearn`` option group): by ``growth`` if given,
    else every ``every`` observations, else every quarter of ``budget``, else every 10."""

    budget: int | None = None  # the run's budget: an update every quarter of it
    every: int | None = None  # observations between updates
    growth: float | None = None  # an update whenever the observations grew by this factor
    min_rows: int | None = None  # feasible observations before the first learning (None: parameters + 1, at least 6)
    max_seconds: float | None = DEFAULT_MAX_SECONDS  # wall time of one structure learning (None: unbounded)

    def rules(self) -> list[Rule]:
        return [
            ("budget", self.budget is None or self.budget >= 1, "`budget >= 1`"),
            ("max_seconds", self.max_seconds is None or self.max_seconds > 0, "`max_seconds > 0`"),
            ("every", self.every is None or self.every >= 1, "`every >= 1`"),
            ("growth", self.growth is None or self.growth > 1, "`growth > 1`"),
            ("min_rows", self.min_rows is None or self.min_rows >= 3, "`min_rows >= 3`"),
        ]

    def due(self, n_rows: int, learned_at: int) -> bool:
        """Whether a structure learned from ``learned_at`` observations is due for an update at
        ``n_rows``: after ``growth`` times as many, else after :attr:`period` more."""
        if self.growth is not None:
            return n_rows >= self.growth * learned_at
        return n_rows - learned_at >= self.period

    @property
    def period(self) -> int:
        """Observations between structure updates."""
        if self.every is not None:
            return self.every
        if self.budget is not None:
            return max(1, self.budget // 4)
        return DEFAULT_RELEARN_EVERY


@dataclass
class StructureUpdate:
    """One structure update, for reports and benchmarks: when, its cost and its effect."""

    n_rows: int
    seconds: float
    effective_dimension: int
    n_edges: int
    learned_edges: int
    summary_columns: int
    cut_short: bool = False  # learning hit relearn.max_seconds and kept what it had
    stand_ins: dict[str, str] = field(default_factory=dict)  # metrics set aside, and why


@dataclass
class FittedGraph:
    """Everything a suggestion (or the ``dag`` command) knows: the DAG, its node models and data."""

    dag: Any  # networkx.DiGraph with node roles
    target: str
    posterior: DagPosterior
    scale: TargetScale
    best: float  # incumbent in the scale's units
    summary: LogSummary | None
    sources: dict[str, list[str]] = field(default_factory=dict)  # summary column -> original metrics

    @property
    def effective_dimension(self) -> int:
        return effective_dimension(self.dag, self.target)

    def fit_quality(self) -> dict[str, float]:
        """Per modelled node, how well its parents explain it (leave-one-out R² for GPs)."""
        return {n: float(m.fit_quality()) for n, m in self.posterior.models.items()}


class GraphModel:
    """The DAG of logged metrics as the model part of a BO step: see the module docstring."""

    def __init__(
        self,
        space: Space,
        objectives: Sequence[Objective],
        rng: np.random.Generator,
        *,
        expert: Expert,
        target: str | None = None,
        metrics: Sequence[str] | None = None,
        structure: str = "learn",
        relearn: RelearnSettings = RelearnSettings(),
        notears: NotearsSettings = NotearsSettings(),
        summary: SummarySettings = SummarySettings(),
        log_transform: bool | str = "auto",
        hold_unmodelled: bool = True,
    ) -> None:
        self.space, self.objectives, self.rng = space, list(objectives), rng
        self.expert = expert
        self.target = target or self.objectives[0].name
        self.metrics = None if metrics is None else list(metrics)
        self.structure, self.relearn, self.notears, self.summary_settings = structure, relearn, notears, summary
        self.log_transform, self.hold_unmodelled = log_transform, hold_unmodelled
        self.encoder = FeatureEncoder(space)
        self.updates: list[StructureUpdate] = []
        self._summary: LogSummary | None = None
        self._dag: Any = None
        self._expert_used = self.expert  # the expert's knowledge restricted to the modelled nodes
        self._learned_at = -1
        self._learned: Any = None  # the last LearnedStructure (warm start of the next)
        self._thetas: dict[str, np.ndarray] = {}
        self._n_fits = 0

    # ---- the step's calls -------------------------------------------------------------------
    def fit(self, history: History, targets: np.ndarray) -> ModelFit:
        """The graph fitted to ``history``; the incumbent and search starts ranked by ``targets``."""
        graph = self.fit_graph(history)
        feasible = history.feasible
        hold = self._holder(graph, history) if self.hold_unmodelled else None
        return ModelFit(
            GraphPosterior(graph, self._parameter_data),
            history.X[feasible],
            targets[feasible],
            fitted=graph,
            project=hold,
        )

    def observation_rows(self, history: History, targets: np.ndarray) -> np.ndarray:
        """Every feasible and failed row: what the feasibility classifier learns from."""
        return TrainingSet.choose(history, targets, None, self.encoder.transform).rows

    def with_failures(
        self, fit: ModelFit, history: History, targets: np.ndarray, classifier: FeasibilityClassifier | None
    ) -> ModelFit:
        return fit  # the node models have no variance to shrink at failed locations

    # ---- data ---------------------------------------------------------------------------
    def _metric_table(self, history: History, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Logged metrics reported by every row of ``rows`` as finite numbers (objectives and
        feasibility flags excluded); ``metrics`` narrows the choice."""
        reserved = {o.name for o in self.objectives} | set(FEASIBLE_KEYS) | set(self.space.names)
        if not len(history.metrics) or not len(rows):
            return {}
        names = set.intersection(*(set(history.metrics[i]) for i in rows)) - reserved
        if self.metrics is not None:
            names &= set(self.metrics)
        table = {n: np.array([float(history.metrics[i][n]) for i in rows]) for n in sorted(names)}
        return {n: v for n, v in table.items() if np.all(np.isfinite(v))}

    def _parameter_data(self, X: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Encoded features (n, width) and raw values (n,) of each modelled parameter."""
        F = self.encoder.transform(X)
        features = {b.name: F[:, b.start : b.start + b.width] for b in self.encoder.blocks}
        raw = {b.name: X[:, c].astype(float) for b, c in zip(self.encoder.blocks, self.encoder.raw_columns)}
        return features, raw

    # ---- the graph ----------------------------------------------------------------------
    def fit_graph(self, history: History) -> FittedGraph:
        """Summarise, (re)learn the structure when due, and fit every node's model."""
        rows = np.flatnonzero(history.feasible)
        X = history.X[rows]
        features, raw = self._parameter_data(X)
        objective = self.objectives[0]
        objective_values = history.Y[rows, 0]
        table = self._metric_table(history, rows)
        target = self.target
        if target != objective.name and target not in table:
            raise BayestuneError(
                f"bograph target {target!r} is neither the objective {objective.name!r} nor a "
                f"metric every feasible evaluation reported ({sorted(table)[:12]})"
            )
        named = self.expert.named() | {target}
        protected = {n: v for n, v in table.items() if n in named}
        due = (
            self._dag is None
            or self.relearn.due(len(rows), self._learned_at)
            or (self._learned is None and self._may_learn(len(rows)))  # first learning since the fallback
            or not self._inputs_of_structure() <= set(table)
        )  # a metric it reads stopped being logged
        if due:
            self._restructure(history, rows, features, raw, table, protected, objective_values)
        summary = self._summary
        values: dict[str, np.ndarray] = {objective.name: objective_values, **protected}
        if summary is not None and summary.columns:
            Z = summary.transform(table)
            values.update({c: Z[:, j] for j, c in enumerate(summary.names)})
        return self._fit_nodes(history, features, raw, values, summary)

    @property
    def min_rows_to_learn(self) -> int:
        """Feasible observations before the first structure learning. ``None`` (auto): one more
        than the parameters (at least 6). Below that, a regression of a node on every parameter
        is underdetermined, so the dependence tests and BIC pick parents from chance
        correlations; until then the DAG is every parameter into the target (plain GP-BO
        with Monte-Carlo EI)."""
        given = self.relearn.min_rows
        return given if given is not None else max(6, len(self.encoder.blocks) + 1)

    def _may_learn(self, n_rows: int) -> bool:
        return self.structure == "learn" and n_rows >= self.min_rows_to_learn

    def _inputs_of_structure(self) -> set[str]:
        """The logged metrics the current summary and DAG read."""
        if self._dag is None:
            return set()
        summary = self._summary
        columns = set(summary.names) if summary is not None else set()
        raw = {n for n, r in self._dag.nodes(data="role") if r == METRIC and n not in columns}
        return raw | {m for c in (summary.columns if summary is not None else []) for m in c.sources}

    def _roles(self, columns: list[str]) -> dict[str, str]:
        roles = {b.name: PARAMETER for b in self.encoder.blocks}
        roles.update({c: METRIC for c in columns})
        roles.update({o.name: OBJECTIVE for o in self.objectives})
        return roles

    def _restructure(
        self,
        history: History,
        rows: np.ndarray,
        features: dict,
        raw: dict,
        table: dict[str, np.ndarray],
        protected: dict[str, np.ndarray],
        objective: np.ndarray,
    ) -> None:
        start = time.perf_counter()
        others = {n: v for n, v in table.items() if n not in protected}
        summary = (
            summarise(
                others,
                settings=self.summary_settings,
                seed=0,
                objective=objective,
                objective_name=self.objectives[0].name,
            )
            if others
            else None
        )
        columns = list(protected) + (summary.names if summary is not None else [])
        roles = self._roles(columns)
        self.expert.check({**{p: PARAMETER for p in self.space.names}, **{n: METRIC for n in table}, **roles})
        # parameters of a single value are not modelled: edges naming them are dropped
        expert = Expert(
            [e for e in self.expert.known_edges if e[0] in roles and e[1] in roles],
            [e for e in self.expert.forbidden_edges if e[0] in roles and e[1] in roles],
            self.expert.formulas,
            self.expert.models,
        )
        learned, cut = 0, False
        dag: Any  # a networkx.DiGraph (networkx has no type hints)
        if self._may_learn(len(rows)):
            data = [features[b.name][:, 0] for b in self.encoder.blocks]
            data += [_learning_scale(protected[c]) for c in protected]
            if summary is not None and summary.columns:
                data += list(summary.transform(others).T)
            data.append(_learning_scale(objective))
            names = [b.name for b in self.encoder.blocks] + columns + [self.objectives[0].name]
            deadline = None if self.relearn.max_seconds is None else start + self.relearn.max_seconds
            result = learn_structure(
                np.column_stack(data),
                names,
                roles,
                expert,
                self.target,
                self.notears,
                previous=self._learned,
                deadline=deadline,
            )
            dag, learned, self._learned, cut = result.dag, result.learned_edges, result, result.cut_short
        else:
            dag = repair(roles, [], expert, self.target)
        self._dag, self._summary, self._learned_at, self._expert_used = dag, summary, len(rows), expert
        update = StructureUpdate(
            len(rows),
            time.perf_counter() - start,
            effective_dimension(dag, self.target),
            dag.number_of_edges(),
            learned,
            len(columns),
            cut,
            dict(summary.stand_ins) if summary is not None else {},
        )
        self.updates.append(update)
        if cut:
            logger.warning(
                "bograph structure update at %d observations cut short at relearn.max_seconds=%s s",
                update.n_rows,
                self.relearn.max_seconds,
            )
        logger.info(
            "bograph structure update at %d observations: %.2f s, effective dimension %d of %d parameters, %d edges",
            update.n_rows,
            update.seconds,
            update.effective_dimension,
            len(self.encoder.blocks),
            update.n_edges,
        )

    def _fit_nodes(
        self, history: History, features: dict, raw: dict, values: dict[str, np.ndarray], summary: LogSummary | None
    ) -> FittedGraph:
        dag, expert, target = self._dag, self._expert_used, self.target
        light = self._n_fits % FULL_FIT_EVERY != 0
        self._n_fits += 1
        order = modelled_nodes(dag, target)
        models: dict[str, Any] = {}
        blocks = {b.name: b for b in self.encoder.blocks}
        for node in order:
            parents = list(dag.predecessors(node))
            if node in expert.formulas:
                model: Any = FormulaNode(expert.formulas[node])
                inputs = {p: (raw[p] if p in raw else values[p]) for p in model.parents}
            else:
                if node in expert.models:
                    model = CustomNode(node, parents, expert.models[node])
                elif not parents:
                    model = MarginalNode(node)
                else:
                    log = self.log_transform if dag.nodes[node]["role"] == OBJECTIVE else "auto"
                    model = GPNode(
                        node, parents, blocks, log_transform=log, seed=int(self.rng.integers(2**31)), light=light
                    )
                source = features if isinstance(model, GPNode) else raw
                inputs = {p: (source[p] if p in source else values[p]) for p in parents}
            if isinstance(model, GPNode):
                model.fit(inputs, values[node], warm=None if not light else self._thetas.get(node))
                self._thetas[node] = model.hyperparameters
            else:
                model.fit(inputs, values[node])
            models[node] = model
        minimize = self.objectives[0].minimize if target == self.objectives[0].name else True
        scale = TargetScale(values[target], minimize=minimize, log=self.log_transform is not False)
        best = float(np.min(scale(values[target])))
        sources = summary.sources() if summary is not None else {}
        return FittedGraph(dag, target, DagPosterior(order, models, target), scale, best, summary, sources)

    def _holder(self, graph: FittedGraph, history: History) -> Any:
        """The map setting a row's unmodelled parameters (no path to the target in the DAG) to the
        incumbent's values where the result stays feasible, or None when every parameter is modelled.

        The acquisition is flat in those parameters, so the search would leave them wherever its
        random samples put them: a suggestion would redraw every parameter the structure missed
        (a switch that costs 3x when off included) and undo what the incumbent got right. Held at
        the incumbent's values, they change only once a structure update connects them.
        """
        import networkx as nx

        ancestors = nx.ancestors(graph.dag, graph.target) if graph.target in graph.dag else set()
        columns = [c for b, c in zip(self.encoder.blocks, self.encoder.raw_columns) if b.name not in ancestors]
        feasible = np.flatnonzero(history.feasible)
        if not columns or not len(feasible):
            return None
        incumbent = history.X[feasible[int(np.argmin(history.signed_Y()[feasible, 0]))]]

        def hold(X: np.ndarray) -> np.ndarray:
            H = np.array(X, dtype=float, copy=True).reshape(-1, self.space.width)
            H[:, columns] = incumbent[columns]
            ok = self.space.is_feasible(H)
            H[~ok] = np.asarray(X, dtype=float).reshape(-1, self.space.width)[~ok]
            return H

        return hold


def _learning_scale(values: np.ndarray) -> np.ndarray:
    """A column as structure learning sees it: logged when positive and spanning a factor 2."""
    v = np.asarray(values, dtype=float)
    return np.log(v) if np.all(v > 0) and v.max() >= 2.0 * v.min() else v
