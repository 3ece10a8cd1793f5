"""The schedule-knob vocabulary: knobs on named Halide Funcs and Vars, the :class:`Space` they make,
and the schedule they apply to a rebuilt pipeline (in the worker). Halide itself is never
imported here: the worker passes its ``hl`` module in."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from bayestune.space import Categorical, Ordinal, Permutation, Space


@dataclass
class Pipeline:
    """What a builder returns: the output Func, every schedulable Func by name, the input
    ``(ImageParam, numpy array)`` pairs and the output shape (Halide order: x first).
    ``rvars`` names the reduction variables knobs may schedule (e.g. ``{"k": k.x}`` for an
    ``RDom`` k), so an update-stage knob can say ``"k"``."""

    output: Any
    funcs: Mapping[str, Any]
    inputs: Sequence[tuple[Any, Any]] = ()
    shape: Sequence[int] = ()
    input_mins: Sequence[Sequence[int] | None] = ()  # per input, buffer mins (None = zeros)
    rvars: Mapping[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------
# Loops chosen by other knobs, and the context a schedule is applied in
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Loop:
    """A loop whose identity depends on another knob: the innermost (or outermost) of ``among``
    in the order that the :class:`Reorder` knob with parameter ``order`` gives its vars
    (``among`` empty: all of them). E.g. "compute at the inner tile loop, whichever of xo/yo
    the reorder put inside": ``Loop("out_order", ("xo", "yo"))``."""

    order: str
    among: Sequence[str] = ()
    pick: str = "innermost"

    def __post_init__(self) -> None:
        if self.pick not in ("innermost", "outermost"):
            raise ValueError(f"Loop.pick must be 'innermost' or 'outermost', but got {self.pick!r}")


class ScheduleContext:
    """One configuration being applied: the Funcs, the reduction variables (declared by the
    pipeline or made by splitting one), and the Reorder knobs that :class:`Loop` refers to."""

    def __init__(
        self,
        hl: Any,
        funcs: Mapping[str, Any],
        knobs: Sequence[Knob],
        config: Mapping[str, Any],
        rvars: Mapping[str, Any] | None = None,
    ) -> None:
        self.hl, self.funcs, self.config = hl, funcs, config
        self.rvars = dict(rvars or {})
        self.split_rvars: set[tuple[str, str]] = set()  # (func, name) made by splitting an RVar
        self.reorders = {k.name: k for k in knobs if isinstance(k, Reorder)}

    def loop_name(self, ref: str | Loop) -> str:
        if isinstance(ref, str):
            return ref
        reorder = self.reorders.get(ref.order)
        if reorder is None:
            raise KeyError(
                f"Loop refers to reorder parameter {ref.order!r}, but no Reorder knob has that name; "
                f"Reorder knobs: {sorted(self.reorders)}"
            )
        positions = reorder.value_in(self.config)
        among = list(ref.among) or list(reorder.vars)
        unknown = [v for v in among if v not in reorder.vars]
        if unknown:
            raise KeyError(
                f"Loop names var(s) {unknown} that Reorder {ref.order!r} does not order ({list(reorder.vars)})"
            )
        rank = {v: int(positions[i]) for i, v in enumerate(reorder.vars)}  # 0 = outermost
        return (max if ref.pick == "innermost" else min)(among, key=rank.__getitem__)

    def var(self, func: str, ref: str | Loop) -> Any:
        """The Var or RVar named by ``ref`` in ``func``'s schedule."""
        name = self.loop_name(ref)
        if name in self.rvars:
            return self.rvars[name]
        if (func, name) in self.split_rvars:
            return self.hl.RVar(name)
        return self.hl.Var(name)

    def is_rvar(self, func: str, name: str) -> bool:
        return name in self.rvars or (func, name) in self.split_rvars

    def stage(self, knob: Knob) -> Any:
        f = self.funcs[knob.func]
        return f if knob.update is None else f.update(knob.update)


