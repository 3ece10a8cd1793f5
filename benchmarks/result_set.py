"""The runs a report reads: records deduplicated and grouped by problem and strategy, with each
problem's optimum, and the two questions every report section asks of a record (several
objectives? a variant of a strategy?). Shared by :mod:`benchmarks.results_report` and
:mod:`benchmarks.generalisation`, so neither has to import the other's helpers."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from benchmarks import metrics
from benchmarks.multiobjective_problems import MULTIOBJECTIVE_PROBLEMS

KIND_ORDER = {"gpu": 0, "synthetic": 1, "halide": 2}


def is_variant(strategy: str) -> bool:
    """``bo:key=value+...``: a variant of a strategy (see :func:`benchmarks.contenders.parse_variant`)."""
    return ":" in strategy


def is_multiobjective(record: dict[str, Any]) -> bool:
    return len(record.get("objectives") or ()) > 1 or record.get("problem") in MULTIOBJECTIVE_PROBLEMS


class Results:
    """Deduplicated runs grouped by problem and strategy, with each problem's optimum."""

    def __init__(self, records: Sequence[dict[str, Any]]) -> None:
        self.errors = [r for r in records if r.get("error")]
        chosen: dict[tuple[str, str, int], dict[str, Any]] = {}
        for r in records:
            if r.get("error"):
                continue
            key = (r["problem"], r["strategy"], int(r["seed"]))
            if key not in chosen or int(r["budget"]) >= int(chosen[key]["budget"]):
                chosen[key] = r
        self.runs = list(chosen.values())
        self.by_cell: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for r in self.runs:
            self.by_cell[(r["problem"], r["strategy"])].append(r)
        for runs in self.by_cell.values():
            runs.sort(key=lambda r: int(r["seed"]))
        kinds = {r["problem"]: r.get("kind", "?") for r in self.runs}
        self.problems = sorted(kinds, key=lambda p: (KIND_ORDER.get(kinds[p], 9), p))
        self.kinds = kinds
        order = {"bo": 0}
        self.strategies = sorted({r["strategy"] for r in self.runs}, key=lambda s: (order.get(s, 1), s))
        self.optimum: dict[str, float] = {}
        self.optimum_note: dict[str, str] = {}
        for p in self.problems:
            known = [r.get("optimum") for r in self.runs if r["problem"] == p and r.get("optimum")]
            if known:
                self.optimum[p] = float(known[0])
                self.optimum_note[p] = next(r.get("optimum_source") or "known" for r in self.runs if r["problem"] == p)
            else:
                vals = [v for r in self.runs if r["problem"] == p for v in r.get("values", []) if v is not None]
                if vals:
                    self.optimum[p] = float(min(vals))
                    self.optimum_note[p] = "run-best"
        self.budgets = sorted({int(b) for r in self.runs for b in (r.get("budgets") or [r["budget"]])})
        self.max_budget = max((int(r["budget"]) for r in self.runs), default=0)

    def problem_budget(self, problem: str) -> int:
        """The largest budget every run of ``problem`` reached (problems may be run shorter)."""
        return min((int(r["budget"]) for r in self.runs if r["problem"] == problem), default=0)

    def values(self, problem: str, strategy: str) -> list[list[float | None]]:
        return [r.get("values", []) for r in self.by_cell.get((problem, strategy), [])]

    def relative(self, problem: str, strategy: str, budget: int) -> list[float]:
        opt = self.optimum.get(problem)
        if not opt:
            return []
        return [
            metrics.best_at(r["values"], budget) / opt
            for r in self.by_cell.get((problem, strategy), [])
            if r.get("values") and int(r["budget"]) >= budget
        ]  # shorter runs say nothing at this budget

    def cell_mean(self, problem: str, strategy: str, budget: int) -> float:
        rel = self.relative(problem, strategy, budget)
        return metrics.mean_std(rel)[0] if rel else math.nan
