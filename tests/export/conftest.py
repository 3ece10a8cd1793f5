"""Small journals written directly (no optimizer), one per device, for export tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from bayestune.objectives import Objective
from bayestune.run import describe_run
from bayestune.scenario.records import DesignSpec
from bayestune.space import Categorical, Integer, Permutation, Real, Space
from bayestune.storage import Journal
from bayestune.trial import Result


def export_space() -> Space:
    """Names that are not C identifiers as they are: non-ASCII, reserved (``_P``), a keyword, the ``rank`` column."""
    return Space(
        [
            Integer("größe", 1, 64),
            Real("_Pass", 0.0, 1.0),
            Categorical("default", ["on", 'o"ff?']),
            Permutation("rank", 3),
        ]
    )


RUNTIME = (Objective("runtime"),)


def write_journal(
    path: Path, rows: list[tuple[dict, dict | None]], *, objectives=RUNTIME, meta: dict | None = None
) -> Path:
    """A journal of finished trials: ``(config, values)``, ``values=None`` for a failure."""
    with Journal(path) as journal:
        describe_run(
            journal,
            objectives=list(objectives),
            space=export_space(),
            strategy="random",
            strategy_options=None,
            seed=0,
            design=DesignSpec(),
        )
        for key, value in (meta or {}).items():
            journal.set_meta(key, value)
        for config, values in rows:
            result = Result(values) if values is not None else Result.failure("crashed", "crash")
            journal.record(config, result)
    return path


def config(tile: int, frac: float, mode: str = "on", order=(0, 1, 2)) -> dict:
    return {"größe": tile, "_Pass": frac, "default": mode, "rank": tuple(order)}


@pytest.fixture
def device_journals(tmp_path) -> dict[str, Path]:
    """Three devices, each best at a different tile; one failed trial each."""
    out = {}
    for device, best_tile in (("A100", 32), ("MI250X", 8), ("V100", 16)):
        rows = [
            (
                config(t, 0.1 * t / 64, "on" if t != best_tile else 'o"ff?', (2, 0, 1)),
                {"runtime": abs(t - best_tile) + 0.5 + t / 1000},
            )
            for t in (4, 8, 16, 32, 64)
        ]
        rows.append((config(2, 0.3), None))
        meta = {"device": device, "n": len(out) * 1000 + 1000}
        out[device] = write_journal(tmp_path / f"{device}.db", rows, meta=meta)
    return out
