"""Peer adapters: other tools' optimizers driven through the same budget rules as bayestune's
strategies (:class:`benchmarks.budget.CountedObjective`).

Every module in this package registers its strategies with
:func:`benchmarks.contenders.register_strategy` (``family="peer"``) when imported. A peer whose
package is not installed stays registered but reports why it is unavailable, and
``python -m benchmarks run`` skips it with that message instead of failing.
"""

from __future__ import annotations

import importlib
import pkgutil


def load_all() -> None:
    """Import every adapter module of this package (each registers itself)."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def missing(modules: tuple[str, ...], install: str) -> str | None:
    """Why a peer cannot run (None if every module imports): for ``available=`` of
    :func:`benchmarks.contenders.register_strategy`. Any exception counts, since a package can be
    installed yet broken by an incompatible dependency."""
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as exc:
            return f"{module} is not importable ({install}): {type(exc).__name__}: {exc}"
    return None
