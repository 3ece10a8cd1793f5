"""Prior runs as rows of the new space: a journal, a CSV sample file or a Kernel Tuner cache,
read with the readers that already exist for them (storage, replay) and matched to the space by
parameter name.

A prior run must name exactly the space's parameters (a Kernel Tuner cache may also hold
constants the space does not vary); its configurations outside the space's known-feasible set
are dropped, since the new run could never evaluate them. Values are kept *signed to minimise*
(a maximised objective is negated), so every consumer ranks "lower is better".
"""

from __future__ import annotations

import csv
import glob
import logging
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bayestune.exceptions import BayestuneError, SpaceError
from bayestune.objectives import Objective
from bayestune.space.space import Space

logger = logging.getLogger(__name__)

#: File endings read as a Kernel Tuner cache, a CSV sample file and a SQLite journal.
CACHE_SUFFIXES = (".json", ".json.gz")
CSV_SUFFIXES = (".csv",)
JOURNAL_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".journal")


@dataclass(frozen=True)
class PriorRun:
    """One source run in the target space: raw rows ``X``, values ``y`` signed to minimise
    (NaN where the source failed), and where it came from (for messages)."""

    name: str
    X: np.ndarray
    y: np.ndarray

    def __post_init__(self) -> None:
        if self.X.ndim != 2 or self.y.shape != (self.X.shape[0],):
            raise BayestuneError(
                f"prior run {self.name!r}: X must be (n, width) and y (n,), but got {self.X.shape} and {self.y.shape}"
            )

    @property
    def feasible(self) -> np.ndarray:
        return np.isfinite(self.y)

    @property
    def n_feasible(self) -> int:
        return int(self.feasible.sum())

    @classmethod
    def from_configs(
        cls,
        space: Space,
        configs: Sequence[Mapping[str, Any]],
        values: Sequence[float | None],
        *,
        name: str = "<python>",
        minimize: bool = True,
    ) -> PriorRun:
        """A prior run from configuration dicts and their values (None/NaN: a failure)."""
        if len(configs) != len(values):
            raise BayestuneError(f"prior run {name!r}: {len(configs)} configurations but {len(values)} values")
        _check_names(space, [set(c) for c in configs], name, ignore=set())
        y = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
        y[~np.isfinite(y)] = np.nan
        return cls._build(space, [dict(c) for c in configs], y if minimize else -y, name)

    @classmethod
    def _build(cls, space: Space, configs: list[dict[str, Any]], y: np.ndarray, name: str) -> PriorRun:
        """Keep the configurations that are legal, known-feasible and distinct in ``space``."""
        rows, kept = [], []
        for i, config in enumerate(configs):
            try:
                rows.append(space.to_matrix([config])[0])
                kept.append(i)
            except SpaceError:
                continue
        X = np.array(rows).reshape(-1, space.width)
        y = y[kept]
        if len(X):
            ok = space.is_feasible(X)
            X, y = X[ok], y[ok]
            _, first = np.unique(np.array(space.row_keys(X), dtype=object), return_index=True)
            first = np.sort(first)
            X, y = X[first], y[first]
        dropped = len(configs) - len(X)
        if dropped:
            logger.info(
                "prior run %s: %d of %d configuration(s) are outside the space or repeated; dropped",
                name,
                dropped,
                len(configs),
            )
        run = cls(name, X, y)
        if run.n_feasible == 0:
            raise BayestuneError(
                f"prior run {name!r} has no successful evaluation inside this space "
                f"({len(configs)} read, {len(X)} in the space)"
            )
        return run


def _check_names(space: Space, config_keys: Sequence[set[str]], name: str, ignore: set[str]) -> None:
    """A prior run must name the space's parameters, no more (``ignore``: a cache's constants)."""
    wanted = set(space.names)
    for keys in config_keys:
        missing, extra = sorted(wanted - keys), sorted(keys - wanted - ignore)
        if missing or extra:
            raise BayestuneError(
                f"prior run {name!r} does not match the space: "
                f"missing parameter(s) {missing}, unknown parameter(s) {extra}; "
                f"the space has {sorted(wanted)}"
            )


