"""Options of a component, checked once: typed fields, rules as data, nested groups.

Every tunable part (a strategy, the trust region, the random forest, the acquisition search,
NOTEARS, the log summary) declares its options as a frozen dataclass deriving from
:class:`Settings`, with the default as the field's and a comment after each field saying what
it does (the options reference is generated from those comments, see
:mod:`bayestune.options_reference`). A field whose type is itself a :class:`Settings` is a
*group*: users write it as a mapping (``trust_region: {every: 3}``), and the keys they leave
out keep the group's default of that owner.

Why here, at the bottom: components of the lower layers own their groups, and the strategies
above only nest them; one checker rejects unknown keys, wrong types and broken rules by their
dotted name (``trust_region.every``) for all of them.

Two kinds of options are handled on the way in:

* **renamed** ones (:attr:`Settings.RENAMED`: old flat name -> new dotted name) still load
  from old scenario files and journals, with a warning naming the new spelling;
* **experimental** groups (:attr:`Settings.EXPERIMENTAL`) hold options that lost in the
  benchmarks and stay off: setting one warns.
"""

from __future__ import annotations

import types
import typing
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, TypeVar

import numpy as np

from bayestune.exceptions import BayestuneError
from bayestune.formatting import did_you_mean

_S = TypeVar("_S", bound="Settings")

#: The version in which renamed-option shims and experimental options go (CHANGELOG.md).
EXIT_VERSION = "0.3.0"

#: One check of a setting: the option's name, whether the rule holds, and the rule as text.
Rule = tuple[str, bool, str]


class ExperimentalOptionWarning(UserWarning):
    """An option of an ``experimental`` group was set: it lost against the default in the
    project's benchmarks and may change or go."""


class RenamedOptionWarning(FutureWarning):
    """An option was given under its old name; it loads, but the new spelling is preferred."""