# ---------------------------------------------------------------------------------------
# Knobs: each is one bayestune parameter and one scheduling call
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Knob(abc.ABC):
    """One schedule choice on the Func named ``func``: a bayestune parameter and a scheduling call.

    Keyword options every knob takes: ``param`` names its parameter (default e.g.
    ``out_split_x``); knobs with the same ``param`` share one parameter (they must declare the
    same values), so one choice can drive several calls. ``when`` applies the knob only when
    other parameters have one of the listed values (``{"compute_at": ["root"]}``). ``update``
    schedules the Func's update definition of that index instead of its pure definition.
    ``fixed`` makes the call with that value every time, with no parameter.
    """

    func: str
    param: str | None = field(default=None, kw_only=True)
    when: Mapping[str, Sequence[Any]] | None = field(default=None, kw_only=True)
    update: int | None = field(default=None, kw_only=True)
    fixed: Any = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.when is not None:  # one canonical form, so knobs compare equal after a JSON round trip
            object.__setattr__(self, "when", {str(n): tuple(v) for n, v in self.when.items()})

    @property
    def name(self) -> str:
        """The parameter's name (a Python identifier, e.g. ``out_split_x``)."""
        return self.param or self.default_name()

    @abc.abstractmethod
    def default_name(self) -> str:
        """The parameter's name when ``param`` is not given."""

    @abc.abstractmethod
    def parameter(self) -> Any:
        """The bayestune parameter whose values this knob takes."""

    @abc.abstractmethod
    def apply(self, ctx: ScheduleContext, value: Any) -> None:
        """Make the scheduling call for ``value`` on the Func (or its update stage)."""

    def value_in(self, config: Mapping[str, Any]) -> Any:
        return self.fixed if self.fixed is not None else config[self.name]

    def applies(self, config: Mapping[str, Any]) -> bool:
        return all(config[name] in list(values) for name, values in (self.when or {}).items())


def _positive_ints(knob: str, values: Sequence[int]) -> list[int]:
    out = [int(v) for v in values]
    if not out or any(v < 1 for v in out) or out != [int(v) for v in values]:
        raise ValueError(f"knob {knob!r}: factors must be a non-empty list of integers >= 1, but got {list(values)!r}")
    return out


def _is_pow2_list(values: Sequence[int]) -> bool:
    return len(values) > 2 and all(v > 0 and v & (v - 1) == 0 for v in values)


@dataclass(frozen=True)
class Split(Knob):
    """``func.split(var, outer, inner, factor)``; factor chosen from ``factors``. Splitting a
    reduction variable (in an update stage) makes ``outer`` and ``inner`` reduction variables."""

    var: str = "x"
    outer: str = "xo"
    inner: str = "xi"
    factors: Sequence[int] = (8, 16, 32, 64)
    default: int | None = None

    def default_name(self) -> str:
        return f"{self.func}_split_{self.var}"

    def parameter(self) -> Any:
        f = _positive_ints(self.name, self.factors)
        return Ordinal(self.name, f, log=_is_pow2_list(f), default=self.default)

    def apply(self, ctx: ScheduleContext, value: Any) -> None:
        var = ctx.var(self.func, self.var)
        if ctx.is_rvar(self.func, self.var):
            ctx.split_rvars.update({(self.func, self.outer), (self.func, self.inner)})
        ctx.stage(self).split(var, ctx.var(self.func, self.outer), ctx.var(self.func, self.inner), int(value))


@dataclass(frozen=True)
class Reorder(Knob):
    """Loop order of ``vars`` as a permutation: value[i] = position of ``vars[i]``, 0 = outermost."""

    vars: Sequence[str] = ()
    default: Sequence[int] | None = None

    def default_name(self) -> str:
        return f"{self.func}_order"

    def parameter(self) -> Any:
        if len(self.vars) < 2 or len(set(self.vars)) != len(self.vars):
            raise ValueError(f"knob {self.name!r}: reorder needs >= 2 distinct vars, but got {list(self.vars)!r}")
        return Permutation(self.name, len(self.vars), default=self.default)

    def apply(self, ctx: ScheduleContext, value: Any) -> None:
        innermost_first = sorted(range(len(self.vars)), key=lambda e: -int(value[e]))
        ctx.stage(self).reorder(*[ctx.var(self.func, self.vars[e]) for e in innermost_first])


