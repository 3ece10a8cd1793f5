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

A knob's meaning may depend on other knobs: knobs sharing a ``param`` make one choice drive
several calls, ``when`` applies a knob only for some values of other parameters, a
:class:`Loop` names "the innermost tile loop in whatever order the reorder knob chose", and
``update=`` schedules an update definition, with reduction variables named through
:attr:`Pipeline.rvars` (``benchmarks/halide_problems.py`` declares its blur and matmul so).

Each evaluation runs ``python -m bayestune.integrations.halide.worker`` in its own process
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
Halide itself is imported only in the worker; this package works without it.

The folder: :mod:`.knobs` (knobs -> Space, and the schedule they apply), :mod:`.tuner` (the black
box and its killable worker process) and :mod:`.worker` (what runs in that process). Names are
imported on first use.
"""

from bayestune.integrations._lazy import lazy_exports

_WHERE = {
    "Pipeline": "knobs",
    "Loop": "knobs",
    "ScheduleContext": "knobs",
    "Knob": "knobs",
    "KNOB_TYPES": "knobs",
    "Split": "knobs",
    "Reorder": "knobs",
    "Vectorize": "knobs",
    "Unroll": "knobs",
    "Parallel": "knobs",
    "ComputeAt": "knobs",
    "StoreAt": "knobs",
    "knob_space": "knobs",
    "apply_schedule": "knobs",
    "knobs_to_json": "knobs",
    "knobs_from_json": "knobs",
    "STAGE_KINDS": "tuner",
    "Measurement": "tuner",
    "run_worker": "tuner",
    "HalideTuner": "tuner",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
