"""Module-level guard for the live OpenCL tests: skip with the reason a reader can act on when
Kernel Tuner, pyopencl or an OpenCL device (PoCL on a CPU is enough) is missing."""

from __future__ import annotations

from typing import Any

import pytest


def require_opencl_device() -> Any:
    """``pyopencl`` when a device exists; otherwise skips the calling test module."""
    pytest.importorskip(
        "kernel_tuner",
        reason="kernel_tuner is not installed (pip install -e '.[kernel-tuner]' in the bayestune checkout)",
    )
    cl = pytest.importorskip(
        "pyopencl", reason="pyopencl is not installed (pip install -e '.[kernel-tuner]' in the bayestune checkout)"
    )
    try:
        devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    except Exception:  # noqa: BLE001 - no ICD loader / no platform: no device
        devices = []
    if not devices:
        pytest.skip(
            "no OpenCL device (on a CPU: apt-get install pocl-opencl-icd ocl-icd-opencl-dev)", allow_module_level=True
        )
    return cl
