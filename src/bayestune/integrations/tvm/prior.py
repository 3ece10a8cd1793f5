"""Earlier tuning runs of the same operator as prior runs for transfer: MetaSchedule work
directories and tuning logs (``database_tuning_record.json`` with its
``database_workload.json``) and bayestune journals, each read into the merged decision space
(imports TVM: use through :mod:`bayestune.integrations.tvm`).

A MetaSchedule record is a trace; its sampling decisions become a configuration of the design
space that, given those decisions, makes the same program (decisions a design lacks keep the
space's default). Records of another operator (not structurally equal to the module being tuned) are
refused and counted. A folder holding both a bayestune journal and MetaSchedule's database (a
bayestune run's ``work_dir``) is read from the journal, which also has the failures.
"""

from __future__ import annotations

import glob
import logging
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bayestune.exceptions import BayestuneError
from bayestune.integrations.tvm.space import OBJECTIVE, DesignSpaces
from bayestune.transfer.runs import JOURNAL_SUFFIXES, PriorRun, load_prior_run

logger = logging.getLogger(__name__)

#: MetaSchedule's file names in a work directory.
RECORDS_FILE = "database_tuning_record.json"
WORKLOAD_FILE = "database_workload.json"
#: The journal :func:`~bayestune.integrations.tvm.tune` keeps in its work directory.
JOURNAL_FILE = "bayestune.journal.db"
#: MetaSchedule stores a failed candidate with this many seconds (or more).
FAILED_SECS = 1e9


def _sources(source: str | os.PathLike) -> list[Path]:
    """The files one source stands for: a file, a folder (a MetaSchedule work directory, a
    journal's folder, or a folder of such folders) or a glob of any of them."""
    text = str(source)
    if any(ch in text for ch in "*?[") and not Path(text).exists():
        matches = sorted(Path(p) for p in glob.glob(text, recursive=True))
        if not matches:
            raise BayestuneError(f"prior runs {text!r}: the pattern matches nothing")
        return [f for m in matches for f in _sources(m)]
    path = Path(text)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise BayestuneError(f"prior run {text!r}: no such file or folder")
    if (path / JOURNAL_FILE).is_file():
        return [path / JOURNAL_FILE]
    if (path / RECORDS_FILE).is_file():
        return [path / RECORDS_FILE]
    found = [p for p in sorted(path.iterdir()) if p.is_file() and p.name.endswith(JOURNAL_SUFFIXES)]
    for sub in sorted(p for p in path.iterdir() if p.is_dir()):
        if (sub / JOURNAL_FILE).is_file() or (sub / RECORDS_FILE).is_file():
            found += _sources(sub)
    if not found:
        raise BayestuneError(
            f"prior runs {text!r}: no MetaSchedule database ({RECORDS_FILE}) or bayestune "
            "journal in this folder or its subfolders"
        )
    return found


def read_prior_runs(
    sources: Sequence[Any], spaces: DesignSpaces, mod: Any, config_of: Callable[[Any], dict[str, Any] | None]
) -> tuple[list[PriorRun], list[str]]:
    """The prior runs of ``sources`` in ``spaces`` and one note per source saying what was
    read (and refused). ``config_of`` turns a MetaSchedule trace into a configuration (None: not one of this space)."""
    runs: list[PriorRun] = []
    notes: list[str] = []
    for source in sources:
        if isinstance(source, PriorRun):
            runs.append(source)
            continue
        for path in _sources(source):
            if path.name == RECORDS_FILE or path.suffix == ".json":
                run, note = _from_database(path, spaces, mod, config_of)
            else:
                run = load_prior_run(path, spaces.space, OBJECTIVE)
                note = f"{path}: {len(run.y)} trial(s) of a bayestune journal, {run.n_feasible} successful"
            runs.append(run)
            notes.append(note)
    return runs, notes


def _from_database(
    path: Path, spaces: DesignSpaces, mod: Any, config_of: Callable[[Any], dict[str, Any] | None]
) -> tuple[PriorRun, str]:
    """One MetaSchedule tuning log (with the workload file beside it) as a prior run."""
    import tvm_ffi
    from tvm.s_tir import meta_schedule as ms

    workloads = path.with_name(WORKLOAD_FILE)
    if not workloads.is_file():
        raise BayestuneError(
            f"prior run {str(path)!r}: MetaSchedule's workload file {WORKLOAD_FILE} is not "
            "beside it (a tuning log needs the workloads its records refer to)"
        )
    try:
        db = ms.database.JSONDatabase(str(workloads), str(path), allow_missing=False)
        records = db.get_all_tuning_records()
    except Exception as exc:  # noqa: BLE001 - TVM reports an unreadable file as any error
        raise BayestuneError(f"prior run {str(path)!r}: not a MetaSchedule database ({exc})") from None
    configs, values = [], []
    other_operator = outside = 0
    for rec in records:
        if not tvm_ffi.structural_equal(rec.workload.mod, mod):
            other_operator += 1
            continue
        config = config_of(rec.trace)
        if config is None:
            outside += 1
            continue
        secs = [float(s) for s in (rec.run_secs or [])]
        ok = secs and all(math.isfinite(s) and s < FAILED_SECS for s in secs)
        configs.append(config)
        values.append(sum(secs) / len(secs) if ok else None)
    note = (
        f"{path}: {len(configs)} record(s) of this operator read"
        + (f", {other_operator} of other operators refused" if other_operator else "")
        + (f", {outside} outside this decision space dropped" if outside else "")
    )
    if not configs:
        raise BayestuneError(
            f"prior run {str(path)!r}: no record of this operator "
            f"({len(records)} record(s), {other_operator} of other operators, "
            f"{outside} outside the decision space)"
        )
    return PriorRun.from_configs(spaces.space, configs, values, name=str(path)), note


__all__ = ["JOURNAL_FILE", "read_prior_runs"]
