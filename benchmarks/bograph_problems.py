"""Black boxes that log metrics, for the BoGraph benchmarks (issue 14, item 7).

* ``forrester2d``: f(x1) + falt(x2) (Forrester et al.; BoGraph §4.1) logging both terms and two
  noise counters.
* ``soc``: a synthetic 20-parameter system-on-chip in the spirit of BoGraph's gem5-Aladdin
  study (parameters of its Table 2). Cache and TLB miss rates, DMA latency, cycles, dynamic and
  leakage power each depend on a few parameters (four parameters matter to nothing); every
  logged metric carries 2 % multiplicative noise; distractor counters (pure noise, copies of
  a component's counters, constants) are logged beside them; the objective is the
  energy-delay product EDP = power × latency² of the *logged* power and latency.

Each problem knows its true DAG (for "structured BO with the true DAG") and its noise-free
optimum, found by exhaustive coordinate descent on the noise-free function (see
:func:`soc_optimum`); the benchmark scores runs by the noise-free value of what they evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayestune import Integer, Real
from bayestune.space import Space

NOISE = 0.02


@dataclass
class LoggedProblem:
    """A black box returning ``{objective, metrics...}``, its true DAG and noise-free optimum."""

    name: str
    space: Space
    objective: str
    evaluate: Callable[[Mapping[str, Any], np.random.Generator], dict[str, float]]
    true_value: Callable[[Mapping[str, Any]], float]
    optimum: float
    true_edges: list[tuple[str, str]] = field(default_factory=list)
    formulas: dict[str, str] = field(default_factory=dict)


# ---- Forrester 2-D ----------------------------------------------------------------------------
def forrester(x: float) -> float:
    return (6 * x - 2) ** 2 * math.sin(12 * x - 4)


def forrester_alt(x: float) -> float:
    return 0.5 * forrester(x) + 10 * (x - 0.5) + 5


def forrester2d() -> LoggedProblem:
    space = Space([Real("x1", 0.0, 1.0), Real("x2", 0.0, 1.0)])

    def evaluate(c: Mapping[str, Any], rng: np.random.Generator) -> dict[str, float]:
        a, b = forrester(c["x1"]), forrester_alt(c["x2"])
        return {"y": a + b, "f1": a, "f2": b, "noise.c1": float(rng.normal()), "noise.c2": float(rng.normal())}

    grid = np.linspace(0, 1, 200_001)
    f = (6 * grid - 2) ** 2 * np.sin(12 * grid - 4)
    optimum = float(f.min() + (0.5 * f + 10 * (grid - 0.5) + 5).min())
    return LoggedProblem(
        "forrester2d",
        space,
        "y",
        evaluate,
        lambda c: forrester(c["x1"]) + forrester_alt(c["x2"]),
        optimum,
        [("x1", "f1"), ("x2", "f2"), ("f1", "y"), ("f2", "y")],
        {"y": "f1 + f2"},
    )


# ---- the synthetic SoC --------------------------------------------------------------------------
SOC_PARAMETERS = [
    ("cycle_time", 1, 10),
    ("pipelining", 0, 1),
    ("cache_size", 14, 17),
    ("cache_assoc", 0, 5),
    ("cache_line", 5, 7),
    ("cache_hit_latency", 1, 5),
    ("cache_queue_size", 16, 256),
    ("cache_bandwidth", 2, 18),
    ("tlb_hit_latency", 1, 32),
    ("tlb_miss_latency", 1, 32),
    ("tlb_entries", 0, 5),
    ("tlb_assoc", 0, 5),
    ("tlb_page_size", 10, 15),
    ("tlb_max_walks", 2, 16),
    ("tlb_bandwidth", 2, 16),
    ("l2_size", 17, 21),
    ("enable_l2", 0, 1),
    ("pipelined_dma", 0, 1),
    ("ready_mode", 0, 1),
    ("ignore_cache_flush", 0, 1),
]


def soc_metrics(c: Mapping[str, Any]) -> dict[str, float]:
    """The noise-free metrics of one configuration (sizes are log2 values)."""
    miss = (
        0.25
        * 2.0 ** (-0.5 * (c["cache_size"] - 14))
        * (1 + 0.6 * math.exp(-c["cache_assoc"]))
        * (1 + 0.3 * (c["cache_line"] - 6) ** 2)
    )
    tlb = (
        0.2
        * 2.0 ** (-0.6 * c["tlb_entries"])
        * (1 + 0.3 * math.exp(-c["tlb_assoc"]))
        * 2.0 ** (-0.4 * (c["tlb_page_size"] - 10))
        + 0.001
    )
    dma = (
        2000.0
        * (0.5 if c["pipelined_dma"] else 1.0)
        * (0.8 if c["ready_mode"] else 1.0)
        * (0.9 if c["ignore_cache_flush"] else 1.0)
        * (1 + 8.0 / c["cache_bandwidth"])
    )
    penalty = 20.0 * 2.0 ** (-0.5 * (c["l2_size"] - 17)) if c["enable_l2"] else 60.0
    cycles = (
        1e5
        * (1 + 0.3 * (c["cache_hit_latency"] - 1))
        * (1 + miss * penalty)
        * (1 + tlb * c["tlb_miss_latency"] * 0.5)
        * (0.7 if c["pipelining"] else 1.0)
        + 5.0 * dma
    )
    latency = cycles * c["cycle_time"] * 1e-9
    dynamic = (
        50.0
        / c["cycle_time"]
        * (1 + 0.25 * (c["cache_size"] - 14))
        * (1 + c["cache_bandwidth"] / 18.0)
        * (1.3 if c["pipelining"] else 1.0)
        * (1 + 0.04 * c["cache_assoc"])
    )
    leakage = (
        2.5 * 2.0 ** (c["cache_size"] - 14)
        + (0.9 * 2.0 ** (c["l2_size"] - 17) if c["enable_l2"] else 0.0)
        + 0.5 * 2.0 ** c["tlb_entries"] / 32.0
    )
    return {
        "cache.miss_rate": miss,
        "tlb.miss_rate": tlb,
        "dma.latency": dma,
        "cpu.cycles": cycles,
        "latency": latency,
        "power.dynamic": dynamic,
        "power.leakage": leakage,
        "power": dynamic + leakage,
    }


def soc_edp(c: Mapping[str, Any]) -> float:
    m = soc_metrics(c)
    return m["power"] * m["latency"] ** 2


SOC_TRUE_EDGES = [
    ("cache_size", "cache.miss_rate"),
    ("cache_assoc", "cache.miss_rate"),
    ("cache_line", "cache.miss_rate"),
    ("tlb_entries", "tlb.miss_rate"),
    ("tlb_assoc", "tlb.miss_rate"),
    ("tlb_page_size", "tlb.miss_rate"),
    ("pipelined_dma", "dma.latency"),
    ("ready_mode", "dma.latency"),
    ("ignore_cache_flush", "dma.latency"),
    ("cache_bandwidth", "dma.latency"),
    ("cache.miss_rate", "cpu.cycles"),
    ("tlb.miss_rate", "cpu.cycles"),
    ("dma.latency", "cpu.cycles"),
    ("cache_hit_latency", "cpu.cycles"),
    ("tlb_miss_latency", "cpu.cycles"),
    ("pipelining", "cpu.cycles"),
    ("enable_l2", "cpu.cycles"),
    ("l2_size", "cpu.cycles"),
    ("cpu.cycles", "latency"),
    ("cycle_time", "latency"),
    ("cycle_time", "power.dynamic"),
    ("cache_size", "power.dynamic"),
    ("cache_bandwidth", "power.dynamic"),
    ("pipelining", "power.dynamic"),
    ("cache_assoc", "power.dynamic"),
    ("cache_size", "power.leakage"),
    ("l2_size", "power.leakage"),
    ("enable_l2", "power.leakage"),
    ("tlb_entries", "power.leakage"),
    ("power.dynamic", "power"),
    ("power.leakage", "power"),
    ("power", "edp"),
    ("latency", "edp"),
]


def soc_logs(m: Mapping[str, float], rng: np.random.Generator) -> dict[str, float]:
    """What the SoC logs: its metrics with 2 % noise, EDP from the logged power and latency,
    and distractor counters."""
    noisy = {k: v * (1 + NOISE * rng.normal()) for k, v in m.items()}
    logs = dict(noisy)
    logs["edp"] = noisy["power"] * noisy["latency"] ** 2
    logs["cache.hits"] = 1e6 * (1 - noisy["cache.miss_rate"]) * (1 + NOISE * rng.normal())
    logs["tlb.walks"] = 1e5 * noisy["tlb.miss_rate"] * (1 + NOISE * rng.normal())
    logs["cpu.ipc"] = 2e5 / noisy["cpu.cycles"] * (1 + NOISE * rng.normal())
    logs["cache.accesses"] = 1e6  # constant: dropped by the summary
    logs["sim.host_seconds"] = float(rng.lognormal(3.0, 0.3))  # pure noise
    for i in range(6):
        logs[f"sys.counter{i}"] = float(rng.lognormal(5.0, 0.5))
    return logs


def soc_optimum(restarts: int = 40, seed: int = 0) -> tuple[float, dict[str, int]]:
    """The noise-free minimum of EDP: coordinate descent over every value of one parameter at a
    time, from many random starts (the function is cheap; the best of all starts is kept)."""
    rng = np.random.default_rng(seed)
    best, best_c = math.inf, {}
    for _ in range(restarts):
        c = {n: int(rng.integers(lo, hi + 1)) for n, lo, hi in SOC_PARAMETERS}
        value = soc_edp(c)
        improved = True
        while improved:
            improved = False
            for n, lo, hi in SOC_PARAMETERS:
                for v in range(lo, hi + 1):
                    trial = {**c, n: v}
                    e = soc_edp(trial)
                    if e < value * (1 - 1e-12):
                        c, value, improved = trial, e, True
        if value < best:
            best, best_c = value, dict(c)
    return best, best_c


#: :func:`soc_optimum` as computed once (checked by tests/bograph/test_benchmark_problems.py).
SOC_OPTIMUM = None


def soc() -> LoggedProblem:
    space = Space([Integer(n, lo, hi) for n, lo, hi in SOC_PARAMETERS])

    def evaluate(c: Mapping[str, Any], rng: np.random.Generator) -> dict[str, float]:
        return soc_logs(soc_metrics(c), rng)

    optimum, _ = soc_optimum()
    return LoggedProblem(
        "soc", space, "edp", evaluate, soc_edp, optimum, list(SOC_TRUE_EDGES), {"edp": "power * latency**2"}
    )


PROBLEMS = {"forrester2d": forrester2d, "soc": soc}
