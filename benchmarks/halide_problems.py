"""Live Halide schedules as benchmark problems: JIT-compiled and timed on this CPU.

Two pipelines (float32, Halide's Python bindings, ``pip install halide``):

``halide_blur``
    Separable 3x3 box blur of a 2048 x 2048 image: ``blur_x(x, y) = (in(x, y) + in(x+1, y) +
    in(x+2, y)) / 3``, ``out(x, y) = (blur_x(x, y) + blur_x(x, y+1) + blur_x(x, y+2)) / 3``.
    Schedule: ``out`` is tiled ``tile_x`` x ``tile_y`` (powers of two); ``order`` is a
    permutation of its four tile loops (xi, yi, xo, yo; position 0 = outermost); ``vector``
    lanes on xi (1 = none); ``unroll`` of yi; ``parallel`` marks the outermost loop parallel;
    ``compute_at`` places ``blur_x`` at the root (computed whole first, vectorised and
    parallelised the same way), per tile (at the innermost of xo/yo in the order) or inline.
    Known constraints: ``vector <= tile_x``, ``unroll <= tile_y``.
``halide_matmul``
    ``C = A B`` for 256 x 256 matrices, as a pure ``prod(x, y) = 0`` plus an update
    ``prod(x, y) += A(k, y) B(x, k)`` over an RDom k, then ``C(x, y) = prod(x, y)``.
    Schedule: ``C`` tiled ``tile_x`` x ``tile_y`` (xi vectorised by ``vector``, yo parallel if
    ``parallel``); ``placement`` of ``prod``: root, per tile of C, or inline; the update's k
    is split by ``k_split`` into ko/ki and its loops (x, y, ko, ki) reordered by ``order``;
    ``vec_loop`` vectorises the update along x or along ki; ``unroll`` unrolls its y loop.
    Known constraints: ``vector <= tile_x``, ``unroll <= tile_y``. Hidden constraint
    (Halide refuses it when compiling: a race): vectorising the reduction loop ki.

Both are declared through the Halide helper (:mod:`bayestune.integrations.halide`): the pipelines
are builders, the schedules knobs (``BLUR_KNOBS``, ``MATMUL_KNOBS``) whose parameter names and
values are those the measurement caches were recorded with.

Measurement: each evaluation builds, schedules and JIT-compiles the pipeline in a fresh
process, checks the output against numpy (a mismatch is a failure of kind ``wrong``), runs it
once to warm up, then times it repeatedly: at least 5 runs and 0.1 s, at most 50 runs or 1 s
(so fast schedules get more repetitions). The value is the minimum in milliseconds. Halide uses ``HL_NUM_THREADS`` threads (the
machine's core count unless set).

The blur's input has a 256-pixel margin around the 2050 x 2050 pixels the algorithm reads,
so schedules whose bounds inference rounds loops outwards stay inside it; the timeout for one
compile + run is 10 s (a schedule that needs longer counts as failed; some pathological
schedules take Halide tens of seconds to compile).

Isolation: a server process (own session) imports Halide and JIT-compiles a trivial pipeline
once (the 1-2 s start-up of Halide's JIT), then *forks* one child per evaluation; the child
puts itself in its own process group. The server kills that group (SIGKILL) when the
evaluation exceeds ``timeout`` seconds (failure kind ``timeout``); a child that dies reports
``crash``; a Halide error while scheduling or compiling is ``compile``, while running
``runtime``. The evaluator in turn restarts a server that stops answering. So a bad schedule
can neither hang nor crash a benchmark run.

Measurement cache: the benchmark problems measure each configuration once and append the
answer to ``benchmarks/results/<pipeline>.cache.jsonl`` (``BAYESTUNE_HALIDE_CACHE=0`` turns it
off; another directory can be named by ``BAYESTUNE_HALIDE_CACHE=DIR``). Every strategy and seed
then sees the same value for the same schedule, as in a replay, and a schedule proposed again in
a later run costs nothing: live timings on a shared machine drift by several percent, which would
otherwise reward whoever ran while the machine was quiet. The multi-objective blur reads the same
file (it holds run and compile time).

Optimum: unknown. Reports divide by the best value any strategy found for the problem in the
same results file (so the ratios are relative to that file's best, not a true optimum).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bayestune.integrations.halide import (
    ComputeAt,
    Loop,
    Parallel,
    Pipeline,
    Reorder,
    Split,
    Unroll,
    Vectorize,
    apply_schedule,
    knob_space,
)
from bayestune.space import Categorical, Space
from bayestune.trial import Result
from benchmarks.jsonl import append_record
from benchmarks.problem import Problem, config_key

HALIDE_AVAILABLE = importlib.util.find_spec("halide") is not None
DEFAULT_TIMEOUT = 10.0
#: Extra seconds the client waits for the server beyond the evaluation's own timeout.
SERVER_GRACE = 15.0
BLUR_SIZE = 2048
#: Input pixels beyond each edge of the blur's input, so that schedules whose bounds inference
#: rounds loops outwards (e.g. a vectorised loop outside its tile loop) still read inside it.
BLUR_MARGIN = 256
MATMUL_SIZE = 256
#: Timed runs: at least MIN_REPEATS and MIN_TIMED_SECONDS, at most MAX_REPEATS or MAX_TIMED_SECONDS.
MIN_REPEATS = 5
MAX_REPEATS = 50
MIN_TIMED_SECONDS = 0.1
MAX_TIMED_SECONDS = 1.0
REPO = Path(__file__).resolve().parents[1]


#: The blur's schedule through the Halide helper. Call order is the order the knobs apply in:
#: ``blur_y`` tiled (two splits + the reorder), its tile loops vectorised/unrolled, the outermost
#: loop of the chosen order parallel; then ``blur_x`` placed, and vectorised/parallelised like
#: its consumer where it has loops of its own.
BLUR_KNOBS = [
    Split("blur_y", "x", "xo", "xi", (8, 16, 32, 64, 128, 256), default=64, param="tile_x"),
    Split("blur_y", "y", "yo", "yi", (2, 4, 8, 16, 32, 64, 128), default=16, param="tile_y"),
    Reorder("blur_y", ("xi", "yi", "xo", "yo"), default=(3, 2, 1, 0), param="order"),  # yo, xo, yi, xi
    Vectorize("blur_y", "xi", (1, 4, 8, 16), default=8, param="vector"),
    Unroll("blur_y", "yi", (1, 2, 4), default=1, param="unroll"),
    Parallel("blur_y", Loop("order", pick="outermost"), default=True, param="parallel"),
    ComputeAt(
        "blur_x",
        "blur_y",
        ("root", "tile", "inline"),
        default="tile",
        param="compute_at",
        at={"tile": Loop("order", ("xo", "yo"))},
    ),  # the inner of the two tile loops
    Vectorize("blur_x", "x", (1, 4, 8, 16), default=8, param="vector", when={"compute_at": ("root", "tile")}),
    Parallel("blur_x", "y", default=True, param="parallel", when={"compute_at": ("root",)}),
]
BLUR_PARAMETER_ORDER = ["tile_x", "tile_y", "vector", "parallel", "unroll", "compute_at", "order"]
TILE_CONSTRAINTS = ["vector <= tile_x", "unroll <= tile_y"]

_PROD_PLACED = {"placement": ("root", "tile")}  # prod has loops of its own (not inlined)
#: The matmul's schedule: ``C`` tiled (the fixed reorder is what ``tile`` does), ``prod`` placed,
#: and, where it is not inlined, its pure and update (RDom k) definitions scheduled.
MATMUL_KNOBS = [
    Split("C", "x", "xo", "xi", (8, 16, 32, 64, 128), default=32, param="tile_x"),
    Split("C", "y", "yo", "yi", (2, 4, 8, 16, 32, 64), default=8, param="tile_y"),
    Reorder("C", ("xi", "yi", "xo", "yo"), fixed=(3, 2, 1, 0)),
    Vectorize("C", "xi", (1, 4, 8, 16), default=8, param="vector"),
    Parallel("C", "yo", default=True, param="parallel"),
    ComputeAt("prod", "C", ("root", "tile", "inline"), default="tile", param="placement", at={"tile": "xo"}),
    Parallel("prod", "y", default=True, param="parallel", when={"placement": ("root",)}),
    Vectorize("prod", "x", (1, 4, 8, 16), default=8, param="vector", when=_PROD_PLACED),
    Split("prod", "k", "ko", "ki", (1, 2, 4, 8, 16), default=1, param="k_split", update=0, when=_PROD_PLACED),
    Reorder("prod", ("x", "y", "ko", "ki"), default=(3, 2, 1, 0), param="order", update=0, when=_PROD_PLACED),
    Vectorize(
        "prod", "x", (1, 4, 8, 16), default=8, param="vector", update=0, when={**_PROD_PLACED, "vec_loop": ("x",)}
    ),
    Vectorize(
        "prod", "ki", (1, 4, 8, 16), default=8, param="vector", update=0, when={**_PROD_PLACED, "vec_loop": ("k",)}
    ),
    Unroll("prod", "y", (1, 2, 4), default=1, param="unroll", update=0, when=_PROD_PLACED),
    Parallel("prod", "y", default=True, param="parallel", update=0, when={"placement": ("root",)}),
]
MATMUL_CHOICES = [Categorical("vec_loop", ["x", "k"], default="x")]  # read only by the knobs' `when`
MATMUL_PARAMETER_ORDER = [
    "tile_x",
    "tile_y",
    "vector",
    "parallel",
    "unroll",
    "placement",
    "k_split",
    "vec_loop",
    "order",
]


def blur_space() -> Space:
    return knob_space(BLUR_KNOBS, TILE_CONSTRAINTS, parameter_order=BLUR_PARAMETER_ORDER)


def matmul_space() -> Space:
    return knob_space(MATMUL_KNOBS, TILE_CONSTRAINTS, parameters=MATMUL_CHOICES, parameter_order=MATMUL_PARAMETER_ORDER)


HALIDE_PROBLEMS = {
    "halide_blur": (blur_space, "separable 3x3 blur, 2048x2048 float32, live on this CPU"),
    "halide_matmul": (matmul_space, "256x256 float32 matrix multiply, live on this CPU"),
}


# ---------------------------------------------------------------------------------------
# Pipelines: Halide-helper builders (no schedule; ``hl`` is the imported halide module)
# ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    """The inputs and numpy references, made once per process (the server makes them before it forks)."""
    import numpy as np

    rng = np.random.default_rng(12345)
    m = BLUR_MARGIN
    blur_in = rng.random((BLUR_SIZE + 2 + 2 * m, BLUR_SIZE + 2 + 2 * m), dtype=np.float32)
    core = blur_in[m : m + BLUR_SIZE + 2, m : m + BLUR_SIZE + 2]
    bx = (core[:, :-2] + core[:, 1:-1] + core[:, 2:]) / np.float32(3.0)
    blur_ref = (bx[:-2, :] + bx[1:-1, :] + bx[2:, :]) / np.float32(3.0)
    mm_a = rng.random((MATMUL_SIZE, MATMUL_SIZE), dtype=np.float32)
    mm_b = rng.random((MATMUL_SIZE, MATMUL_SIZE), dtype=np.float32)
    return {"blur_in": blur_in, "blur_ref": blur_ref, "mm_a": mm_a, "mm_b": mm_b, "mm_ref": mm_a @ mm_b}


def blur_pipeline(hl: Any) -> Pipeline:
    data = _data()
    inp = hl.ImageParam(hl.Float(32), 2, "inp")
    x, y = hl.Var("x"), hl.Var("y")
    bx, out = hl.Func("blur_x"), hl.Func("blur_y")
    bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3.0
    out[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3.0
    return Pipeline(
        output=out,
        funcs={"blur_x": bx, "blur_y": out},
        inputs=[(inp, data["blur_in"])],
        shape=(BLUR_SIZE, BLUR_SIZE),
        input_mins=[(-BLUR_MARGIN, -BLUR_MARGIN)],
    )


def matmul_pipeline(hl: Any) -> Pipeline:
    data = _data()
    A, B = hl.ImageParam(hl.Float(32), 2, "A"), hl.ImageParam(hl.Float(32), 2, "B")
    x, y = hl.Var("x"), hl.Var("y")
    k = hl.RDom([(0, MATMUL_SIZE)], "k")
    prod, C = hl.Func("prod"), hl.Func("C")
    prod[x, y] = hl.f32(0.0)
    prod[x, y] += A[k.x, y] * B[x, k.x]
    C[x, y] = prod[x, y]
    return Pipeline(
        output=C,
        funcs={"prod": prod, "C": C},
        inputs=[(A, data["mm_a"]), (B, data["mm_b"])],
        shape=(MATMUL_SIZE, MATMUL_SIZE),
        rvars={"k": k.x},
    )


#: pipeline name -> (builder, knobs, the numpy reference's key in ``_data()``)
SCHEDULES = {
    "halide_blur": (blur_pipeline, BLUR_KNOBS, "blur_ref"),
    "halide_matmul": (matmul_pipeline, MATMUL_KNOBS, "mm_ref"),
}


def scheduled(hl: Any, pipeline: str, cfg: Mapping[str, Any]) -> Pipeline:
    """``pipeline`` built and scheduled with ``cfg`` through the Halide helper's knobs."""
    build, knobs, _ = SCHEDULES[pipeline]
    built = build(hl)
    apply_schedule(hl, built.funcs, knobs, cfg, built.rvars)
    return built