def _suffix(path: Path) -> str:
    name = path.name.lower()
    for s in CACHE_SUFFIXES + CSV_SUFFIXES + JOURNAL_SUFFIXES:
        if name.endswith(s):
            return s
    return path.suffix.lower()


def load_prior_run(path: str | os.PathLike, space: Space, objective: Objective | str) -> PriorRun:
    """Read one prior run (journal, CSV or Kernel Tuner cache, by file ending) into ``space``.

    A journal and a CSV file must record ``objective``; a Kernel Tuner cache records ``time``
    (minimised), which is used whatever the objective is called.
    """
    objective = objective if isinstance(objective, Objective) else Objective(str(objective))
    p = Path(path)
    if not p.is_file():
        raise BayestuneError(f"prior run {str(p)!r}: no such file")
    try:
        return _read_prior_run(p, space, objective)
    except BayestuneError:
        raise
    except (ValueError, EOFError, OSError, RecursionError, csv.Error, zlib.error, MemoryError) as exc:
        # undecodable text, a CSV field over the limit, JSON nested 200,000 deep, a 5,000-digit
        # integer, a truncated .gz: a damaged file is one that cannot be read, said as such
        detail = str(exc).split("; use sys.set_int_max_str_digits")[0][:200]
        raise BayestuneError(f"prior run {str(p)!r}: cannot be read ({type(exc).__name__}: {detail})") from None


def _read_prior_run(p: Path, space: Space, objective: Objective) -> PriorRun:
    suffix = _suffix(p)
    if suffix in CACHE_SUFFIXES:
        return _from_cache(p, space)
    if suffix in CSV_SUFFIXES:
        return _from_csv(p, space, objective)
    if suffix in JOURNAL_SUFFIXES:
        return _from_journal(p, space, objective)
    raise BayestuneError(
        f"prior run {str(p)!r}: unknown file type {suffix!r}; expected a journal "
        f"{list(JOURNAL_SUFFIXES)}, a CSV file {list(CSV_SUFFIXES)} or a Kernel Tuner cache "
        f"{list(CACHE_SUFFIXES)}"
    )


def load_prior_runs(
    sources: Sequence[str | os.PathLike | PriorRun],
    space: Space,
    objective: Objective | str,
    *,
    exclude: Sequence[str | os.PathLike] = (),
) -> list[PriorRun]:
    """Every source as a :class:`PriorRun` (those already loaded pass through). A source may be
    a folder or a glob pattern (``caches/*.json``: one cache per GPU, as Kernel Tuner users keep
    them): its runs of this space are read, and the files that are not (another kernel, another
    file type) are skipped with a warning naming why; a folder or pattern that yields none is an
    error listing them. Files in ``exclude`` (the run's own journal: a resumed run with
    ``--prior-run .``) are never read as a source, whatever name reaches them."""
    runs: list[PriorRun] = []
    own = [Path(e) for e in exclude if Path(e).exists()]
    for source in sources:
        if isinstance(source, PriorRun):
            runs.append(source)
            continue
        files = expand_source(source)
        if files is None:
            if any(_same_file(Path(source), e) for e in own):
                raise BayestuneError(
                    f"prior run {str(source)!r} is this run's own journal: a run cannot be its own prior run"
                )
            runs.append(load_prior_run(source, space, objective))
            continue
        found, skipped = [], []
        for path in files:
            if any(_same_file(path, e) for e in own):
                logger.info("prior runs %s: %s is this run's own journal, not a prior run; left out", source, path)
                continue
            try:
                found.append(load_prior_run(path, space, objective))
            except BayestuneError as exc:
                skipped.append(str(exc))
        for reason in skipped:
            logger.warning("prior runs %s: skipped %s", source, reason)
        if not found:
            raise BayestuneError(
                f"prior runs {str(source)!r}: no run of this space among {len(files)} file(s)"
                + (f": {'; '.join(skipped[:5])}" if skipped else "")
            )
        runs.extend(found)
    return runs


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def expand_source(source: str | os.PathLike) -> list[Path] | None:
    """The files of a folder or glob pattern with a prior run's ending, sorted (None: one file)."""
    text = str(source)
    if Path(text).is_dir():
        candidates = sorted(p for p in Path(text).iterdir() if p.is_file())
    elif any(ch in text for ch in "*?["):
        candidates = sorted(Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file())
    else:
        return None
    known = CACHE_SUFFIXES + CSV_SUFFIXES + JOURNAL_SUFFIXES
    return [p for p in candidates if _suffix(p) in known]


