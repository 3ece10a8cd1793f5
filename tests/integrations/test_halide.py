"""bayestune.integrations.halide: knob declaration -> Space, the schedule applier, and live
evaluation in a killed-at-timeout worker with distinct failure kinds (on a 128x128 blur)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from bayestune.integrations.halide import (
    ComputeAt,
    HalideTuner,
    Loop,
    Parallel,
    Reorder,
    Split,
    StoreAt,
    Unroll,
    Vectorize,
    apply_schedule,
    knob_space,
    knobs_from_json,
    knobs_to_json,
)
from bayestune.integrations.halide.tuner import run_worker
from bayestune.space import Categorical, Ordinal, Permutation
from bayestune.trial import FailureKind

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "halide"
needs_halide = pytest.mark.skipif(
    importlib.util.find_spec("halide") is None,
    reason="halide is not installed (pip install -e '.[halide]' in the bayestune checkout)",
)

KNOBS = [
    Split("out", "y", "yo", "yi", (4, 8, 16)),
    Split("out", "x", "xo", "xi", (8, 16, 32, 64)),
    Reorder("out", ("xi", "yi", "xo", "yo"), default=(3, 2, 1, 0)),
    Vectorize("out", "xi", (1, 8)),
    Parallel("out", "yo"),
    Unroll("out", "yi", (1, 2)),
    ComputeAt("blur_x", "out", ("inline", "root", "xo")),
    StoreAt("blur_x", "out", ("same", "root")),
]


def test_knobs_become_parameters_of_the_right_type():
    space = knob_space(KNOBS, ["out_vectorize_xi <= out_split_x"])
    params = {p.name: p for p in space.parameters}
    assert isinstance(params["out_split_x"], Ordinal) and params["out_split_x"].log
    assert isinstance(params["out_order"], Permutation) and params["out_order"].n == 4
    assert isinstance(params["blur_x_compute_at"], Categorical)
    assert params["out_parallel_yo"].values == [False, True]
    assert space.default_config()["out_order"] == (3, 2, 1, 0)


def test_duplicate_knob_and_bad_factors_are_rejected():
    with pytest.raises(ValueError, match="same values"):
        knob_space([Split("out", "x", factors=(2, 4)), Split("out", "x", factors=(8,))])
    with pytest.raises(ValueError, match=">= 1"):
        knob_space([Split("out", "x", factors=(0, 4))])
    with pytest.raises(ValueError, match="distinct"):
        knob_space([Reorder("out", ("x", "x"))])


def test_knobs_survive_json_round_trip():
    assert knobs_from_json(knobs_to_json(KNOBS)) == KNOBS


class _Recorder:
    """Stands in for hl.Func / hl module: records the scheduling calls."""

    def __init__(self, log, name):
        self.log, self.name = log, name

    def __str__(self):
        return self.name

    def __getattr__(self, call):
        return lambda *args: self.log.append((self.name, call, tuple(str(a) for a in args)))

    def update(self, index):
        return _Recorder(self.log, f"{self.name}.update({index})")


class _FakeHl:
    Var = staticmethod(lambda name: name)
    RVar = staticmethod(lambda name: f"R:{name}")


def test_apply_schedule_calls_in_declared_order_with_reorder_innermost_first():
    log = []
    funcs = {"out": _Recorder(log, "out"), "blur_x": _Recorder(log, "blur_x")}
    cfg = {
        "out_split_y": 8,
        "out_split_x": 32,
        "out_order": (0, 3, 1, 2),
        "out_vectorize_xi": 1,
        "out_parallel_yo": True,
        "out_unroll_yi": 2,
        "blur_x_compute_at": "xo",
        "blur_x_store_at": "root",
    }
    apply_schedule(_FakeHl, funcs, KNOBS, cfg)
    assert log == [
        ("out", "split", ("y", "yo", "yi", "8")),
        ("out", "split", ("x", "xo", "xi", "32")),
        # positions xi=0 (outermost), yi=3 (innermost), xo=1, yo=2 -> innermost first: yi, yo, xo, xi
        ("out", "reorder", ("yi", "yo", "xo", "xi")),
        ("out", "parallel", ("yo",)),
        ("out", "unroll", ("yi", "2")),
        ("blur_x", "compute_at", ("out", "xo")),
        ("blur_x", "store_root", ()),
    ]
    with pytest.raises(KeyError, match="lacks"):
        apply_schedule(_FakeHl, funcs, KNOBS, {})


#: Knobs whose meaning depends on other knobs: a shared `vector` choice, a `when` on the
#: placement, a loop picked through the reorder, an update stage with a split reduction variable.
DEPENDENT = [
    Split("out", "x", "xo", "xi", (8, 16), param="tile"),
    Reorder("out", ("xi", "y", "xo"), param="order"),
    Vectorize("out", "xi", (1, 8), param="vector"),
    Parallel("out", Loop("order", pick="outermost"), param="par"),
    ComputeAt("f", "out", ("inline", "tile"), param="place", at={"tile": Loop("order", ("xo", "y"))}),
    Vectorize("f", "x", (1, 8), param="vector", when={"place": ["tile"]}),
    Split("f", "k", "ko", "ki", (2, 4), param="ksplit", update=0, when={"place": ["tile"]}),
    Vectorize("f", "ki", (1, 8), param="vector", update=0, when={"place": ["tile"], "vec": ["k"]}),
    Reorder("out", ("xi", "y", "xo"), fixed=(0, 2, 1), param="fixed_order"),
]


def _dependent_space():
    return knob_space(
        DEPENDENT,
        parameters=[Categorical("vec", ["x", "k"])],
        parameter_order=["vector", "tile", "order", "par", "place", "ksplit", "vec"],
    )


def test_knobs_sharing_a_parameter_make_one_and_fixed_knobs_none():
    space = _dependent_space()
    assert [p.name for p in space.parameters] == ["vector", "tile", "order", "par", "place", "ksplit", "vec"]
    with pytest.raises(ValueError, match="same values"):
        knob_space([Vectorize("a", "x", (1, 8), param="v"), Vectorize("b", "x", (1, 4), param="v")])
    with pytest.raises(ValueError, match="not parameters"):
        knob_space([Vectorize("a", "x", (1, 8), when={"nope": [1]})])
    with pytest.raises(ValueError, match="each parameter once"):
        knob_space(DEPENDENT, parameters=[Categorical("vec", ["x", "k"])], parameter_order=["vector"])
    with pytest.raises(ValueError, match="update"):
        knob_space([ComputeAt("f", "out", update=0)])


def test_dependent_knobs_follow_the_other_choices():
    log = []
    funcs = {"out": _Recorder(log, "out"), "f": _Recorder(log, "f")}
    # order: xi at position 2 (innermost), y at 0 (outermost), xo at 1 -> inner tile loop of (xo, y) is xo
    cfg = {"tile": 8, "order": (2, 0, 1), "vector": 8, "par": True, "place": "tile", "ksplit": 4, "vec": "k"}
    apply_schedule(_FakeHl, funcs, DEPENDENT, cfg, rvars={"k": "R:k$x"})
    assert log == [
        ("out", "split", ("x", "xo", "xi", "8")),
        ("out", "reorder", ("xi", "xo", "y")),
        ("out", "vectorize", ("xi", "8")),
        ("out", "parallel", ("y",)),
        ("f", "compute_at", ("out", "xo")),
        ("f", "vectorize", ("x", "8")),
        ("f.update(0)", "split", ("R:k$x", "R:ko", "R:ki", "4")),
        ("f.update(0)", "vectorize", ("R:ki", "8")),
        ("out", "reorder", ("y", "xo", "xi")),
    ]
    log.clear()
    apply_schedule(_FakeHl, funcs, DEPENDENT, dict(cfg, place="inline", vec="x"), rvars={"k": "R:k$x"})
    assert [entry for entry in log if entry[0].startswith("f")] == [("f", "compute_inline", ())]


def test_dependent_knobs_survive_json_round_trip():
    assert knobs_from_json(knobs_to_json(DEPENDENT)) == DEPENDENT


def test_a_loop_naming_a_missing_reorder_is_refused():
    funcs = {"out": _Recorder([], "out")}
    with pytest.raises(KeyError, match="no Reorder knob"):
        apply_schedule(_FakeHl, funcs, [Parallel("out", Loop("nope"), param="p")], {"p": True})


# ------------------------------------------------------------------ live (Halide installed)
@pytest.fixture(scope="module")
def tuner(tmp_path_factory):
    return HalideTuner(
        "blur:build_small", KNOBS, timeout=60, repeats=3, paths=[EXAMPLE], workdir=tmp_path_factory.mktemp("hl")
    )


@needs_halide
def test_default_and_tiled_schedules_measure_and_verify(tuner):
    cfg = tuner.space().default_config()
    res = tuner(cfg)
    assert res.error is None, res.error
    assert res.values["value"] > 0 and res.values["compile_s"] > 0
    ref = np.load(tuner.reference_path())
    assert ref.shape == (128, 128) and np.isfinite(ref).all()
    tiled = dict(cfg, out_vectorize_xi=8, out_parallel_yo=True, blur_x_compute_at="xo")
    assert tuner(tiled).error is None


@needs_halide
def test_failures_have_distinct_kinds(tuner, tmp_path):
    tuner.ensure_reference()
    cfg = tuner.space().default_config()
    # schedule error: vectorize a Var the Func does not have (raised at the scheduling call)
    bad = HalideTuner(
        "blur:build_small", KNOBS + [Vectorize("out", "zz", (8,))], timeout=60, paths=[EXAMPLE], workdir=tuner.workdir
    )
    r = bad(dict(cfg, out_vectorize_zz=8))
    assert (r.kind, r.error.split(":")[0]) == (FailureKind.SCHEDULE, "schedule error"), r.error
    # compile error: compute_at a loop the consumer does not have (accepted, refused by compile_jit)
    bad = HalideTuner(
        "blur:build_small", [ComputeAt("blur_x", "out", ("nope",))], timeout=60, paths=[EXAMPLE], workdir=tuner.workdir
    )
    r = bad({"blur_x_compute_at": "nope"})
    assert (r.kind, r.error.split(":")[0]) == (FailureKind.COMPILE, "compile error"), r.error
    # realize error: a split larger than the image reads the input out of bounds
    big = HalideTuner(
        "blur:build_small", [Split("out", "x", "xo", "xi", (512,))], timeout=60, paths=[EXAMPLE], workdir=tuner.workdir
    )
    r = big({"out_split_x": 512})
    assert r.kind == FailureKind.RUNTIME and "buffer" in r.error.lower(), r.error
    # wrong output: the same schedule against a corrupted reference
    wrong = HalideTuner("blur:build_small", KNOBS, timeout=60, paths=[EXAMPLE], workdir=tmp_path)
    np.save(wrong.reference_path(), np.load(tuner.reference_path()) + 1.0)
    r = wrong(cfg)
    assert r.kind == FailureKind.VERIFICATION and "differs" in r.error, r.error


@needs_halide
def test_timeout_kills_the_worker(tuner):
    tuner.ensure_reference()
    quick = HalideTuner("blur:build_small", KNOBS, timeout=0.3, paths=[EXAMPLE], workdir=tuner.workdir)
    m = quick.measure(tuner.space().default_config())
    assert m.stage == "timeout" and m.wall_s < 5
    assert m.to_result().kind == FailureKind.TIMEOUT


def test_missing_builder_module_is_a_crash(tmp_path):
    t = HalideTuner("no_such_module_xyz:build", KNOBS, timeout=60, workdir=tmp_path, python=sys.executable)
    with pytest.raises(RuntimeError, match="reference"):
        t.ensure_reference()


@needs_halide
def test_full_unroll_compile_is_killed_at_the_limit(tmp_path):
    """A 256 x 64 full unroll makes Halide compile for minutes; the worker is killed at 5 s."""
    knobs = [
        Split("out", "y", "yo", "yi", (64,)),
        Split("out", "x", "xo", "xi", (256,)),
        Unroll("out", "xi", (256,)),
        Unroll("out", "yi", (64,)),
    ]
    HalideTuner("blur:build", knobs, timeout=120, paths=[EXAMPLE], workdir=tmp_path).ensure_reference()  # not under 5 s
    t = HalideTuner("blur:build", knobs, timeout=5, paths=[EXAMPLE], workdir=tmp_path)
    m = t.measure({"out_split_y": 64, "out_split_x": 256, "out_unroll_xi": 256, "out_unroll_yi": 64})
    assert m.stage == "timeout" and 5 <= m.wall_s < 15, m


@pytest.mark.parametrize(
    "answer, error",
    [
        ('{"stage": "ok"}', "ok without a finite run_ms (got None)"),
        ('{"stage": "ok", "run_ms": "fast"}', "ok without a finite run_ms (got 'fast')"),
        ('{"stage": "ok", "run_ms": NaN}', "ok without a finite run_ms (got nan)"),
        ("[1, 2]", "answer has no stage: [1, 2]"),
        ('{"run_ms": 3.0}', "answer has no stage"),
    ],
)
def test_a_malformed_worker_answer_is_a_crash_not_an_exception(tmp_path, answer, error):
    """The worker's last stdout line is read as its answer; one without a stage or an ok
    without a run time is a crash (an ok without run_ms used to raise TypeError)."""
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\ncat >/dev/null\necho '{answer}'\n")
    fake.chmod(0o755)
    r = run_worker({"action": "measure"}, 30, python=str(fake)).to_result()
    assert r.kind == FailureKind.CRASH and error in r.error, r.error
