"""The per-configuration time limit: the exception that marks it, and SIGALRM for in-process runs.

Its own module because both sides of the worker pipe raise it: the strategy (in-process
evaluations under SIGALRM) and the worker runner (an answer that did not come in time).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


class ConfigTimeout(BaseException):
    """Raised inside an evaluation at the per-configuration limit. A BaseException, so Kernel
    Tuner's ``except Exception`` handlers do not swallow it."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`ConfigTimeout` after ``seconds`` (no-op without SIGALRM or off the main thread)."""
    usable = (
        seconds is not None
        and seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if seconds is None or not usable:
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise ConfigTimeout(f"stopped at the per-configuration limit of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
