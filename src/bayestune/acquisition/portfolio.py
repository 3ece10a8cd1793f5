"""A portfolio of acquisition functions that keeps the ones whose proposals turn out well.

After Kernel Tuner's "advanced multi" (its BO paper, section III-G): the members take turns
proposing (round robin, one acquisition optimised per suggestion, so a portfolio costs no
more than a single function). Each member is judged by the discounted mean of the outcomes
of its own proposals — ranks among all feasible observations, so the score does not depend on
the objective's scale; a failed proposal counts as the median. A member that trails the
portfolio mean by more than ``required_improvement`` for ``skip_threshold`` consecutive
judgements is dropped; one that leads by that much for as long becomes the only one.

Kernel Tuner's paper and its code disagree on the constants (checked against kernel_tuner
1.5.0, ``strategies/bayes_opt.py``); the defaults here follow Table I:

=====================  ===================  ==================  ======================
constant               text (§III-G)        Table I             code
=====================  ===================  ==================  ======================
discount               0.9 (``multi``)      0.65 multi,         0.65 multi, 0.95 every
                                            0.75 adv. multi     other portfolio
required improvement   5 %                  0.1                 0.1 (0.15 "precise")
skip threshold         "skip threshold"     5                   ``skip_duplicate_after``
score of a member      discounted sum of    –                   discounted *sum* of raw
                       observations                             observations (a member
                                                                that proposed more looks
                                                                worse); here a discounted
                                                                *mean of ranks*
exploration factor     λ = (σ̄²/(μs/f⁺))/σ̄²s  "CV"                mean *std*, not variance:
(§III-F)               (variances)                              λ = σ̄/(μs/f⁺)/σ̄s, and 0.01
                                                                before any optimum
=====================  ===================  ==================  ======================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass
class AcquisitionPortfolio:
    members: list[str] = field(default_factory=lambda: ["ei", "pi", "lcb"])
    discount: float = 0.75
    skip_threshold: int = 5
    required_improvement: float = 0.1
    _turn: int = 0
    _proposals: dict[bytes, str] = field(default_factory=dict)
    _behind: dict[str, int] = field(default_factory=dict)
    _ahead: dict[str, int] = field(default_factory=dict)

    def next_member(self) -> str:
        """The acquisition to optimise for the next suggestion."""
        name = self.members[self._turn % len(self.members)]
        self._turn += 1
        return name

    def record_proposal(self, key: bytes, member: str) -> None:
        self._proposals[key] = member

    def scores(self, keys: Sequence[bytes], values: np.ndarray, feasible: np.ndarray) -> dict[str, float]:
        """Discounted mean rank (0 best, 1 worst) of each member's proposals, oldest first."""
        ok = feasible & np.isfinite(values)
        if ok.sum() < 2:
            return {}
        ranks = np.full(len(values), 0.5)
        order = np.argsort(np.argsort(values[ok]))
        ranks[ok] = order / max(1, ok.sum() - 1)
        out: dict[str, float] = {}
        for member in self.members:
            mine = [i for i, k in enumerate(keys) if self._proposals.get(k) == member]
            if not mine:
                continue
            r = ranks[mine]
            w = self.discount ** np.arange(len(r) - 1, -1, -1)
            out[member] = float(np.sum(w * r) / np.sum(w))
        return out

    def update(self, keys: Sequence[bytes], values: np.ndarray, feasible: np.ndarray) -> None:
        """Judge the members on the history so far; drop laggards, promote a clear leader."""
        if len(self.members) == 1:
            return
        scores = self.scores(keys, values, feasible)
        if len(scores) < len(self.members):
            return
        mean = float(np.mean(list(scores.values())))
        margin = self.required_improvement * max(mean, 1e-9)
        for member, score in scores.items():
            self._behind[member] = self._behind.get(member, 0) + 1 if score > mean + margin else 0
            self._ahead[member] = self._ahead.get(member, 0) + 1 if score < mean - margin else 0
        leaders = [m for m in self.members if self._ahead.get(m, 0) >= self.skip_threshold]
        if leaders:
            self.members = [min(leaders, key=lambda m: scores[m])]
            return
        laggards = [m for m in self.members if self._behind.get(m, 0) >= self.skip_threshold]
        if laggards and len(laggards) < len(self.members):
            worst = max(laggards, key=lambda m: scores[m])
            self.members = [m for m in self.members if m != worst]
            self._behind = {}
            self._ahead = {}
