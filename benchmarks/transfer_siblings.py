"""Sibling spaces for the transfer benchmark (issue 32): one Halide pipeline at three image sizes.

The issue's held-out pairs are one kernel on sibling GPUs: strongly related spaces. The pairs
that can be built here are one real program at different problem sizes, measured on this
machine: the separable 3x3 box blur of :mod:`benchmarks.halide_problems` (its knobs,
``BLUR_KNOBS``) on float32 images of 2048², 1024² and 512² pixels.

Recording (once; ``record``): ``--n`` configurations drawn uniformly (seeded) from the blur's
schedule space, each JIT-compiled once in a worker process and timed at every size (sizes in a
rotating order, so drift on a shared machine spreads over all of them): a warm-up run, the
output checked against numpy, then the minimum of at least 3 runs and 0.05 s (at most 20 runs),
in milliseconds. A schedule that fails to compile or run is recorded as a Kernel Tuner failure
marker; one that takes longer than ``--timeout`` seconds (compile + all sizes) as a compile
failure. Each size is written as a Kernel Tuner cache (``blur_<size>.json.gz`` in
``benchmarks/data/transfer_siblings/``, ``order`` spelled as its digits), so the replay, the
transfer's prior-run reader and ``--prior-run`` read them as they read a GPU cache: the space
is the recorded configurations (the rest violate a known constraint), the optimum the best
recorded time.

    nice -n 19 python -m benchmarks.transfer_siblings record --n 360
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

DATA_DIR = Path(__file__).resolve().parent / "data" / "transfer_siblings"
SIZES = (2048, 1024, 512)
MARGIN = 64
KEYS = ["tile_x", "tile_y", "vector", "parallel", "unroll", "compute_at", "order"]
MIN_RUNS, MAX_RUNS, MIN_SECONDS = 3, 20, 0.05


def problem_names() -> list[str]:
    return [f"blur_{s}" for s in SIZES]


def _spell(value: Any) -> Any:
    """A configuration value as a cache value: a loop order (tuple) as its digits."""
    return "".join(str(v) for v in value) if isinstance(value, tuple) else value


def _unspell(config: dict[str, Any]) -> dict[str, Any]:
    return {**config, "order": tuple(int(c) for c in str(config["order"]))}


def _worker(conn: Any) -> None:
    """Measure configurations sent over ``conn`` until it closes: ``{size: ms}`` or a failure."""
    import halide as hl

    from bayestune.integrations.halide import apply_schedule
    from benchmarks.halide_problems import BLUR_KNOBS

    rng = np.random.default_rng(12345)
    big = max(SIZES)
    image = rng.random((big + 2 + 2 * MARGIN, big + 2 + 2 * MARGIN), dtype=np.float32)
    refs = {}
    for s in SIZES:
        core = image[MARGIN : MARGIN + s + 2, MARGIN : MARGIN + s + 2]
        bx = (core[:, :-2] + core[:, 1:-1] + core[:, 2:]) / np.float32(3.0)
        refs[s] = (bx[:-2, :] + bx[1:-1, :] + bx[2:, :]) / np.float32(3.0)
    while True:
        try:
            config, order = conn.recv()
        except EOFError:
            return
        try:
            inp = hl.ImageParam(hl.Float(32), 2, "inp")
            x, y = hl.Var("x"), hl.Var("y")
            bx, out = hl.Func("blur_x"), hl.Func("blur_y")
            bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3.0
            out[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3.0
            apply_schedule(hl, {"blur_x": bx, "blur_y": out}, BLUR_KNOBS, _unspell(config))
            out.compile_jit()
        except Exception as exc:  # noqa: BLE001 - a schedule Halide refuses is a recorded failure
            conn.send({"error": "CompilationFailedConfig", "message": str(exc)[:200]})
            continue
        times: dict[int, float] = {}
        try:
            buf = hl.Buffer(image)
            buf.set_min([-MARGIN, -MARGIN])
            inp.set(buf)
            for s in order:
                result = hl.Buffer(hl.Float(32), [s, s])
                out.realize(result)
                if not np.allclose(np.asarray(result), refs[s], rtol=1e-3, atol=1e-3):
                    raise RuntimeError("output differs from numpy")
                runs: list[float] = []
                start = time.perf_counter()
                while len(runs) < MAX_RUNS and (len(runs) < MIN_RUNS or time.perf_counter() - start < MIN_SECONDS):
                    t = time.perf_counter()
                    out.realize(result)
                    runs.append(time.perf_counter() - t)
                times[s] = 1000.0 * min(runs)
        except Exception as exc:  # noqa: BLE001
            conn.send({"error": "RuntimeFailedConfig", "message": str(exc)[:200]})
            continue
        conn.send({"times": times})


class _Measurer:
    """A worker process that is killed and replaced when one configuration exceeds the timeout."""

    #: Extra seconds for a fresh worker's first answer (importing Halide, making the images).
    STARTUP_GRACE = 30.0

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.ctx = multiprocessing.get_context("spawn")
        self._start()

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        self._warm = False

    def measure(self, config: dict[str, Any], order: list[int]) -> dict[str, Any]:
        self.conn.send((config, order))
        if self.conn.poll(self.timeout + (0.0 if self._warm else self.STARTUP_GRACE)):
            self._warm = True
            try:
                return self.conn.recv()
            except EOFError:
                pass
        self.proc.kill()
        self.proc.join()
        self._start()
        return {"error": "CompilationFailedConfig", "message": f"no answer within {self.timeout} s"}

    def close(self) -> None:
        self.conn.close()
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()


def record(args: argparse.Namespace) -> None:
    from benchmarks.halide_problems import blur_space

    space = blur_space()
    rng = np.random.default_rng(args.seed)
    rows = []
    seen = set()
    while len(rows) < args.n:  # uniform over the feasible schedules, distinct
        X = space.sample(4 * args.n, rng)
        X = X[space.is_feasible(X)]
        for row, key in zip(X, space.row_keys(X)):
            if key not in seen and len(rows) < args.n:
                seen.add(key)
                rows.append(row)
    configs = [{k: _spell(v) for k, v in space.to_config(r).items()} for r in rows]
    default = {k: _spell(v) for k, v in space.default_config().items()}
    if default not in configs:
        configs[0] = default  # the default schedule is recorded, so a replay can start from it
    measurer = _Measurer(args.timeout)
    records: list[dict[str, Any]] = []
    started = time.time()
    loads = []
    try:
        for i, config in enumerate(configs):
            order = [SIZES[(i + j) % len(SIZES)] for j in range(len(SIZES))]
            records.append({"config": config, **measurer.measure(config, order)})
            if i % 20 == 0:
                loads.append(os.getloadavg()[0])
                print(
                    f"{i + 1}/{len(configs)} {time.time() - started:.0f} s load {loads[-1]:.1f}: {records[-1]}",
                    flush=True,
                )
    finally:
        measurer.close()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    tune_params = {k: sorted({c[k] for c in configs}, key=lambda v: (str(type(v)), v)) for k in KEYS}
    meta = {
        "how": "python -m benchmarks.transfer_siblings record " + " ".join(sys.argv[2:]),
        "recorded": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "wall_s": round(time.time() - started),
        "load_average_1min": [round(v, 1) for v in loads],
        "cpu_count": os.cpu_count(),
    }
    for s in SIZES:
        cache = {}
        for r in records:
            key = ",".join(str(r["config"][k]) for k in KEYS)
            t = r["times"][s] if "times" in r else r["error"]
            cache[key] = {**r["config"], "time": t}
        data = {
            "kernel_name": f"blur_{s}",
            "device_name": "this machine (CPU, Halide JIT)",
            "problem_size": [s, s],
            "tune_params_keys": KEYS,
            "tune_params": tune_params,
            "objective": "time",
            "metadata": meta,
            "cache": cache,
        }
        path = out_dir / f"blur_{s}.json.gz"
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            json.dump(data, fh)
        ok = [c["time"] for c in cache.values() if isinstance(c["time"], float)]
        print(
            f"{path}: {len(cache)} configurations, {len(ok)} succeeded, best {min(ok):.3f} ms, "
            f"median {np.median(ok):.3f} ms",
            flush=True,
        )


def build_sibling_problem(name: str):
    """The replay problem of one recorded size (``blur_2048``, ...)."""
    from bayestune.evaluators.replay import load_kernel_tuner_cache
    from benchmarks.problem import Problem

    path = DATA_DIR / f"{name}.json.gz"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: record it with python -m benchmarks.transfer_siblings record")
    replay = load_kernel_tuner_cache(path, name=name)
    return Problem(
        name=name,
        kind="halide",
        space=replay.space,
        objectives=[replay.objective],
        evaluate=replay.evaluator().evaluate,
        optimum=replay.optimum,
        optimum_source="cache",
        description=f"Halide blur {name} recorded on this machine ({replay.n_known_feasible} known-feasible, "
        f"{replay.n_failing} failing)",
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.transfer_siblings",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("record", help="measure the sibling spaces once and write their caches")
    p.add_argument("--n", type=int, default=360)
    p.add_argument("--seed", type=int, default=32)
    p.add_argument("--timeout", type=float, default=20.0)
    p.add_argument("--out", default=str(DATA_DIR), help="directory for the caches (default: the benchmark's)")
    p.set_defaults(func=record)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    sys.exit(main())