class _VarFactorKnob(Knob):
    """``func.<call>(var, k)`` with ``k`` from a list of integers; ``k = 1`` makes no call.
    Subclasses declare ``var``, the list and ``default`` as fields and name the call."""

    call: ClassVar[str]
    # Declared for the type checker only: this class is no dataclass, the subclasses make them fields.
    var: str
    default: int | None

    @abc.abstractmethod
    def choices(self) -> Sequence[int]:
        """The values ``k`` may take."""

    def default_name(self) -> str:
        return f"{self.func}_{self.call}_{self.var}"

    def parameter(self) -> Any:
        return Ordinal(self.name, _positive_ints(self.name, self.choices()), default=self.default)

    def apply(self, ctx: ScheduleContext, value: Any) -> None:
        if int(value) > 1:
            getattr(ctx.stage(self), self.call)(ctx.var(self.func, self.var), int(value))


@dataclass(frozen=True)
class Vectorize(_VarFactorKnob):
    """``func.vectorize(var, width)``; width 1 = not vectorized."""

    call: ClassVar[str] = "vectorize"
    var: str = "x"
    widths: Sequence[int] = (1, 4, 8, 16)
    default: int | None = None

    def choices(self) -> Sequence[int]:
        return self.widths


@dataclass(frozen=True)
class Unroll(_VarFactorKnob):
    """``func.unroll(var, factor)``; factor 1 = not unrolled. Large factors can make compiles
    last minutes: the evaluation timeout bounds them."""

    call: ClassVar[str] = "unroll"
    var: str = "x"
    factors: Sequence[int] = (1, 2, 4)
    default: int | None = None

    def choices(self) -> Sequence[int]:
        return self.factors


@dataclass(frozen=True)
class Parallel(Knob):
    """``func.parallel(var)`` or not; ``var`` may be a :class:`Loop` (e.g. the outermost loop
    of a reorder)."""

    var: str | Loop = "y"
    default: bool | None = None

    def default_name(self) -> str:
        return f"{self.func}_parallel_{self.var if isinstance(self.var, str) else 'loop'}"

    def parameter(self) -> Any:
        return Categorical(self.name, [False, True], default=self.default)

    def apply(self, ctx: ScheduleContext, value: Any) -> None:
        if value:
            ctx.stage(self).parallel(ctx.var(self.func, self.var))


@dataclass(frozen=True)
class ComputeAt(Knob):
    """Where ``func`` is computed: ``"inline"``, ``"root"`` or a loop of ``consumer``. A choice
    is a Var name, or a label that ``at`` maps to a Var name or a :class:`Loop`."""

    consumer: str = ""
    choices: Sequence[str] = ("inline", "root")
    default: str | None = None
    at: Mapping[str, str | Loop] | None = None

    def default_name(self) -> str:
        return f"{self.func}_compute_at"

    def parameter(self) -> Any:
        return Categorical(self.name, [str(c) for c in self.choices], default=self.default)

    def apply(self, ctx: ScheduleContext, value: Any) -> None:
        f = ctx.funcs[self.func]
        if value == "inline":
            f.compute_inline()
        elif value == "root":
            f.compute_root()
        else:
            loop = (self.at or {}).get(str(value), str(value))
            f.compute_at(ctx.funcs[self.consumer], ctx.var(self.consumer, loop))


@dataclass(frozen=True)
class StoreAt(Knob):
    """Where ``func``'s storage lives: ``"same"`` (with its computation), ``"root"`` or a Var
    name of ``consumer``. Must be at or outside the compute_at level, or Halide refuses it."""

    consumer: str = ""
    choices: Sequence[str] = ("same", "root")
    default: str | None = None

    def default_name(self) -> str:
        return f"{self.func}_store_at"

    def parameter(self) -> Any:
        return Categorical(self.name, [str(c) for c in self.choices], default=self.default)

    def apply(self, ctx: ScheduleContext, value: Any) -> None:
        f = ctx.funcs[self.func]
        if value == "root":
            f.store_root()
        elif value != "same":
            f.store_at(ctx.funcs[self.consumer], ctx.var(self.consumer, str(value)))


