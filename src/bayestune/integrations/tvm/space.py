"""The sampling decisions of MetaSchedule design spaces as one bayestune :class:`Space`
(no TVM import here: the decisions arrive as plain records, so this part is testable alone).

Representation of the conditional space: a categorical ``design`` picks the design space
(left out when there is one), and the decisions of all design spaces are merged by
*signature*: the k-th perfect tile of a loop named ``i`` with extent 256, 4 levels and cap 64
is one parameter wherever it occurs, so design spaces that differ only in, say, where a
cache write goes (MultiLevelTiling's three variants) share every knob and the model learns
across them. A decision that a design space lacks is *inactive* there: its value is ignored
when that design is applied, and the strategy answers a configuration whose decisions (as
TVM applied them) equal an already measured program with that measurement instead of
building it again, so the surrogate sees the inactive direction as flat rather than as noise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bayestune.space import Categorical, Parameter, PerfectTile, Space
from bayestune.space.perfect_tile import prime_factors

#: The parameter choosing the design space.
DESIGN = "design"
#: The objective every trial reports: the mean of the runner's ``run_secs``.
OBJECTIVE = "run_secs"
#: The sampling instructions that become parameters; any other keeps its design-space decision.
TUNED_SAMPLES = ("SamplePerfectTile", "SampleCategorical", "SampleComputeLocation")


@dataclass(frozen=True)
class Decision:
    """One sampling instruction of a design-space trace, as bayestune needs to know it.

    ``kind`` is ``tile`` (SamplePerfectTile: ``extent``, ``levels``, ``max_innermost``),
    ``categorical`` (SampleCategorical: ``choices`` are its candidate values, the decision an
    index into them) or ``compute_location`` (SampleComputeLocation: ``choices`` are the valid
    location indices, -2 inline, -1 root, k the k-th loop). ``label`` names it for people
    (the loop or block name). ``default`` is the design space's own decision.
    """

    kind: str
    label: str
    default: Any
    extent: int = 0
    levels: int = 0
    max_innermost: int | None = None
    choices: tuple = ()

    def signature(self) -> tuple:
        return (self.kind, self.label, self.extent, self.levels, self.max_innermost, self.choices)


def _identifier(text: str) -> str:
    name = re.sub(r"\W", "_", text).strip("_") or "x"
    return name if name[0].isalpha() else f"x_{name}"


class DesignSpaces:
    """The merged space of several design spaces and the way back to TVM decisions."""

    def __init__(self, spaces: Sequence[Sequence[Decision]]) -> None:
        if not spaces:
            raise ValueError("MetaSchedule produced no design space to tune")
        self.spaces = [list(s) for s in spaces]
        names: dict[tuple, str] = {}  # (signature, occurrence) -> parameter name
        self.slots: list[list[str]] = []  # per design space, per decision: its parameter
        params: list[Parameter] = []
        used: set[str] = {DESIGN}
        for decisions in self.spaces:
            seen: dict[tuple, int] = {}
            slots = []
            for dec in decisions:
                sig = dec.signature()
                occurrence = seen.get(sig, 0)
                seen[sig] = occurrence + 1
                if (sig, occurrence) not in names:
                    name = base = _identifier(
                        dec.label
                        if dec.kind == "categorical"
                        else f"{'tile' if dec.kind == 'tile' else 'loc'}_{dec.label}"
                    )
                    k = 1
                    while name in used:
                        name, k = f"{base}_{k}", k + 1
                    used.add(name)
                    names[(sig, occurrence)] = name
                    params.append(self._parameter(name, dec))
                slots.append(names[(sig, occurrence)])
            self.slots.append(slots)
        if len(self.spaces) > 1:
            params.insert(0, Categorical(DESIGN, list(range(len(self.spaces)))))
        if not params:  # nothing to decide: one design space without sampling instructions
            params.append(Categorical(DESIGN, [0]))
        self.space = Space(params)

    @staticmethod
    def _parameter(name: str, dec: Decision) -> Parameter:
        if dec.kind == "tile":
            default = dec.default if dec.default is not None and _is_tiling(dec) else None
            return PerfectTile(name, dec.extent, dec.levels, max_innermost=dec.max_innermost, default=default)
        if dec.kind in ("categorical", "compute_location"):
            values = list(dec.choices)
            default = values[dec.default] if dec.kind == "categorical" else dec.default
            return Categorical(name, values, default=default if default in values else None)
        raise ValueError(f"unknown decision kind {dec.kind!r}")

    def design_of(self, config: Mapping[str, Any]) -> int:
        return int(config.get(DESIGN, 0))

    def decisions(self, config: Mapping[str, Any]) -> list[Any]:
        """The TVM decisions of ``config``'s design space, in trace order."""
        d = self.design_of(config)
        out: list[Any] = []
        for dec, name in zip(self.spaces[d], self.slots[d]):
            value = config[name]
            if dec.kind == "tile":
                out.append([int(v) for v in value])
            elif dec.kind == "categorical":
                out.append(list(dec.choices).index(value))
            else:
                out.append(int(value))
        return out

    def config_of(self, design: int, decisions: Sequence[Any]) -> dict[str, Any] | None:
        """The configuration applying ``decisions`` to ``design`` (inverse of :meth:`decisions`;
        the design's inactive parameters keep their defaults); None if a decision is outside the space."""
        decs, slots = self.spaces[design], self.slots[design]
        if len(decs) != len(decisions):
            return None
        config = self.space.default_config()
        if DESIGN in self.space.names:
            config[DESIGN] = design
        for dec, name, value in zip(decs, slots, decisions):
            if dec.kind == "tile":
                value = tuple(int(v) for v in value)
                if not _is_tiling(Decision("tile", "", value, dec.extent, dec.levels, dec.max_innermost)):
                    return None
            elif dec.kind == "categorical":
                if not 0 <= int(value) < len(dec.choices):
                    return None
                value = dec.choices[int(value)]
            elif int(value) not in dec.choices:
                return None
            config[name] = value if dec.kind != "compute_location" else int(value)
        return config