# ---------------------------------------------------------------------------------------
# Server side (a separate process: python halide_problems.py --serve)
# ---------------------------------------------------------------------------------------
class _Stage(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _measure(hl: Any, np: Any, pipeline: str, cfg: Mapping[str, Any]) -> dict[str, Any]:
    if pipeline not in SCHEDULES:
        raise _Stage("invalid", f"unknown pipeline {pipeline!r}")
    t0 = time.perf_counter()
    try:
        built = scheduled(hl, pipeline, cfg)
        built.output.compile_jit()
    except Exception as exc:
        raise _Stage("compile", f"{type(exc).__name__}: {exc}") from None
    compile_s = time.perf_counter() - t0
    reference = _data()[SCHEDULES[pipeline][2]]
    try:
        for (param, array), mins in zip(built.inputs, list(built.input_mins) + [None] * len(built.inputs)):
            buf = hl.Buffer(array)
            if mins is not None:
                buf.set_min(list(mins))
            param.set(buf)
        out = hl.Buffer(hl.Float(32), list(built.shape))
        built.output.realize(out)  # warm-up
        result = np.asarray(out)
        if not np.allclose(result, reference, rtol=1e-3, atol=1e-3):
            raise _Stage("wrong", f"output differs from numpy by up to {float(np.abs(result - reference).max()):.3g}")
        times: list[float] = []
        start = time.perf_counter()
        while True:
            t = time.perf_counter()
            built.output.realize(out)
            times.append(time.perf_counter() - t)
            spent = time.perf_counter() - start
            if len(times) >= MAX_REPEATS or spent >= MAX_TIMED_SECONDS:
                break
            if len(times) >= MIN_REPEATS and spent >= MIN_TIMED_SECONDS:
                break
    except _Stage:
        raise
    except Exception as exc:
        raise _Stage("runtime", f"{type(exc).__name__}: {exc}") from None
    return {"ok": True, "time_ms": 1e3 * min(times), "compile_s": compile_s, "runs": len(times)}


def _child(request: dict[str, Any], write_fd: int, log_path: str) -> None:
    """In the forked child: own process group, output to a log, one measurement."""
    os.setpgid(0, 0)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    try:
        import halide as hl
        import numpy as np

        reply = _measure(hl, np, request["pipeline"], request["config"])
    except _Stage as exc:
        reply = {"ok": False, "kind": exc.kind, "error": str(exc)[-2000:]}
    except BaseException as exc:  # noqa: BLE001 - anything else is still an answer
        reply = {"ok": False, "kind": "exception", "error": f"{type(exc).__name__}: {exc}"[-2000:]}
    os.write(write_fd, json.dumps(reply).encode())
    os.close(write_fd)
    os._exit(0)


def _log_tail(path: str, limit: int = 1500) -> str:
    try:
        with open(path, errors="replace") as fh:
            text = fh.read()
    except OSError:
        return ""
    return text[-limit:].strip()


def _run_request(request: dict[str, Any], log_path: str) -> dict[str, Any]:
    timeout = float(request.get("timeout", DEFAULT_TIMEOUT))
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(request, write_fd, log_path)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)  # also from the parent: no race with the child's own call
    except OSError:
        pass
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    if timed_out:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"ok": False, "kind": "timeout", "error": f"compile+run exceeded {timeout:g} s; process group killed"}
    try:
        return json.loads(b"".join(chunks).decode())
    except ValueError:
        if os.WIFSIGNALED(status):
            how = f"killed by signal {os.WTERMSIG(status)}"
        else:
            how = f"exited with code {os.WEXITSTATUS(status)}"
        return {"ok": False, "kind": "crash", "error": f"evaluation process {how}: {_log_tail(log_path)}"}


