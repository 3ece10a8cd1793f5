"""The suggestion interface every search strategy implements, and the strategy registry.

A strategy only proposes raw rows; the :class:`~bayestune.optimizer.Optimizer` owns the
initial design, the journal, duplicate bookkeeping and the budget.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
import types
import typing
from dataclasses import dataclass, fields
from typing import Any, ClassVar, TypeVar

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.history import History
from bayestune.objectives import Objective
from bayestune.space.space import Space

_S = TypeVar("_S", bound="Settings")

#: One check of a setting: the option's name, whether the rule holds, and the rule as text.
Rule = tuple[str, bool, str]


def _type_fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` suits an option annotated ``hint`` (numbers stay numbers, ``True`` is
    no integer); annotations other than bool/int/float/str/None are left to the rules."""
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    for t in (typing.get_args(hint) if union else (hint,)):
        if t not in (bool, int, float, str, type(None)):
            return True
        if (t is type(None) and value is None) or (t is bool and isinstance(value, (bool, np.bool_))):
            return True
        numeric = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        if (t is int and numeric) or (t is float and (numeric or isinstance(value, (float, np.floating)))):
            return True
        if t is str and isinstance(value, str):
            return True
    return False


@dataclass(frozen=True)
class Settings:
    """A strategy's options (``strategy_options`` in a scenario): each strategy subclasses
    this with one field per option (the default is the field's) and states the rules the
    values must obey in :meth:`rules`."""

    @classmethod
    def from_options(cls: type[_S], strategy: str, options: Mapping[str, Any]) -> _S:
        """The settings for ``options``; unknown keys and broken rules are rejected by name."""
        allowed = sorted(f.name for f in fields(cls))
        unknown = sorted(set(options) - set(allowed))
        if unknown:
            raise BayestuneError(f"unknown option(s) {unknown} for strategy {strategy!r}; allowed: {allowed}")
        hints = typing.get_type_hints(cls)
        wrong = {k: v for k, v in options.items() if not _type_fits(v, hints.get(k, Any))}
        if wrong:
            raise BayestuneError(f"strategy {strategy!r}: option(s) of the wrong type: "
                                 + ", ".join(f"{k}={v!r} (expected {hints[k]})" for k, v in wrong.items()))
        settings = cls(**options)
        try:
            checks = settings.rules()
        except TypeError as exc:  # e.g. a string where a number belongs: "x" >= 10
            raise BayestuneError(f"strategy {strategy!r}: an option has the wrong type ({exc}); "
                                 f"got {dict(options)}") from None
        for key, holds, rule in checks:
            if not holds:
                raise BayestuneError(f"strategy {strategy!r}: {rule} must hold, but got {key}={getattr(settings, key)!r}")
        return settings

    def rules(self) -> list[Rule]:
        """The checks of the values, as ``(option, holds, rule)``."""
        return []

    def one_of(self, key: str, choices: Sequence[Any]) -> Rule:
        """The rule "``key`` is one of ``choices``"."""
        return key, getattr(self, key) in choices, f"{key} in {list(choices)}"


class Strategy(ABC):
    """Proposes configurations. Subclasses set ``name`` and implement :meth:`suggest`; those
    with options set ``settings_class`` to their :class:`Settings` subclass (read as ``self.settings``)."""

    name: ClassVar[str]
    #: Whether the strategy can handle several objectives.
    multi_objective: ClassVar[bool] = False
    #: The options the strategy accepts (none by default).
    settings_class: ClassVar[type[Settings]] = Settings

    def __init__(self, space: Space, objectives: Sequence[Objective], rng: np.random.Generator, **options: Any) -> None:
        self.settings = self.settings_class.from_options(self.name, options)
        self.space = space
        self.objectives = list(objectives)
        self.rng = rng
        if len(self.objectives) > 1 and not self.multi_objective:
            raise BayestuneError(
                f"strategy {self.name!r} optimises one objective, but the scenario has {len(self.objectives)}: "
                f"{[o.name for o in self.objectives]}")

    @abstractmethod
    def suggest(self, history: History, n: int) -> np.ndarray:
        """Up to ``n`` distinct feasible raw rows not in ``history.seen`` (fewer only when the
        space is exhausted)."""


_REGISTRY: dict[str, type[Strategy]] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator: make a strategy constructible by name (scenario files, CLI)."""
    _REGISTRY[cls.name] = cls
    return cls


def available_strategies() -> list[str]:
    import bayestune.strategies  # noqa: F401  (registers the built-in strategies)

    return sorted(_REGISTRY)


def make_strategy(name: str, space: Space, objectives: Sequence[Objective], rng: np.random.Generator,
                  options: dict[str, Any] | None = None) -> Strategy:
    names = available_strategies()
    if name not in _REGISTRY:
        raise BayestuneError(f"unknown strategy {name!r}; allowed: {names}")
    return _REGISTRY[name](space, objectives, rng, **(options or {}))