def _is_tiling(dec: Decision) -> bool:
    try:
        f = [int(v) for v in dec.default]
    except TypeError:
        return False
    return (
        len(f) == dec.levels
        and math.prod(f) == dec.extent
        and all(v >= 1 for v in f)
        and (dec.max_innermost is None or f[-1] <= dec.max_innermost)
    )


def read_decisions(trace: Any) -> list[Any]:
    """The sampling decisions a TVM trace holds (after TVM applied and normalised them), in
    trace order: a tile as a list of factors, a categorical or compute location as an int."""
    out = []
    for inst in trace.insts:
        if inst.kind.name in TUNED_SAMPLES:
            d = trace.get_decision(inst)
            out.append([int(v) for v in d] if inst.kind.name == "SamplePerfectTile" else int(d))
    return out


def balanced_tiling(extent: int, levels: int, max_innermost: int | None = None) -> list[int]:
    """An ordered factorisation of ``extent`` into ``levels`` factors as even as the divisors
    allow (largest first, the innermost within ``max_innermost``): every loop of the split
    longer than 1 where the extent has enough factors, so no loop is dropped."""
    factors = [1] * levels
    for prime in sorted(prime_factors(extent), reverse=True):  # each prime to the smallest factor so far
        factors[factors.index(min(factors))] *= prime
    factors.sort(reverse=True)
    if max_innermost is not None:
        while factors[-1] > max_innermost:  # move the innermost's excess outwards
            q = next(d for d in range(2, factors[-1] + 1) if factors[-1] % d == 0)
            factors[-1] //= q
            factors[0] *= q
    return factors


def canonical_decisions(decisions: Sequence[Decision]) -> list[Any]:
    """Decisions that depend on the operator only (not on the sampled trace): each tile
    :func:`balanced_tiling`, each categorical its first choice, each compute location as sampled
    (the one being probed is replaced)."""
    out: list[Any] = []
    for dec in decisions:
        if dec.kind == "tile":
            out.append(balanced_tiling(int(dec.extent or 1), int(dec.levels or 1), dec.max_innermost))
        elif dec.kind == "categorical":
            out.append(0)
        else:
            out.append(dec.default)
    return out


def canonical_defaults(decisions: Sequence[Decision]) -> list[Decision]:
    """The decisions with defaults that depend on the operator only, so the first configuration
    (and with it the run) is reproducible from the seed: :func:`canonical_decisions`, and a
    compute location at the root (-1) when its choices have it."""
    values = canonical_decisions(decisions)
    out = []
    for dec, value in zip(decisions, values):
        if dec.kind == "compute_location":
            value = -1 if -1 in dec.choices else (dec.choices[0] if dec.choices else dec.default)
        out.append(Decision(dec.kind, dec.label, value, dec.extent, dec.levels, dec.max_innermost, dec.choices))
    return out
