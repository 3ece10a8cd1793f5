"""Tune a Halide schedule with bayestune: declare knobs on named Funcs, evaluate each
configuration in a subprocess that is killed at a wall-clock limit.

The algorithm is written once, in a *builder*: an importable function ``build(hl)`` (named
``"package.module:function"``) that defines the Funcs, no schedule, and returns a
:class:`Pipeline`. Knobs (:class:`Split`, :class:`Reorder`, :class:`Vectorize`,
:class:`Parallel`, :class:`Unroll`, :class:`ComputeAt`, :class:`StoreAt`) name a Func and its
Vars by string, so a worker process can rebuild the pipeline and apply one configuration::

    knobs = [Split("out", "x", "xo", "xi", [8, 16, 32]), Vectorize("out", "xi", [1, 8]),
             Reorder("out", ["xi", "y", "xo"]), ComputeAt("blur_x", "out", ["inline", "root", "xo"])]
    tuner = HalideTuner("mypkg.blur:build", knobs, timeout=60)
    best = Optimizer(tuner.space(), seed=0).optimize(tuner, budget=10)

Each evaluation runs ``python -m bayestune.integrations._halide_worker`` in its own process
group: rebuild, apply the knobs in declared order, ``compile_jit``, realize, compare with the
reference (the unscheduled pipeline, realized once the same way), then time min-of-N
``realize``. Outcomes map to :class:`~bayestune.trial.FailureKind`:

================  ===================================  ===================================
stage             what happened                         kind (error text starts with)
================  ===================================  ===================================
``schedule``      a scheduling call raised HalideError  ``SCHEDULE`` (``schedule error:``)
``compile``       ``compile_jit`` raised                ``COMPILE`` (``compile error:``)
``realize``       ``realize`` raised                    ``RUNTIME``
``verify``        output differs from the reference     ``VERIFICATION``
``timeout``       wall-clock limit hit, group killed    ``TIMEOUT``
``crash``         worker died or printed no answer      ``CRASH``
================  ===================================  ===================================

Values of a measured configuration: ``value`` (min run time, ms) and ``compile_s``.
Halide itself is imported only in the worker; this module works without it.
"""

from __future__ import annotations

import abc
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from bayestune.space import Categorical, Ordinal, Permutation, Space
from bayestune.trial import FailureKind, Result

logger = logging.getLogger(__name__)

#: Failure stage reported by the worker -> bayestune failure kind.
STAGE_KINDS = {
    "schedule": FailureKind.SCHEDULE,
    "compile": FailureKind.COMPILE,
    "realize": FailureKind.RUNTIME,
    "verify": FailureKind.VERIFICATION,
    "timeout": FailureKind.TIMEOUT,
    "crash": FailureKind.CRASH,
}


@dataclass
class Pipeline:
    """What a builder returns: the output Func, every schedulable Func by name, the input
    ``(ImageParam, numpy array)`` pairs and the output shape (Halide order: x first)."""

    output: Any
    funcs: Mapping[str, Any]
    inputs: Sequence[tuple[Any, Any]] = ()
    shape: Sequence[int] = ()
    input_mins: Sequence[Sequence[int] | None] = ()  # per input, buffer mins (None = zeros)


# ---------------------------------------------------------------------------------------
# Knobs: each is one bayestune parameter and one scheduling call
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Knob(abc.ABC):
    """One schedule choice on the Func named ``func``: a bayestune parameter and a scheduling call."""

    func: str

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The parameter's name (a Python identifier, e.g. ``out_split_x``)."""

    @abc.abstractmethod
    def parameter(self) -> Any:
        """The bayestune parameter whose values this knob takes."""

    @abc.abstractmethod
    def apply(self, hl: Any, funcs: Mapping[str, Any], value: Any) -> None:
        """Make the scheduling call for ``value`` on ``funcs[self.func]``."""


