"""A separable 3x3 box blur as a Halide builder for bayestune.integrations.halide.

``build(hl)`` defines ``blur_x`` and ``out`` (no schedule) on a 1024 x 1024 float32 image;
``build_small`` the same on 128 x 128 (for tests). The input is read exactly where the
algorithm needs it (x..x+2, y..y+2), so a split that overruns the image fails at realize.
"""

from __future__ import annotations

from typing import Any

from bayestune.integrations.halide import Pipeline


def _blur(hl: Any, size: int) -> Pipeline:
    import numpy as np

    inp = hl.ImageParam(hl.Float(32), 2, "inp")
    x, y = hl.Var("x"), hl.Var("y")
    blur_x, out = hl.Func("blur_x"), hl.Func("out")
    blur_x[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3.0
    out[x, y] = (blur_x[x, y] + blur_x[x, y + 1] + blur_x[x, y + 2]) / 3.0
    data = np.random.default_rng(0).random(
        (size + 2, size + 2), dtype=np.float32
    )  # numpy (y, x) = Halide (x, y) transposed
    return Pipeline(output=out, funcs={"blur_x": blur_x, "out": out}, inputs=[(inp, data)], shape=(size, size))


def build(hl: Any) -> Pipeline:
    return _blur(hl, 1024)


def build_small(hl: Any) -> Pipeline:
    return _blur(hl, 128)
