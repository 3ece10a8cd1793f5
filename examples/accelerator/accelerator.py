"""A systolic-array accelerator for a 512x512x512 matrix multiply, as an analytical model.

A hardware designer's design-space exploration in miniature (the kind HyperMapper 2.0 was
built for): every design has a latency and an area, nobody wants only one of them, and some
designs do not fit the FPGA. The model is coarse but has the usual couplings:

* ``pe_rows`` x ``pe_cols`` processing elements, each doing ``simd`` multiply-adds per cycle;
* ``tile_m``, ``tile_n``, ``tile_k``: the output / reduction tile held on chip; a larger tile
  reuses more data (less DRAM traffic) but needs more on-chip buffer;
* ``buffering``: ``single`` buffers stall compute while a tile loads; ``double`` overlaps
  them at twice the buffer area;
* ``dataflow``: which operand stays in the PEs (output-, weight- or input-stationary), which
  changes the traffic of the others;
* ``clock_mhz``: a faster clock needs more pipelining registers (area) and stops closing
  timing on large arrays (an infeasible design, reported through ``timing_met``).

Outputs: ``latency_ms`` and ``area_mm2`` (both minimised), ``lut_util`` (percent of the
device's logic; the scenario's output constraint keeps it at or below 100) and ``timing_met``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

M = N = K = 512
DRAM_GBPS = 19.2  # one DDR4 channel
BYTES = 2  # fp16 operands
LUTS_PER_MAC = 310  # one fp16 multiply-add
DEVICE_LUTS = 1_182_000  # a large UltraScale+ part
BRAM_BYTES = 4608  # one 36 Kb block
DSP_AREA = 0.0021  # mm2 per multiply-add (incl. routing)
BRAM_AREA = 0.0065  # mm2 per block


def evaluate(config: Mapping[str, Any]) -> dict[str, Any]:
    rows, cols, simd = int(config["pe_rows"]), int(config["pe_cols"]), int(config["simd"])
    tm, tn, tk = int(config["tile_m"]), int(config["tile_n"]), int(config["tile_k"])
    double = config["buffering"] == "double"
    dataflow = str(config["dataflow"])
    clock = float(config["clock_mhz"])

    macs_per_cycle = rows * cols * simd
    # Utilisation: a tile that does not divide evenly over the array wastes PEs.
    util = (tm / (math.ceil(tm / rows) * rows)) * (tn / (math.ceil(tn / cols) * cols))
    compute_cycles = M * N * K / (macs_per_cycle * util)

    # DRAM traffic per dataflow (bytes): the stationary operand is read once.
    tiles_m, tiles_n, tiles_k = M / tm, N / tn, K / tk
    a_bytes, b_bytes, c_bytes = M * K * BYTES, K * N * BYTES, M * N * BYTES * 2
    if dataflow == "output_stationary":
        traffic = a_bytes * tiles_n + b_bytes * tiles_m + c_bytes
    elif dataflow == "weight_stationary":
        traffic = a_bytes * tiles_n + b_bytes + c_bytes * tiles_k
    else:  # input_stationary
        traffic = a_bytes + b_bytes * tiles_m + c_bytes * tiles_k
    memory_s = traffic / (DRAM_GBPS * 1e9)
    compute_s = compute_cycles / (clock * 1e6)
    latency_s = max(compute_s, memory_s) if double else compute_s + memory_s
    latency_s += 2e-6 * tiles_m * tiles_n * tiles_k  # per-tile control overhead

    buffer_bytes = (tm * tk + tk * tn + tm * tn) * BYTES * (2 if double else 1)
    brams = math.ceil(buffer_bytes / BRAM_BYTES)
    pipeline = 1.0 + max(0.0, clock - 200.0) / 300.0  # extra registers at high clocks
    luts = macs_per_cycle * LUTS_PER_MAC * pipeline + 20 * brams + 40_000
    area = macs_per_cycle * DSP_AREA * pipeline + brams * BRAM_AREA + 1.5
    # Timing closure: long wires across a large array limit the clock.
    fmax = 450.0 - 0.35 * (rows + cols) * math.sqrt(simd)
    return {
        "latency_ms": latency_s * 1e3,
        "area_mm2": area,
        "lut_util": 100.0 * luts / DEVICE_LUTS,
        "timing_met": clock <= fmax,
    }


if __name__ == "__main__":
    import json
    import sys

    names = ["pe_rows", "pe_cols", "simd", "tile_m", "tile_n", "tile_k", "buffering", "dataflow", "clock_mhz"]
    print(json.dumps(evaluate(dict(zip(names, sys.argv[1:])))))