def _positive_ints(knob: str, values: Sequence[int]) -> list[int]:
    out = [int(v) for v in values]
    if not out or any(v < 1 for v in out) or out != [int(v) for v in values]:
        raise ValueError(f"knob {knob!r}: factors must be a non-empty list of integers >= 1, but got {list(values)!r}")
    return out


def _is_pow2_list(values: Sequence[int]) -> bool:
    return len(values) > 2 and all(v > 0 and v & (v - 1) == 0 for v in values)


@dataclass(frozen=True)
class Split(Knob):
    """``func.split(var, outer, inner, factor)``; factor chosen from ``factors``."""

    var: str = "x"
    outer: str = "xo"
    inner: str = "xi"
    factors: Sequence[int] = (8, 16, 32, 64)
    default: int | None = None

    @property
    def name(self) -> str:
        return f"{self.func}_split_{self.var}"

    def parameter(self) -> Any:
        f = _positive_ints(self.name, self.factors)
        return Ordinal(self.name, f, log=_is_pow2_list(f), default=self.default)

    def apply(self, hl: Any, funcs: Mapping[str, Any], value: Any) -> None:
        funcs[self.func].split(hl.Var(self.var), hl.Var(self.outer), hl.Var(self.inner), int(value))


@dataclass(frozen=True)
class Reorder(Knob):
    """Loop order of ``vars`` as a permutation: value[i] = position of ``vars[i]``, 0 = outermost."""

    vars: Sequence[str] = ()
    default: Sequence[int] | None = None

    @property
    def name(self) -> str:
        return f"{self.func}_order"

    def parameter(self) -> Any:
        if len(self.vars) < 2 or len(set(self.vars)) != len(self.vars):
            raise ValueError(f"knob {self.name!r}: reorder needs >= 2 distinct vars, but got {list(self.vars)!r}")
        return Permutation(self.name, len(self.vars), default=self.default)

    def apply(self, hl: Any, funcs: Mapping[str, Any], value: Any) -> None:
        innermost_first = sorted(range(len(self.vars)), key=lambda e: -int(value[e]))
        funcs[self.func].reorder(*[hl.Var(self.vars[e]) for e in innermost_first])


class _VarFactorKnob(Knob):
    """``func.<call>(var, k)`` with ``k`` from a list of integers; ``k = 1`` makes no call.
    Subclasses declare ``var``, the list and ``default`` as fields and name the call."""

    call: ClassVar[str]

    @abc.abstractmethod
    def choices(self) -> Sequence[int]:
        """The values ``k`` may take."""

    @property
    def name(self) -> str:
        return f"{self.func}_{self.call}_{self.var}"

    def parameter(self) -> Any:
        return Ordinal(self.name, _positive_ints(self.name, self.choices()), default=self.default)

    def apply(self, hl: Any, funcs: Mapping[str, Any], value: Any) -> None:
        if int(value) > 1:
            getattr(funcs[self.func], self.call)(hl.Var(self.var), int(value))


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
    """``func.parallel(var)`` or not."""

    var: str = "y"
    default: bool | None = None

    @property
    def name(self) -> str:
        return f"{self.func}_parallel_{self.var}"

    def parameter(self) -> Any:
        return Categorical(self.name, [False, True], default=self.default)

    def apply(self, hl: Any, funcs: Mapping[str, Any], value: Any) -> None:
        if value:
            funcs[self.func].parallel(hl.Var(self.var))


@dataclass(frozen=True)
class ComputeAt(Knob):
    """Where ``func`` is computed: ``"inline"``, ``"root"`` or a Var name of ``consumer``."""

    consumer: str = ""
    choices: Sequence[str] = ("inline", "root")
    default: str | None = None

    @property
    def name(self) -> str:
        return f"{self.func}_compute_at"

    def parameter(self) -> Any:
        return Categorical(self.name, [str(c) for c in self.choices], default=self.default)

    def apply(self, hl: Any, funcs: Mapping[str, Any], value: Any) -> None:
        f = funcs[self.func]
        if value == "inline":
            f.compute_inline()
        elif value == "root":
            f.compute_root()
        else:
            f.compute_at(funcs[self.consumer], hl.Var(str(value)))


