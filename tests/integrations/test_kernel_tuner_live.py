"""BayestuneStrategy on real OpenCL kernels (PoCL on a CPU is enough): a few evaluations each."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from opencl_probe import require_opencl_device

from bayestune.trial import FailureKind, TrialStatus

cl = require_opencl_device()

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kernel_tuner"
sys.path.insert(0, str(EXAMPLE))
import tune_opencl  # noqa: E402

from bayestune.integrations.kernel_tuner import COMPILE, VERIFICATION, BayestuneStrategy  # noqa: E402

BROKEN_VECTOR_ADD = """
__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
#if block_size_x == 64
    this is not OpenCL;
#endif
    if (i < n) {
#if block_size_x == 8
        float acc = a[i];
        for (long k = 0; k < 400000000000L; k++)  /* hours: only a kill ends it */
            acc = acc * 0.999999f + b[i];
        c[i] = acc;
#elif block_size_x == 16
        c[i] = a[i] - b[i];
#else
        c[i] = a[i] + b[i];
#endif
    }
}
"""


@pytest.mark.parametrize("kernel", ["matmul", "convolution"])
def test_example_tunes_a_real_kernel_with_verified_answers_and_resumes(kernel, tmp_path):
    cache = tmp_path / f"{kernel}.json"
    first = tune_opencl.tune(kernel, 32, 3, cache=str(cache), iterations=2, config_timeout=120, confirm_rounds=2)
    assert first["evaluations_this_run"] == 3 and first["failed"] == 0, first
    assert first["default"]["time_ms"] > 0
    # the confirmed winner comes back in Kernel Tuner's results: re-measured through its runner, with the default
    best = first["best"]
    assert best is not None and first["confirmation_evaluations"] >= 2 * 2, first
    assert best["interval_ms"][0] <= best["time_ms"] <= best["interval_ms"][1] and best["searched_ms"] > 0
    assert Path(str(cache) + ".bayestune.sqlite").is_file()
    second = tune_opencl.tune(kernel, 32, 2, cache=str(cache), iterations=2, config_timeout=120, confirm_rounds=2)
    assert second["evaluations_this_run"] == 2 and second["evaluations_total"] == 5 and second["best"] is not None
    from kernel_tuner.util import read_cache

    assert len(read_cache(str(cache), open_cache=False)["cache"]) == 5


def test_compile_errors_wrong_answers_and_hung_kernels_do_not_abort_the_run(tmp_path):
    import kernel_tuner

    n = np.int32(4096)
    a = np.arange(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    c = np.zeros_like(a)
    strategy = BayestuneStrategy(seed=0, config_timeout=8, defaults={"block_size_x": 64})
    results, _env = kernel_tuner.tune_kernel(
        "vector_add",
        BROKEN_VECTOR_ADD,
        int(n),
        [c, a, b, n],
        {"block_size_x": [4, 8, 16, 32, 64]},
        lang="OpenCL",
        answer=[a + b, None, None, None],
        cache=str(tmp_path / "vadd.json"),
        iterations=2,
        strategy=strategy,
        strategy_options={"max_fevals": 5},
        quiet=True,
    )
    kinds = {r["block_size_x"]: r.get("bayestune_failure") for r in results}
    assert kinds == {4: None, 8: FailureKind.TIMEOUT, 16: VERIFICATION, 32: None, 64: COMPILE}
    statuses = {t.config["block_size_x"]: t.status for t in strategy.optimizer_.trials}
    assert statuses[64] is TrialStatus.FAILED and statuses[32] is TrialStatus.OK
    cached = (tmp_path / "vadd.json").read_text()
    assert "CompilationFailedConfig" in cached and "RuntimeFailedConfig" in cached


def test_the_opencl_device_in_use_is_found_from_the_runners_context():
    """Outside tune_kernel's frame the worker's device is the one the runner's OpenCL context holds."""
    from types import SimpleNamespace

    from bayestune.integrations.kernel_tuner import tune_kernel_device_options

    platforms = cl.get_platforms()
    p = len(platforms) - 1
    d = len(platforms[p].get_devices()) - 1
    backend = SimpleNamespace(
        ctx=cl.Context(devices=[platforms[p].get_devices()[d]]),
        compiler=None,
        compiler_options=["-cl-fast-relaxed-math"],
    )
    options = tune_kernel_device_options(SimpleNamespace(dev=SimpleNamespace(dev=backend)))
    assert options == {"device": d, "platform": p, "compiler": None, "compiler_options": ["-cl-fast-relaxed-math"]}


NO_GUARD_SCRIPT = """
import numpy as np
import kernel_tuner
from bayestune.integrations.kernel_tuner import BayestuneStrategy

size = 64
{verify_def}
rng = np.random.default_rng(0)
A = rng.standard_normal((size, size), dtype=np.float32)
B = rng.standard_normal((size, size), dtype=np.float32)
C = np.zeros_like(A)
tune_params = {{"block_size_x": [8, 16, 32], "block_size_y": [1, 2, 4, 8, 16, 32], "tile_size_x": [1, 2],
               "tile_size_y": [1, 2]}}
results, env = kernel_tuner.tune_kernel(
    "matmul_kernel", "#define WIDTH 64\\n" + open({source!r}).read(), (size, size), [C, A, B], tune_params,
    lang="OpenCL", restrictions=["block_size_x == block_size_y * tile_size_y"],
    grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"], {verify_arg}
    strategy=BayestuneStrategy(seed=0, config_timeout=60, journal=None), strategy_options={{"max_fevals": 4}},
    quiet=True)
print("evaluated", len(results))
"""


@pytest.mark.parametrize("verify", [False, True], ids=["plain", "verify-defined-in-the-script"])
def test_a_script_without_a_main_guard_runs(tmp_path, verify):
    """The README's snippet saved as a plain script: before, it hung at 0 % CPU (the spawned worker
    re-ran the script). Now the worker does not import the script unless the arguments need it;
    when they do (a verify function defined there) the run says why and goes on in-process."""
    import subprocess

    script = tmp_path / "tune.py"
    script.write_text(
        NO_GUARD_SCRIPT.format(
            source=str(EXAMPLE / "matmul.cl"),
            verify_def="def my_verify(answer, result, atol=None):\n    return True" if verify else "",
            verify_arg="verify=my_verify," if verify else "",
        )
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "evaluated 4" in proc.stdout
    assert ('put the call under `if __name__ == "__main__":`' in proc.stderr) == verify