def _from_cache(path: Path, space: Space) -> PriorRun:
    from bayestune.evaluators.replay import _failure_kind, load_kernel_tuner_cache
    from bayestune.exceptions import EvaluationError

    try:
        replay = load_kernel_tuner_cache(path)
    except EvaluationError as exc:
        raise BayestuneError(f"prior run {str(path)!r}: {exc}") from None
    names = replay.space.names
    _check_names(space, [set(names) | set(replay.constants)], str(path), ignore=set(replay.constants))
    configs, y = [], []
    for key, record in replay.records.items():
        config = dict(zip(names, key))
        config.update({k: v for k, v in replay.constants.items() if k in space.names})
        configs.append({k: config[k] for k in space.names})
        y.append(np.nan if _failure_kind(record) is not None else float(record["time"]))
    return PriorRun._build(space, configs, np.array(y, dtype=float), str(path))


def _from_rows(
    rows: Sequence[tuple[Mapping[str, Any], bool, Mapping[str, float]]], space: Space, objective: Objective, name: str
) -> PriorRun:
    """``rows`` of (configuration, succeeded, values) as a prior run of ``objective``."""
    if not rows:
        raise BayestuneError(f"prior run {name!r} holds no finished evaluation")
    _check_names(space, [set(c) for c, _, _ in rows], name, ignore=set())
    recorded = {k for _, ok, values in rows if ok for k in values}
    if recorded and objective.name not in recorded:
        raise BayestuneError(
            f"prior run {name!r} does not record objective {objective.name!r}; it records {sorted(recorded)}"
        )
    sign = 1.0 if objective.minimize else -1.0
    y = np.array([sign * float(values.get(objective.name, np.nan)) if ok else np.nan for _, ok, values in rows])
    y[~np.isfinite(y)] = np.nan
    return PriorRun._build(space, [dict(c) for c, _, _ in rows], y, name)


def _from_journal(path: Path, space: Space, objective: Objective) -> PriorRun:
    from bayestune.exceptions import JournalError
    from bayestune.storage.journal import Journal
    from bayestune.trial import TrialStatus

    try:
        journal = Journal.open(path, read_only=True)
    except JournalError as exc:
        raise BayestuneError(f"prior run {str(path)!r}: {exc}") from None
    try:
        trials = [t for t in journal.trials() if t.status is not TrialStatus.PENDING]
    finally:
        close = getattr(journal, "close", None)
        if close is not None:
            close()
    return _from_rows([(t.config, t.feasible, t.values) for t in trials], space, objective, str(path))


def _from_csv(path: Path, space: Space, objective: Objective) -> PriorRun:
    from bayestune.exceptions import JournalError
    from bayestune.storage.csv_io import import_csv
    from bayestune.trial import TrialStatus

    with open(path, newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh), [])
    _check_names(space, [set(header)], str(path), ignore=set(header) - set(space.names))
    if objective.name not in header:
        raise BayestuneError(
            f"prior run {str(path)!r} has no column for objective {objective.name!r}; its columns are {header}"
        )
    feasible = next((h for h in header if h.lower() == "valid"), None)
    try:
        pairs = import_csv(path, parameters=space.parameters, objectives=[objective.name], feasible_column=feasible)
    except JournalError as exc:
        raise BayestuneError(f"prior run {str(path)!r}: {exc}") from None
    return _from_rows([(c, r.status is TrialStatus.OK, r.values) for c, r in pairs], space, objective, str(path))