@dataclass(frozen=True)
class StoreAt(Knob):
    """Where ``func``'s storage lives: ``"same"`` (with its computation), ``"root"`` or a Var
    name of ``consumer``. Must be at or outside the compute_at level, or Halide refuses it."""

    consumer: str = ""
    choices: Sequence[str] = ("same", "root")
    default: str | None = None

    @property
    def name(self) -> str:
        return f"{self.func}_store_at"

    def parameter(self) -> Any:
        return Categorical(self.name, [str(c) for c in self.choices], default=self.default)

    def apply(self, hl: Any, funcs: Mapping[str, Any], value: Any) -> None:
        f = funcs[self.func]
        if value == "root":
            f.store_root()
        elif value != "same":
            f.store_at(funcs[self.consumer], hl.Var(str(value)))


KNOB_TYPES = {cls.__name__: cls for cls in (Split, Reorder, Vectorize, Unroll, Parallel, ComputeAt, StoreAt)}


def knob_space(knobs: Sequence[Knob], constraints: Sequence[str] = ()) -> Space:
    """The bayestune :class:`Space` of ``knobs`` (one parameter each, named e.g. ``out_split_x``)."""
    names = [k.name for k in knobs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"knob names must be unique, but {dup} appear more than once; a Func/Var pair takes one knob of each type")
    return Space([k.parameter() for k in knobs], list(constraints))


def apply_schedule(hl: Any, funcs: Mapping[str, Any], knobs: Sequence[Knob], config: Mapping[str, Any]) -> None:
    """Apply ``config`` to ``funcs`` knob by knob, in declared order (so splits precede the
    reorder/vectorize that use their new Vars). Halide errors propagate."""
    missing = [k.name for k in knobs if k.name not in config]
    if missing:
        raise KeyError(f"configuration lacks knob value(s) {missing}")
    for k in knobs:
        unknown = [f for f in {k.func, getattr(k, "consumer", "") or k.func} if f not in funcs]
        if unknown:
            raise KeyError(f"knob {k.name!r} names Func(s) {unknown} the pipeline does not define; it has {sorted(funcs)}")
        k.apply(hl, funcs, config[k.name])


def knobs_to_json(knobs: Sequence[Knob]) -> list[dict[str, Any]]:
    out = []
    for k in knobs:
        d = {"type": type(k).__name__}
        for key, v in k.__dict__.items():
            d[key] = list(v) if isinstance(v, tuple) else v
        out.append(d)
    return out


def knobs_from_json(data: Sequence[Mapping[str, Any]]) -> list[Knob]:
    out = []
    for d in data:
        d = dict(d)
        cls = KNOB_TYPES[d.pop("type")]
        out.append(cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}))
    return out


# ---------------------------------------------------------------------------------------
# Evaluation in a killable subprocess
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Measurement:
    """One worker answer: ``stage`` is ``"ok"`` or the failure stage (see the module table)."""

    stage: str
    run_ms: float | None = None
    compile_s: float | None = None
    wall_s: float = 0.0
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_result(self) -> Result:
        if self.stage == "ok":
            return Result(values={"value": float(self.run_ms), "compile_s": float(self.compile_s or 0.0)})
        prefix = {"schedule": "schedule error: ", "compile": "compile error: "}.get(self.stage, "")
        return Result.failure(prefix + (self.error or self.stage), STAGE_KINDS.get(self.stage, FailureKind.CRASH))