KNOB_TYPES = {cls.__name__: cls for cls in (Split, Reorder, Vectorize, Unroll, Parallel, ComputeAt, StoreAt)}
_FUNC_LEVEL = (ComputeAt, StoreAt)


def knob_space(
    knobs: Sequence[Knob],
    constraints: Sequence[str] = (),
    *,
    parameters: Sequence[Any] = (),
    parameter_order: Sequence[str] | None = None,
) -> Space:
    """The bayestune :class:`Space` of ``knobs``: one parameter per distinct knob name (knobs
    sharing a ``param`` share it), plus ``parameters`` that only ``when`` conditions read.
    ``parameter_order`` lists every parameter name in the order the space should have (default:
    the order of first use)."""
    found: dict[str, Any] = {}
    for k in knobs:
        if isinstance(k, _FUNC_LEVEL) and k.update is not None:
            raise ValueError(f"knob {k.name!r}: {type(k).__name__} places a whole Func; it takes no update=")
        if k.fixed is not None:
            continue
        p = k.parameter()
        if k.name in found and found[k.name] != p:
            raise ValueError(
                f"knobs sharing parameter {k.name!r} must declare the same values (parameter names "
                f"must be unique otherwise), but got {found[k.name]!r} and {p!r}"
            )
        found.setdefault(k.name, p)
    for p in parameters:
        if p.name in found:
            raise ValueError(f"parameter {p.name!r} is declared both by a knob and in parameters=")
        found[p.name] = p
    for k in knobs:
        unknown = [n for n in (k.when or {}) if n not in found]
        if unknown:
            raise ValueError(
                f"knob {k.name!r}: `when` names {unknown}, which are not parameters; known: {sorted(found)}"
            )
    if parameter_order is not None:
        if sorted(parameter_order) != sorted(found):
            raise ValueError(
                f"parameter_order must list each parameter once: {sorted(found)}, but got {list(parameter_order)}"
            )
        return Space([found[n] for n in parameter_order], list(constraints))
    return Space(list(found.values()), list(constraints))


def apply_schedule(
    hl: Any,
    funcs: Mapping[str, Any],
    knobs: Sequence[Knob],
    config: Mapping[str, Any],
    rvars: Mapping[str, Any] | None = None,
) -> None:
    """Apply ``config`` to ``funcs`` knob by knob, in declared order (so splits precede the
    reorder/vectorize that use their new Vars), skipping knobs whose ``when`` does not hold.
    ``rvars``: the pipeline's reduction variables by name. Halide errors propagate."""
    needed = {k.name for k in knobs if k.fixed is None} | {n for k in knobs for n in (k.when or {})}
    missing = sorted(n for n in needed if n not in config)
    if missing:
        raise KeyError(f"configuration lacks knob value(s) {missing}")
    ctx = ScheduleContext(hl, funcs, knobs, config, rvars)
    for k in knobs:
        unknown = [f for f in {k.func, getattr(k, "consumer", "") or k.func} if f not in funcs]
        if unknown:
            raise KeyError(
                f"knob {k.name!r} names Func(s) {unknown} the pipeline does not define; it has {sorted(funcs)}"
            )
        if k.applies(config):
            k.apply(ctx, k.value_in(config))


def _to_json(value: Any) -> Any:
    if isinstance(value, Loop):
        return {"Loop": {"order": value.order, "among": list(value.among), "pick": value.pick}}
    if isinstance(value, (tuple, list)):
        return [_to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _to_json(v) for k, v in value.items()}
    return value


def _from_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        if set(value) == {"Loop"}:
            d = value["Loop"]
            return Loop(d["order"], tuple(d["among"]), d["pick"])
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_from_json(v) for v in value)
    return value


def knobs_to_json(knobs: Sequence[Knob]) -> list[dict[str, Any]]:
    return [{"type": type(k).__name__, **{key: _to_json(v) for key, v in k.__dict__.items()}} for k in knobs]


def knobs_from_json(data: Sequence[Mapping[str, Any]]) -> list[Knob]:
    out: list[Knob] = []
    for d in data:
        d = dict(d)
        cls = KNOB_TYPES[d.pop("type")]
        out.append(cls(**{k: _from_json(v) for k, v in d.items()}))
    return out