def _type_fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` suits an option annotated ``hint`` (numbers stay numbers, ``True`` is
    no integer); annotations other than bool/int/float/str/None are left to the rules."""
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    for t in typing.get_args(hint) if union else (hint,):
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


def group_type(hint: Any) -> type[Settings] | None:
    """The :class:`Settings` class of a group field's annotation (None: a plain option)."""
    return hint if isinstance(hint, type) and issubclass(hint, Settings) else None


@dataclass(frozen=True)
class Settings:
    """A component's options: subclass it with one field per option and state the rules the
    values must obey in :meth:`rules` (see the module docstring)."""

    #: Old option names that still load: old flat name -> new dotted name (``"trust_region.every"``).
    RENAMED: ClassVar[Mapping[str, str]] = {}
    #: Whether setting any option of this group warns (:class:`ExperimentalOptionWarning`).
    EXPERIMENTAL: ClassVar[bool] = False

    @classmethod
    def from_options(
        cls: type[_S], owner: str, options: Mapping[str, Any], *, base: _S | None = None, path: str = ""
    ) -> _S:
        """The settings for ``options`` over ``base`` (default: the class defaults); unknown
        keys, wrong types and broken rules are rejected by their dotted name. ``owner`` names
        what the options belong to in messages (``"strategy 'bo'"``)."""
        if not isinstance(options, Mapping):
            raise BayestuneError(
                f"{owner}: option group {path.rstrip('.') or 'options'} must be a mapping of "
                f"option names to values, but got {options!r}"
            )
        options = cls.translate(owner, dict(options), path)
        allowed = sorted(f.name for f in fields(cls))
        unknown = sorted(set(options) - set(allowed))
        if unknown:
            raise BayestuneError(
                f"unknown option(s) {[path + k for k in unknown]} for {owner}"
                + "".join(did_you_mean(path + k, [path + a for a in allowed]) for k in unknown)
                + f"; allowed: {[path + k for k in allowed]}"
            )
        hints = typing.get_type_hints(cls)
        current = base if base is not None else cls()
        values: dict[str, Any] = {}
        for key, value in options.items():
            group = group_type(hints[key])
            if group is not None:
                values[key] = (
                    value
                    if isinstance(value, group)
                    else group.from_options(
                        owner, value if value is not None else {}, base=getattr(current, key), path=f"{path}{key}."
                    )
                )
            elif not _type_fits(value, hints.get(key, Any)):
                raise BayestuneError(
                    f"{owner}: option(s) of the wrong type: {path}{key}={value!r} (expected {hints[key]})"
                )
            else:
                values[key] = value
        settings = replace(current, **values)
        if cls.EXPERIMENTAL:
            default = cls()
            changed = [
                f.name
                for f in fields(cls)
                if f.name in options and getattr(settings, f.name) != getattr(default, f.name)
            ]
            if changed:
                warnings.warn(
                    f"{owner}: experimental option(s) {[path + k for k in changed]} set; they lost against "
                    f"the default in this project's benchmarks and go in {EXIT_VERSION} unless one becomes the default",
                    ExperimentalOptionWarning,
                    stacklevel=3,
                )
        settings.check(owner, path)
        return settings

    @classmethod
    def translate(cls, owner: str, options: dict[str, Any], path: str = "") -> dict[str, Any]:
        """``options`` with old names (:attr:`RENAMED`) moved to their new places, warning once
        per old name; a value given both ways is an error."""
        for old in [k for k in options if k in cls.RENAMED]:
            new = cls.RENAMED[old]
            put_option(options, new, options.pop(old), owner, path, old=old)
            warnings.warn(
                f"{owner}: option {path}{old!r} is now spelled {path}{new!r} (the old name goes in {EXIT_VERSION})",
                RenamedOptionWarning,
                stacklevel=4,
            )
        return options

    def check(self, owner: str, path: str = "") -> None:
        """Raise a :class:`BayestuneError` naming the first broken rule."""
        try:
            checks = self.rules()
        except TypeError as exc:  # e.g. a string where a number belongs: "x" >= 10
            raise BayestuneError(
                f"{owner}: an option of {path.rstrip('.') or 'the options'} has the wrong type ({exc})"
            ) from None
        for key, holds, rule in checks:
            if not holds:
                raise BayestuneError(f"{owner}: {rule} must hold, but got {path}{key}={self._value_of(key)!r}")

    def _value_of(self, dotted: str) -> Any:
        value: Any = self
        for part in dotted.split("."):
            value = getattr(value, part)
        return value

    def rules(self) -> list[Rule]:
        """The checks of the values, as ``(option, holds, rule)``."""
        return []

    def one_of(self, key: str, choices: Sequence[Any]) -> Rule:
        """The rule "``key`` is one of ``choices``"."""
        return key, getattr(self, key) in choices, f"{key} in {list(choices)}"

    def at_least(self, key: str, low: float, *, integer: bool = True) -> Rule:
        """The rule "``key`` is an integer (or a number) ``>= low``"."""
        value = getattr(self, key)
        kind = int if integer else (int, float)
        ok = isinstance(value, kind) and not isinstance(value, bool) and value >= low
        return key, ok, f"`{key} >= {low}`" + (" (an integer)" if integer else "")


def put_option(
    options: dict[str, Any],
    dotted: str,
    value: Any,
    owner: str = "options",
    path: str = "",
    *,
    old: str | None = None,
    replace_given: bool = False,
) -> None:
    """Set ``options[a][b] = value`` for ``dotted="a.b"`` in place, copying the groups it
    enters; an option already given there is an error (given twice, once under ``old``) unless
    ``replace_given`` (a reader whose later key wins)."""
    *groups, leaf = dotted.split(".")
    target = options
    for g in groups:
        existing = target.get(g)
        if existing is None:
            existing = {}
        elif isinstance(existing, Settings):
            existing = {f.name: getattr(existing, f.name) for f in fields(existing)}
        elif not isinstance(existing, Mapping):
            raise BayestuneError(f"{owner}: option group {path}{g} must be a mapping, but got {existing!r}")
        target[g] = existing = dict(existing)
        target = existing
    if leaf in target and not replace_given:
        raise BayestuneError(
            f"{owner}: option {path}{dotted} is given twice" + (f" (also by its old name {old!r})" if old else "")
        )
    target[leaf] = value