def run_worker(request: Mapping[str, Any], timeout: float, *, python: str | None = None,
               env: Mapping[str, str] | None = None) -> Measurement:
    """Run one worker request (JSON on stdin, JSON answer as stdout's last line) in its own
    process group; SIGKILL the group after ``timeout`` seconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([python or sys.executable, "-m", "bayestune.integrations._halide_worker"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env=dict(env) if env is not None else None)
    try:
        out, err = proc.communicate(json.dumps(request), timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        return Measurement("timeout", wall_s=time.perf_counter() - t0,
                           error=f"killed after the {timeout:g} s wall-clock limit (compile + run)")
    wall = time.perf_counter() - t0
    lines = [ln for ln in out.splitlines() if ln.strip()]
    try:
        answer = json.loads(lines[-1])
    except (IndexError, ValueError):
        tail = err.strip().splitlines()[-3:]
        return Measurement("crash", wall_s=wall,
                           error=f"worker exited with code {proc.returncode} and no answer: {' | '.join(tail)}")
    return Measurement(answer["stage"], run_ms=answer.get("run_ms"), compile_s=answer.get("compile_s"),
                       wall_s=wall, error=answer.get("error"), extra=answer.get("extra", {}))


class HalideTuner:
    """A black box for :meth:`bayestune.optimizer.Optimizer.optimize`: ``tuner(config) -> Result``.

    ``builder`` is ``"module:function"``, importable in the worker (``sys.path`` of the worker
    gets ``paths`` prepended). ``timeout`` bounds one compile + verify + timing; ``repeats`` timed
    runs are taken (min). The reference output is the unscheduled pipeline, realized once in a
    worker on the first call and kept as ``.npy`` in ``workdir`` (a temporary directory by default).
    """

    def __init__(self, builder: str, knobs: Sequence[Knob], *, timeout: float = 60.0, repeats: int = 10,
                 rtol: float = 1e-4, atol: float = 1e-4, constraints: Sequence[str] = (),
                 paths: Sequence[str | os.PathLike[str]] = (), workdir: str | os.PathLike[str] | None = None,
                 python: str | None = None) -> None:
        if ":" not in builder:
            raise ValueError(f"builder must be 'module:function', but got {builder!r}")
        if timeout <= 0 or repeats < 1:
            raise ValueError(f"`timeout > 0` and `repeats >= 1` must hold, but got (timeout={timeout}, repeats={repeats})")
        self.builder = builder
        self.knobs = list(knobs)
        self.timeout = float(timeout)
        self.repeats = int(repeats)
        self.rtol, self.atol = float(rtol), float(atol)
        self.constraints = list(constraints)
        self.paths = [str(Path(p).resolve()) for p in paths]
        self.python = python
        self._tmp = None if workdir is not None else tempfile.TemporaryDirectory(prefix="bayestune-halide-")
        self.workdir = Path(workdir if workdir is not None else self._tmp.name)
        self._reference: Path | None = None
        knob_space(self.knobs, self.constraints)  # validate the declaration now

    def space(self) -> Space:
        return knob_space(self.knobs, self.constraints)

    def _request(self, mode: str, config: Mapping[str, Any]) -> dict[str, Any]:
        return {"mode": mode, "builder": self.builder, "paths": self.paths, "knobs": knobs_to_json(self.knobs),
                "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in config.items()},
                "reference": str(self.reference_path()), "repeats": self.repeats,
                "rtol": self.rtol, "atol": self.atol}

    def reference_path(self) -> Path:
        return self.workdir / "reference.npy"

    def ensure_reference(self) -> Path:
        """Realize the unscheduled pipeline once (same timeout); raise RuntimeError if it fails."""
        path = self.reference_path()
        if not path.exists():
            m = run_worker(self._request("reference", {}), self.timeout, python=self.python)
            if m.stage != "ok":
                raise RuntimeError(f"the unscheduled pipeline {self.builder} could not be realized as the reference "
                                   f"({m.stage}): {m.error}")
        return path

    def measure(self, config: Mapping[str, Any]) -> Measurement:
        self.ensure_reference()
        m = run_worker(self._request("measure", config), self.timeout, python=self.python)
        logger.info("halide %s: %s run_ms=%s compile_s=%s wall=%.1fs", self.builder, m.stage, m.run_ms, m.compile_s, m.wall_s)
        return m

    def __call__(self, config: Mapping[str, Any]) -> Result:
        return self.measure(config).to_result()
