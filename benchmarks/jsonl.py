"""The JSON-lines files of the benchmarks (results and measurement caches): durable appends, tolerant reads.

Large committed result files are gzip-compressed (``*.jsonl.gz``); both functions take either form, and an
append to a ``.gz`` file adds a gzip member, which readers see as one stream."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def append_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Append ``record`` as one line and flush it to disk. A last line torn by a killed run is
    ended first, so the new record is never glued onto it (readers skip the torn line)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record) + "\n").encode("utf-8")
    if path.suffix == ".gz":
        with open(path, "ab") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
                fh.write(line)
            raw.flush()
            os.fsync(raw.fileno())
        return
    with open(path, "a+b") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell():
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def load_records(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every JSON line of a results file (a torn last line, e.g. after a kill, is ignored)."""
    p = Path(path)
    if not p.exists():
        return []
    out = []
    opened = gzip.open(p, "rt", encoding="utf-8") if p.suffix == ".gz" else open(p, encoding="utf-8")
    with opened as fh:
        for line in _lines(fh):
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def _lines(fh: Iterable[str]) -> Iterator[str]:
    """The lines of ``fh``; a gzip stream cut short by a killed append ends the lines it has."""
    try:
        yield from fh
    except (EOFError, OSError):
        return
