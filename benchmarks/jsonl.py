"""The JSON-lines files of the benchmarks (results and measurement caches): durable appends, tolerant reads."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def append_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Append ``record`` as one line and flush it to disk. A last line torn by a killed run is
    ended first, so the new record is never glued onto it (readers skip the torn line)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell():
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")
        fh.write((json.dumps(record) + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def load_records(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every JSON line of a results file (a torn last line, e.g. after a kill, is ignored)."""
    p = Path(path)
    if not p.exists():
        return []
    out = []
    with open(p, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out
