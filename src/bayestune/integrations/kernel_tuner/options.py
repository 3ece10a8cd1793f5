"""What Kernel Tuner was given: entries of its ``Options``, its objectives, and the device options
of ``tune_kernel`` (which the runner it hands a strategy does not keep)."""

from __future__ import annotations

import logging
import sys
from types import FrameType
from typing import Any

from bayestune.exceptions import BayestuneError

logger = logging.getLogger(__name__)


def tuning_option(tuning_options: Any, name: str) -> Any:
    """An entry of Kernel Tuner's ``Options``: ``tune_kernel`` sets some as attributes that shadow
    the dict item of the same name (``cache`` is the path as an item, the loaded dict as an attribute)."""
    try:
        return getattr(tuning_options, name)
    except (AttributeError, KeyError):
        return None


def kernel_tuner_objectives(tuning_options: Any) -> list[tuple[str, bool]]:
    """``(name, higher_is_better)`` of each objective Kernel Tuner was given: ``objective`` and
    ``objective_higher_is_better`` (one each, or lists from ``objectives={...}``)."""
    names = tuning_options.objective if tuning_options.objective is not None else "time"
    higher = tuning_options.objective_higher_is_better
    names = [names] if isinstance(names, str) else list(names)
    if higher is None:  # Kernel Tuner's own default: only time-like objectives omit it
        higher = [False] * len(names)
    higher = [higher] * len(names) if isinstance(higher, bool) else list(higher)
    if not names or len(higher) != len(names) or len(set(names)) != len(names):
        raise BayestuneError(
            f"Kernel Tuner's objectives {names} and objective_higher_is_better {higher} must "
            "name distinct objectives, one direction each"
        )
    return [(str(n), bool(h)) for n, h in zip(names, higher)]


def tune_kernel_device_options(runner: Any) -> dict[str, Any]:
    """``device``, ``platform``, ``compiler`` and ``compiler_options`` as given to ``tune_kernel``.

    Kernel Tuner 1.5 hands a strategy its runner, which does not keep them (a SequentialRunner
    passes them on to its device interface). They are read from ``tune_kernel``'s own
    ``device_options`` in the calling frame; when the strategy is not called from there, the
    OpenCL device is found from the runner's context, and the rest from its backend.
    """
    keys = ("device", "platform", "compiler", "compiler_options")
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "tune_kernel" and frame.f_globals.get("__name__") == "kernel_tuner.interface":
            options = frame.f_locals.get("device_options")
            if options is not None:
                return {k: options[k] for k in keys if k in options}
        frame = frame.f_back
    backend = getattr(getattr(runner, "dev", None), "dev", None)
    found = {
        "device": 0,
        "platform": 0,
        "compiler": getattr(backend, "compiler", None),
        "compiler_options": getattr(backend, "compiler_options", None),
    }
    found.update(_opencl_indices(backend))
    return found


def _opencl_indices(backend: Any) -> dict[str, int]:
    """The platform and device index of an OpenCL backend's context ({} for other backends)."""
    context = getattr(backend, "ctx", None)
    if context is None:
        return {}
    try:
        import pyopencl as cl

        used = context.devices[0]
        for p, platform in enumerate(cl.get_platforms()):
            for d, device in enumerate(platform.get_devices()):
                if device == used:
                    return {"platform": p, "device": d}
    except Exception as exc:  # noqa: BLE001 - an OpenCL query failing leaves the defaults
        logger.warning("cannot tell which OpenCL device Kernel Tuner uses (%s); the worker uses device 0", exc)
    return {}
