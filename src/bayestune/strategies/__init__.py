"""Search strategies, constructible by name through :func:`make_strategy`."""

from bayestune.strategies import bo, random_search  # noqa: F401  (registers)
from bayestune.strategies.base import History, Strategy, available_strategies, draw_unseen, make_strategy, register

__all__ = ["History", "Strategy", "available_strategies", "draw_unseen", "make_strategy", "register"]
