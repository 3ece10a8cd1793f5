"""Tune real OpenCL kernels with Kernel Tuner, bayestune as the search strategy.

Runs on any OpenCL device; on a CPU-only machine install PoCL
(``apt-get install pocl-opencl-icd ocl-icd-opencl-dev``) and ``pip install -e ".[kernel-tuner]"`` (from the clone).

    python examples/kernel_tuner/tune_opencl.py matmul --size 512 --max-fevals 30
    python examples/kernel_tuner/tune_opencl.py convolution --size 1024 --max-fevals 30

Every configuration's output is checked against a NumPy answer; a configuration that fails to
compile, crashes, gives a wrong answer or runs over ``--config-timeout`` is recorded as failed and
the run goes on. Results are cached in ``--cache`` (Kernel Tuner's format, read back as a warm
start) with a bayestune journal beside it: interrupt the run and start it again to resume.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent


def matmul_problem(size: int) -> dict[str, Any]:
    """Kernel Tuner's tiled matmul example: 4 parameters, 1 restriction, local-memory tiles."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((size, size), dtype=np.float32)
    B = rng.standard_normal((size, size), dtype=np.float32)
    C = np.zeros_like(A)
    tune_params = {
        "block_size_x": [8, 16, 32, 64],
        "block_size_y": [1, 2, 4, 8, 16, 32],
        "tile_size_x": [1, 2, 4],
        "tile_size_y": [1, 2, 4],
    }
    restrictions = [
        "block_size_x == block_size_y * tile_size_y",
        f"{size} % (block_size_x * tile_size_x) == 0",
        f"{size} % (block_size_y * tile_size_y) == 0",
    ]
    return dict(
        kernel_name="matmul_kernel",
        source=f"#define WIDTH {size}\n" + (HERE / "matmul.cl").read_text(),
        problem_size=(size, size),
        arguments=[C, A, B],
        tune_params=tune_params,
        restrictions=restrictions,
        grid_div_x=["block_size_x", "tile_size_x"],
        grid_div_y=["block_size_y", "tile_size_y"],
        answer=[(A.astype(np.float64) @ B).astype(np.float32), None, None],
        atol=1e-2 * np.sqrt(size),
        default={"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1},
    )


def convolution_problem(size: int, filter_size: int = 7) -> dict[str, Any]:
    """A 2-D convolution: 5 parameters, divisibility and local-memory restrictions."""
    rng = np.random.default_rng(1)
    image = rng.standard_normal((size + filter_size - 1, size + filter_size - 1), dtype=np.float32)
    filt = rng.standard_normal((filter_size, filter_size), dtype=np.float32)
    out = np.zeros((size, size), dtype=np.float32)
    windows = np.lib.stride_tricks.sliding_window_view(image.astype(np.float64), (filter_size, filter_size))
    answer = np.einsum("yxij,ij->yx", windows, filt.astype(np.float64)).astype(np.float32)
    tune_params = {
        "block_size_x": [1, 2, 4, 8, 16, 32, 64],
        "block_size_y": [1, 2, 4, 8, 16],
        "tile_size_x": [1, 2, 4],
        "tile_size_y": [1, 2, 4],
        "use_local": [0, 1],
    }
    local_bytes = (
        f"4 * (block_size_x * tile_size_x + {filter_size - 1}) * (block_size_y * tile_size_y + {filter_size - 1})"
    )
    restrictions = [
        f"{size} % (block_size_x * tile_size_x) == 0",
        f"{size} % (block_size_y * tile_size_y) == 0",
        "block_size_x * block_size_y <= 1024",
        f"use_local == 0 or {local_bytes} <= 32768",
    ]
    defines = (
        f"#define IMAGE_W {size}\n#define IMAGE_H {size}\n"
        f"#define FILTER_W {filter_size}\n#define FILTER_H {filter_size}\n"
    )
    return dict(
        kernel_name="convolution_kernel",
        source=defines + (HERE / "convolution.cl").read_text(),
        problem_size=(size, size),
        arguments=[out, image, filt],
        tune_params=tune_params,
        restrictions=restrictions,
        grid_div_x=["block_size_x", "tile_size_x"],
        grid_div_y=["block_size_y", "tile_size_y"],
        answer=[answer, None, None],
        atol=1e-3 * filter_size**2,
        default={"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1, "use_local": 0},
    )


PROBLEMS = {"matmul": matmul_problem, "convolution": convolution_problem}


def tune(
    kernel: str,
    size: int,
    max_fevals: int,
    *,
    cache: str | None = None,
    seed: int = 0,
    config_timeout: float = 60.0,
    iterations: int = 7,
    time_limit: float | None = None,
    confirm_rounds: int = 6,
) -> dict[str, Any]:
    """Tune one kernel; a summary (default configuration vs best found, evaluations, wall time)."""
    import kernel_tuner

    from bayestune.integrations.kernel_tuner import BayestuneStrategy

    p = PROBLEMS[kernel](size)
    strategy = BayestuneStrategy(
        seed=seed, config_timeout=config_timeout, defaults=p["default"], confirm_rounds=confirm_rounds
    )
    options: dict[str, Any] = {"max_fevals": max_fevals}
    if time_limit:
        options["time_limit"] = time_limit
    started = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        p["kernel_name"],
        p["source"],
        p["problem_size"],
        p["arguments"],
        p["tune_params"],
        lang="OpenCL",
        restrictions=p["restrictions"],
        grid_div_x=p["grid_div_x"],
        grid_div_y=p["grid_div_y"],
        answer=p["answer"],
        atol=p["atol"],
        cache=cache,
        iterations=iterations,
        strategy=strategy,
        strategy_options=options,
        quiet=True,
    )
    wall = time.perf_counter() - started
    trials = strategy.optimizer_.trials
    default = next((t for t in trials if t.origin == "default"), None)
    best = strategy.optimizer_.best
    winner = next((r for r in results if r.get("bayestune_winner")), None)
    return {
        "kernel": kernel,
        "size": size,
        "device": env.get("device_name"),
        "evaluations_this_run": sum(1 for r in results if not r.get("bayestune_resumed")),
        "confirmation_evaluations": 0
        if strategy.confirmation_ is None
        else sum(len(e.samples) + e.failures for e in strategy.confirmation_.estimates),
        "evaluations_total": len(trials),
        "failed": sum(1 for t in trials if not t.feasible),
        "failure_kinds": sorted({t.failure_kind for t in trials if t.failure_kind}),
        "default": None
        if default is None
        else {"config": dict(default.config), "time_ms": default.values.get("time"), "error": default.error},
        "best_searched": None if best is None else {"config": dict(best.config), "time_ms": best.values["time"]},
        # the confirmed winner: re-measured with the default in interleaved rounds (bayestune_* fields)
        "best": None
        if winner is None
        else {
            "config": {k: winner[k] for k in p["tune_params"]},
            "time_ms": winner["bayestune_confirmed"]["value"],
            "interval_ms": [winner["bayestune_confirmed"]["low"], winner["bayestune_confirmed"]["high"]],
            "searched_ms": winner["time"],
            "speedup": winner.get("bayestune_speedup"),
        },
        "wall_s": round(wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kernel", choices=sorted(PROBLEMS))
    parser.add_argument("--size", type=int, default=512, help="matrix / image side (default 512)")
    parser.add_argument("--max-fevals", type=int, default=30, help="configurations to run (Kernel Tuner's max_fevals)")
    parser.add_argument(
        "--time-limit", type=float, default=None, help="seconds for the whole run (Kernel Tuner's time_limit)"
    )
    parser.add_argument(
        "--config-timeout", type=float, default=60.0, help="seconds per configuration (compile + verify + benchmark)"
    )
    parser.add_argument("--cache", default=None, help="Kernel Tuner cache file (default: <kernel>_<size>.json here)")
    parser.add_argument("--iterations", type=int, default=7, help="benchmark runs per configuration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--confirm-rounds", type=int, default=6, help="interleaved rounds confirming the winner")
    args = parser.parse_args()
    cache = args.cache or f"{args.kernel}_{args.size}.json"
    summary = tune(
        args.kernel,
        args.size,
        args.max_fevals,
        cache=cache,
        seed=args.seed,
        config_timeout=args.config_timeout,
        iterations=args.iterations,
        time_limit=args.time_limit,
        confirm_rounds=args.confirm_rounds,
    )
    print(json.dumps(summary, indent=2))
    if summary["default"] and summary["default"]["time_ms"] and summary["best"]:
        print(
            f"default {summary['default']['time_ms']:.3f} ms -> confirmed best {summary['best']['time_ms']:.3f} ms "
            f"({summary['default']['time_ms'] / summary['best']['time_ms']:.2f}x) in "
            f"{summary['evaluations_this_run']} evaluations, {summary['wall_s']} s"
        )


if __name__ == "__main__":
    main()
