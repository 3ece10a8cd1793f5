"""Search strategies, constructible by name through :func:`make_strategy`.

Every module of this package is imported here, so a strategy registers itself (with
``@register``) just by living in ``bayestune/strategies/``.
"""

import importlib
import pkgutil

from bayestune.history import History, draw_unseen
from bayestune.strategies.base import Strategy, available_strategies, make_strategy, register

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["History", "Strategy", "available_strategies", "draw_unseen", "make_strategy", "register"]
