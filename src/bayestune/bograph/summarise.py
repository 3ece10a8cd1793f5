"""Logged metrics reduced to a few informative columns before structure learning (BoGraph §3.1.1).

Systems log hundreds of counters; a DAG over all of them would face the curse of
dimensionality it exists to avoid. The summary drops constant and low-variance metrics,
optionally logs positive counters, standardises, then groups metrics by their dotted name
prefix (``Component.SubComponent.Metric``) and compresses each group with factor analysis into
one factor, since counters of one component move together. When the summary still has more
than ``max_columns`` columns, the factors are grouped again one prefix level up (the paper's
recursion towards the top of the name hierarchy). Every column remembers the original
metrics it stands for.

Before that, stand-ins are set aside (:func:`find_stand_ins`): a metric that is a
(near-)deterministic function of the objective (pgbench's ``latency_ms`` is 4000 / ``tps``; the
transaction counters follow ``tps`` with r = 0.99998) carries no information the objective
does not, yet as its parent it would explain the objective perfectly and crowd out the
parameters; and of metrics that are such functions of each other only one is kept. The test is
the rank (Spearman) correlation, so any monotone function counts, whatever its shape; after
grouping, a factor that tracks the objective is set aside too (several counters each a little
below the threshold can add up to one that is not).

The summariser is fitted once per structure update and then only *applied* to new rows, so
node names stay stable between updates.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.settings import Settings

logger = logging.getLogger(__name__)

#: Relative spread (std / (|mean| + tiny)) below which a metric counts as constant.
MIN_RELATIVE_STD = 1e-6
#: Positive metrics spanning at least this factor are logged (counters, latencies, power).
LOG_SPAN = 2.0
#: |Rank correlation| at or above which a metric counts as a function of the objective or of
#: another metric. At 8 rows it takes a perfect ordering; pgbench's stand-ins score 0.999-1.
DEFAULT_STAND_IN_THRESHOLD = 0.99
#: Rows below which no metric is called a stand-in (a perfect ordering of a handful of rows is chance).
STAND_IN_MIN_ROWS = 8


@dataclass(frozen=True)
class SummarySettings(Settings):
    """How logs are summarised (the ``summary`` option group of ``bograph``).

    A first-level group key is a metric's name without its last part; ``max_columns``: groups
    are merged one level up while the summary has more columns than this (0: never regroup).
    ``grouping=False`` keeps every informative metric as its own column. Metrics that are
    positive everywhere and span at least a factor :data:`LOG_SPAN` are logged.
    """

    grouping: bool = True  # summarise metrics by dotted-prefix groups (factor analysis)
    max_columns: int = 12  # regroup one prefix level up while the summary is wider (0: never)
    stand_in_threshold: float | None = DEFAULT_STAND_IN_THRESHOLD  # |rank corr.| making a stand-in (None: off)

    def __post_init__(self) -> None:
        if self.stand_in_threshold is not None and not 0 < self.stand_in_threshold <= 1:
            raise BayestuneError(
                f"summary stand_in_threshold must be in (0, 1] or None, but got {self.stand_in_threshold!r}"
            )
        if self.max_columns < 0:
            raise BayestuneError(f"summary max_columns must be >= 0, but got {self.max_columns!r}")


@dataclass
class _Column:
    """One summary column: the metrics it reads (after their own scaling) and how it combines them."""

    name: str
    sources: list[str]  # original metric names
    loadings: np.ndarray | None = None  # factor-analysis projection over the standardised sources
    mean: np.ndarray | None = None  # factor-analysis mean of the standardised sources


@dataclass
class LogSummary:
    """A fitted summary: ``transform`` maps raw metric rows to its columns."""

    settings: SummarySettings
    kept: list[str] = field(default_factory=list)  # informative metrics, in column order of scaling
    logged: set[str] = field(default_factory=set)
    centre: dict[str, float] = field(default_factory=dict)
    scale: dict[str, float] = field(default_factory=dict)
    columns: list[_Column] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # constant or low-variance metrics
    stand_ins: dict[str, str] = field(default_factory=dict)  # set-aside metric or factor -> why

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def sources(self) -> dict[str, list[str]]:
        """Each summary column and the original metrics behind it (the mapping back)."""
        return {c.name: list(c.sources) for c in self.columns}

    def _scaled(self, metrics: Mapping[str, np.ndarray], name: str) -> np.ndarray:
        raw = np.asarray(metrics[name], dtype=float)
        if name in self.logged:
            raw = np.log(np.maximum(raw, 1e-300))
        return (raw - self.centre[name]) / self.scale[name]

    def transform(self, metrics: Mapping[str, np.ndarray]) -> np.ndarray:
        """The summary columns (N, k) of metric columns ``metrics`` (name -> (N,) values)."""
        missing = sorted({s for c in self.columns for s in c.sources} - set(metrics))
        if missing:
            raise BayestuneError(f"log summary: metric(s) {missing[:8]} are missing from the rows to summarise")
        n = len(next(iter(metrics.values()))) if metrics else 0
        out = np.empty((n, len(self.columns)))
        for j, column in enumerate(self.columns):
            Z = np.column_stack([self._scaled(metrics, s) for s in column.sources])
            if column.loadings is None:
                out[:, j] = Z[:, 0]
            else:
                out[:, j] = (Z - column.mean) @ column.loadings
        return out


def _parent_key(key: str) -> str:
    return key.rsplit(".", 1)[0] if "." in key else key


def _factor(Z: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One factor of the columns of ``Z``: scores, projection and mean (scores = (Z - mean) @ projection)."""
    from sklearn.decomposition import FactorAnalysis

    fa = FactorAnalysis(n_components=1, random_state=seed).fit(Z)
    # FactorAnalysis.transform is linear: (Z - mean) @ W.T (Ψ⁻¹-weighted); recover it once as a matrix.
    mean = fa.mean_.copy()
    basis = fa.transform(mean + np.eye(Z.shape[1])) - fa.transform(mean.reshape(1, -1))
    projection = basis[:, 0]
    scores = (Z - mean) @ projection
    sd = float(np.std(scores))
    if sd > 1e-12:
        projection = projection / sd
        scores = scores / sd
    # orient the factor like the group's mean, so "high" reads as "the counters are high"
    if float(np.dot(scores, Z.mean(axis=1))) < 0:
        projection, scores = -projection, -scores
    return scores, projection, mean


