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

How the judging runs differs as well. The default (``kt_rounds=False``, the ``portfolio``
acquisition of ``bo``) judges after every suggestion and counts *consecutive* judgements
behind/ahead, checking for a leader before a laggard. Kernel Tuner's ``multi-advanced``
(``kt_rounds=True``, ``bo``'s ``advanced_multi``) judges once per round (after every active
member has proposed once), keeps *cumulative* counts (reset only when a member is dropped),
drops a laggard before it promotes a leader, and, with ties in the count, picks the worse
(better) score. One difference is kept on purpose in both: Kernel Tuner fits its GP once per
round and lets the three members pick from the same stale predictions (removing the earlier
picks); here the model is refitted after every evaluation, as for a single acquisition.
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
    kt_rounds: bool = False
    _turn: int = 0
    _since_judged: int = 0
    _proposals: dict[bytes, str] = field(default_factory=dict)
    _behind: dict[str, int] = field(default_factory=dict)
    _ahead: dict[str, int] = field(default_factory=dict)

    def next_member(self) -> str:
        """The acquisition to optimise for the next suggestion."""
        name = self.members[self._turn % len(self.members)]
        self._turn += 1
        self._since_judged += 1
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
        if self.kt_rounds:
            if self._since_judged < len(self.members):
                return  # judge once per round, when every active member has proposed again
            self._since_judged = 0
        scores = self.scores(keys, values, feasible)
        if len(scores) < len(self.members):
            return
        if self.kt_rounds:
            self._judge_round(scores)
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

    def _judge_round(self, scores: dict[str, float]) -> None:
        """Kernel Tuner's rule: cumulative counts; drop the most-often-behind member (ties: worse
        score) once it reaches the threshold and reset all counts; else promote the most-often-ahead."""
        mean = float(np.mean(list(scores.values())))
        for member, score in scores.items():
            if score > mean * (1 + self.required_improvement):
                self._behind[member] = self._behind.get(member, 0) + 1
            elif score < mean * (1 - self.required_improvement):
                self._ahead[member] = self._ahead.get(member, 0) + 1
        worst = max(self.members, key=lambda m: (self._behind.get(m, 0), scores[m]))
        if self._behind.get(worst, 0) >= self.skip_threshold:
            self.members = [m for m in self.members if m != worst]
            self._behind, self._ahead = {}, {}
            self._turn = 0
            return
        best = max(self.members, key=lambda m: (self._ahead.get(m, 0), -scores[m]))
        if self._ahead.get(best, 0) >= self.skip_threshold:
            self.members = [best]