def serve() -> None:
    """Answer one JSON request per stdin line with one JSON reply per stdout line."""
    import tempfile

    import halide as hl

    _data()  # made once, before the forks
    # Warm Halide's JIT once (no parallel loops: no thread pool exists when we fork).
    v = hl.Var("v")
    warm = hl.Func("warm")
    warm[v] = v * 2
    warm.realize([8])
    log_path = os.path.join(tempfile.mkdtemp(prefix="bayestune-halide-"), "child.log")
    out = sys.stdout
    out.write(json.dumps({"ready": True, "halide": getattr(hl, "__version__", "?")}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        reply = _run_request(request, log_path)
        reply["id"] = request.get("id")
        out.write(json.dumps(reply) + "\n")
        out.flush()


# ---------------------------------------------------------------------------------------
# Client side: the evaluator the benchmark problems use
# ---------------------------------------------------------------------------------------
class HalideEvaluator:
    """Sends configurations to a (re)started Halide server; see the module docstring."""

    def __init__(self, pipeline: str, space: Space, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        if not HALIDE_AVAILABLE:
            raise RuntimeError("the halide package is not installed: pip install 'bayestune[halide]'")
        self.pipeline = pipeline
        self.space = space
        self.timeout = timeout
        self._proc: subprocess.Popen | None = None
        self._next_id = 0
        self.halide_version: str | None = None

    def _start(self) -> None:
        env = dict(os.environ)
        env.setdefault("HL_NUM_THREADS", str(os.cpu_count() or 1))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        self._proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
            cwd=str(REPO),
        )
        hello = self._readline(60.0)
        if hello is None or not hello.get("ready"):
            self.close()
            raise RuntimeError(f"the Halide server did not start: {hello!r}")
        self.halide_version = hello.get("halide")

    def _readline(self, timeout: float) -> dict[str, Any] | None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return None
        line = self._proc.stdout.readline()
        if not line:
            return None
        return json.loads(line)

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        try:
            canonical = self.space.validate_config(config)
            X = self.space.to_matrix([canonical])
        except Exception as exc:
            return Result.failure(f"not a configuration of {self.pipeline}: {exc}", "invalid")
        if not self.space.is_feasible(X)[0]:
            return Result.failure("violates a known constraint", "invalid")
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        self._next_id += 1
        cfg = {k: list(v) if isinstance(v, tuple) else v for k, v in canonical.items()}
        request = {"id": self._next_id, "pipeline": self.pipeline, "config": cfg, "timeout": self.timeout}
        try:
            self._proc.stdin.write((json.dumps(request) + "\n").encode())
            self._proc.stdin.flush()
            reply = self._readline(self.timeout + SERVER_GRACE)
        except (OSError, ValueError) as exc:
            reply = None
            error = f"lost the Halide server: {exc}"
        else:
            error = "the Halide server stopped answering; restarted"
        if reply is None:
            self.close()
            return Result.failure(error, "timeout")
        if reply.get("ok"):
            return Result(values={"time": float(reply["time_ms"]), "compile_s": float(reply.get("compile_s", 0.0))})
        return Result.failure(str(reply.get("error", "")), str(reply.get("kind", "exception")))

    __call__ = evaluate

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        proc.wait()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class MeasurementCache:
    """One measurement per configuration, kept in a JSON-lines file (see the module docstring).

    Failures are cached too (a schedule Halide rejects is rejected again), except a timeout
    caused by a server that stopped answering, which says nothing about the schedule."""

    def __init__(self, evaluator: Any, path: Path) -> None:
        self.evaluator = evaluator
        self.path = Path(path)
        self.entries: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:  # a line torn by a killed run
                    continue
                self.entries[rec["key"]] = rec

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        key = config_key(config)
        rec = self.entries.get(key)
        if rec is None:
            res = self.evaluator.evaluate(config)
            rec = {"key": key, "values": dict(res.values) if res.feasible else {}, "error": res.error, "kind": res.kind}
            if res.feasible or "stopped answering" not in (res.error or ""):
                self.entries[key] = rec
                append_record(self.path, rec)
        if rec["error"] is not None or not rec["values"]:
            return Result.failure(rec["error"] or "failed", rec["kind"] or "exception")
        return Result(values=dict(rec["values"]))

    __call__ = evaluate

    def close(self) -> None:
        self.evaluator.close()


def cache_path(pipeline: str) -> Path | None:
    """Where the benchmark problems cache ``pipeline``'s measurements (None: no cache)."""
    setting = os.environ.get("BAYESTUNE_HALIDE_CACHE", "1")
    if setting == "0":
        return None
    directory = Path(setting) if setting != "1" else REPO / "benchmarks" / "results"
    return directory / f"{pipeline}.cache.jsonl"


_BLACK_BOXES: dict[str, HalideEvaluator | MeasurementCache] = {}


def measured_pipeline(pipeline: str) -> HalideEvaluator | MeasurementCache:
    """This process's one black box for ``pipeline`` (behind the measurement cache when it is on):
    problems that measure the same pipeline (``halide_blur``, ``halide_blur_mo``) share its server
    and its cache. Closing it stops the server; the next evaluation starts another."""
    if pipeline not in _BLACK_BOXES:
        if not HALIDE_AVAILABLE:
            raise RuntimeError(f"{pipeline!r} needs the halide package: pip install 'bayestune[halide]'")
        evaluator = HalideEvaluator(pipeline, HALIDE_PROBLEMS[pipeline][0]())
        path = cache_path(pipeline)
        _BLACK_BOXES[pipeline] = MeasurementCache(evaluator, path) if path is not None else evaluator
    return _BLACK_BOXES[pipeline]


def build_halide_problem(name: str) -> Problem:
    if name not in HALIDE_PROBLEMS:
        raise ValueError(f"unknown Halide problem {name!r}; known: {list(HALIDE_PROBLEMS)}")
    factory, description = HALIDE_PROBLEMS[name]
    black_box = measured_pipeline(name)
    cache = cache_path(name)
    return Problem(
        name=name,
        kind="halide",
        space=factory(),
        objectives=["time"],
        evaluate=black_box.evaluate,
        optimum=None,
        optimum_source=None,
        description=description,
        timing_sensitive=True,
        close=black_box.close,
        metadata={
            "threads": os.environ.get("HL_NUM_THREADS", str(os.cpu_count())),
            "timeout_s": DEFAULT_TIMEOUT,
            "measurement_cache": str(cache) if cache else None,
        },
    )


if __name__ == "__main__" and "--serve" in sys.argv:
    serve()