def _ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks, centred and scaled to unit length (a zero vector for a constant column)."""
    from scipy.stats import rankdata

    r = rankdata(values) - (len(values) + 1) / 2.0
    norm = float(np.sqrt(r @ r))
    return r / norm if norm > 0 else r


def find_stand_ins(
    metrics: Mapping[str, np.ndarray],
    objective: np.ndarray | None,
    *,
    threshold: float,
    objective_name: str = "the objective",
    protected: Sequence[str] = (),
) -> dict[str, str]:
    """The metrics to set aside, each with why: those whose rank correlation with ``objective``
    reaches ``threshold`` in size (stand-ins for it), then of those left, every metric whose
    rank correlation with an earlier kept one does (a function of it; the one with the most
    distinct values is kept, ties by name). ``protected`` metrics are never set aside, but others
    may duplicate them."""
    names = sorted(metrics, key=lambda n: (n not in protected, -len(np.unique(metrics[n])), n))
    if not names:
        return {}
    R = np.column_stack([_ranks(np.asarray(metrics[n], dtype=float)) for n in names])
    out: dict[str, str] = {}
    if objective is not None:
        rho = _ranks(np.asarray(objective, dtype=float)) @ R
        for i, n in enumerate(names):
            if n not in protected and abs(rho[i]) >= threshold:
                out[n] = f"a function of {objective_name} (rank correlation {rho[i]:+.4f})"
    kept: list[int] = []
    for i, n in enumerate(names):
        if n in out:
            continue
        if kept and n not in protected:
            rho = R[:, kept].T @ R[:, i]
            j = int(np.argmax(np.abs(rho)))
            if abs(rho[j]) >= threshold:
                out[n] = f"a function of {names[kept[j]]} (rank correlation {rho[j]:+.4f})"
                continue
        kept.append(i)
    return out


def summarise(
    metrics: Mapping[str, Sequence[float] | np.ndarray],
    *,
    settings: SummarySettings | None = None,
    protected: Sequence[str] = (),
    seed: int = 0,
    objective: Sequence[float] | np.ndarray | None = None,
    objective_name: str = "the objective",
) -> LogSummary:
    """Fit a :class:`LogSummary` to metric columns (name -> values of N evaluations).

    ``protected`` metrics (those an expert names, the target) are kept as their own columns,
    never grouped nor dropped. ``objective`` (its N values) enables the stand-in test (module
    docstring) from :data:`STAND_IN_MIN_ROWS` rows on; without it, only metrics that are
    functions of each other are set aside.
    """
    settings = settings or SummarySettings()
    data = {str(k): np.asarray(v, dtype=float) for k, v in metrics.items()}
    lengths = {len(v) for v in data.values()}
    if len(lengths) > 1:
        raise BayestuneError(f"log summary: metric columns have different lengths {sorted(lengths)}")
    bad = sorted(k for k, v in data.items() if not np.all(np.isfinite(v)))
    if bad:
        raise BayestuneError(f"log summary: metric(s) {bad[:8]} hold NaN or infinite values")
    summary = LogSummary(settings)
    for name, values in data.items():
        positive = bool(np.all(values > 0))
        use_log = positive and values.max() >= LOG_SPAN * values.min()
        t = np.log(values) if use_log else values
        centre, spread = float(np.mean(t)), float(np.std(t))
        if name not in protected and not spread > MIN_RELATIVE_STD * (abs(centre) + 1e-300):
            summary.dropped.append(name)
            continue
        if use_log:
            summary.logged.add(name)
        summary.kept.append(name)
        summary.centre[name], summary.scale[name] = centre, (spread if spread > 0 else 1.0)
    if summary.dropped:
        logger.debug("log summary: dropped %d constant metric(s): %s", len(summary.dropped), summary.dropped[:10])
    n_rows = next(iter(lengths), 0)
    # the stand-in threshold, when there are enough rows to look for stand-ins
    look = settings.stand_in_threshold if n_rows >= STAND_IN_MIN_ROWS else None
    target = None if objective is None else np.asarray(objective, dtype=float)
    if target is not None and target.shape != (n_rows,):
        raise BayestuneError(f"log summary: the objective has {target.size} values for {n_rows} rows of metrics")
    if look is not None:
        summary.stand_ins = find_stand_ins(
            {n: data[n] for n in summary.kept},
            target,
            threshold=float(look),
            objective_name=objective_name,
            protected=protected,
        )
        summary.kept = [n for n in summary.kept if n not in summary.stand_ins]
    own = [n for n in summary.kept if n in protected or not settings.grouping]
    grouped = [n for n in summary.kept if n not in own]
    columns = [_Column(n, [n]) for n in own]
    # the first level: groups by prefix; a group of one stays that metric
    groups: dict[str, list[str]] = {}
    for name in grouped:
        groups.setdefault(_parent_key(name), []).append(name)
    level = _reduce(groups, summary, data, seed)
    while settings.max_columns and len(columns) + len(level) > settings.max_columns:
        regrouped: dict[str, list[str]] = {}
        for column in level:
            regrouped.setdefault(_parent_key(column.name), []).extend(column.sources)
        if len(regrouped) == len(level):  # the top of the hierarchy: nothing left to merge
            break
        level = _reduce(regrouped, summary, data, seed)
    summary.columns = columns + level
    if look is not None and target is not None:
        _drop_tracking_factors(summary, data, target, float(look), objective_name)
    return summary


def _drop_tracking_factors(
    summary: LogSummary, data: Mapping[str, np.ndarray], objective: np.ndarray, threshold: float, objective_name: str
) -> None:
    """Set aside the factor columns whose rank correlation with ``objective`` reaches ``threshold``."""
    factors = [c for c in summary.columns if c.loadings is not None]
    if not factors:
        return
    Z = summary.transform(data)
    target = _ranks(objective)
    keep = []
    for j, column in enumerate(summary.columns):
        rho = float(target @ _ranks(Z[:, j]))
        if column.loadings is not None and abs(rho) >= threshold:
            summary.stand_ins[column.name] = (
                f"a factor of {len(column.sources)} metrics that is a function of "
                f"{objective_name} (rank correlation {rho:+.4f})"
            )
        else:
            keep.append(column)
    summary.columns = keep


def _reduce(
    groups: Mapping[str, list[str]], summary: LogSummary, data: Mapping[str, np.ndarray], seed: int
) -> list[_Column]:
    """One column per group: the metric itself for a group of one, else its factor."""
    out: list[_Column] = []
    for key, names in groups.items():
        if len(names) == 1:
            out.append(_Column(names[0], [names[0]]))
            continue
        Z = np.column_stack([summary._scaled(data, n) for n in names])
        _, projection, mean = _factor(Z, seed)
        out.append(_Column(key, list(names), projection, mean))
    return out
