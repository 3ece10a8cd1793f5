"""One Halide configuration, in its own process: ``python -m bayestune.integrations.halide.worker``.

Reads a request (JSON) on stdin, prints one JSON answer line on stdout:
``{"stage": "ok" | "schedule" | "compile" | "realize" | "verify", ...}``. Started by
:func:`bayestune.integrations.halide.tuner.run_worker`, which kills it at the time limit.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from typing import Any


def _answer(stage: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"stage": stage, **fields}) + "\n")
    sys.stdout.flush()


def _realize(hl: Any, np: Any, pipeline: Any) -> Any:
    for i, (param, array) in enumerate(pipeline.inputs):
        buf = hl.Buffer(np.ascontiguousarray(array))
        mins = pipeline.input_mins[i] if i < len(pipeline.input_mins) else None
        if mins is not None:
            buf.set_min(list(mins))
        param.set(buf)
    out = hl.Buffer(pipeline.output.type(), list(pipeline.shape))
    pipeline.output.realize(out)
    return out


def main() -> int:
    request = json.loads(sys.stdin.read())
    sys.path[:0] = request.get("paths", [])
    import halide as hl
    import numpy as np

    from bayestune.integrations.halide.knobs import apply_schedule, knobs_from_json

    module, _, fname = request["builder"].partition(":")
    pipeline = getattr(importlib.import_module(module), fname)(hl)
    if request["mode"] == "measure":
        try:
            apply_schedule(hl, pipeline.funcs, knobs_from_json(request["knobs"]), request["config"], pipeline.rvars)
        except hl.HalideError as exc:
            _answer("schedule", error=str(exc).strip())
            return 0
    t0 = time.perf_counter()
    try:
        pipeline.output.compile_jit()
    except hl.HalideError as exc:
        _answer("compile", error=str(exc).strip())
        return 0
    compile_s = time.perf_counter() - t0
    try:
        out = _realize(hl, np, pipeline)
        result = np.array(out, copy=True)
    except hl.HalideError as exc:
        _answer("realize", error=str(exc).strip(), compile_s=compile_s)
        return 0
    if request["mode"] == "reference":
        np.save(request["reference"], result)
        _answer("ok", compile_s=compile_s, run_ms=0.0)
        return 0
    reference = np.load(request["reference"])
    if result.shape != reference.shape or not np.allclose(
        result, reference, rtol=request["rtol"], atol=request["atol"]
    ):
        diff = float(np.abs(result - reference).max()) if result.shape == reference.shape else float("nan")
        _answer(
            "verify",
            error=f"output differs from the reference realization by up to {diff:.3g} "
            f"(rtol={request['rtol']}, atol={request['atol']})",
            compile_s=compile_s,
        )
        return 0
    times = []
    try:
        for _ in range(int(request["repeats"])):
            t = time.perf_counter()
            pipeline.output.realize(out)
            times.append((time.perf_counter() - t) * 1e3)
    except hl.HalideError as exc:
        _answer("realize", error=str(exc).strip(), compile_s=compile_s)
        return 0
    _answer("ok", run_ms=min(times), compile_s=compile_s, extra={"median_ms": sorted(times)[len(times) // 2]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
