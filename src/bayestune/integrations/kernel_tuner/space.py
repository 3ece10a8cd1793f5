"""bayestune's view of a Kernel Tuner ``Searchspace``: its parameters as ordinals and categoricals,
its valid set as one known constraint, and the conversions between the two."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from bayestune.exceptions import BayestuneError
from bayestune.space.inference import log_scale_suits
from bayestune.space.membership import IndexMembershipConstraint, MembershipConstraint
from bayestune.space.parameters import Categorical, Ordinal, Parameter
from bayestune.space.space import Space


class KernelTunerSpace:
    """bayestune's view of a Kernel Tuner ``Searchspace`` and the conversions between the two."""

    def __init__(
        self,
        tune_params: Mapping[str, Sequence[Any]],
        valid: Sequence[Sequence[Any]],
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        self.keys = list(tune_params)
        self.tune_params = {k: list(v) for k, v in tune_params.items()}
        self.constants = {k: v[0] for k, v in self.tune_params.items() if len(v) == 1}
        self.names = [k for k in self.keys if k not in self.constants]
        if not self.names:
            raise BayestuneError(f"every tunable parameter has a single value ({self.constants}); nothing to tune")
        defaults = dict(defaults or {})
        unknown = sorted(set(defaults) - set(self.keys))
        if unknown:
            raise BayestuneError(f"defaults name unknown parameter(s) {unknown}; tune_params has {self.keys}")
        index = [self.keys.index(k) for k in self.names]
        rows = sorted({tuple(element[i] for i in index) for element in valid}, key=str)
        if not rows:
            raise BayestuneError("Kernel Tuner's search space has no valid configuration after restrictions")
        # the default is a valid configuration: the user's values, the rest from the valid one nearest
        # the middle (else a made-up middle configuration would be refused by the restrictions)
        middle = dict(zip(self.names, _nearest_middle(self.names, self.tune_params, rows, defaults)))
        parameters = [_parameter(k, self.tune_params[k], defaults.get(k, middle[k])) for k in self.names]
        full = math.prod(len(self.tune_params[k]) for k in self.names)
        if len(rows) == full:
            constraints: list[Any] = []
        elif all(isinstance(p, Ordinal) for p in parameters):
            constraints = [
                MembershipConstraint(
                    self.names, [[float(v) for v in r] for r in rows], label="kernel_tuner_restrictions"
                )
            ]
        else:
            index_rows = [[p.to_raw(p.validate(v))[0] for p, v in zip(parameters, r)] for r in rows]
            constraints = [IndexMembershipConstraint(parameters, index_rows, "kernel_tuner_restrictions")]
        self.space = Space(parameters, constraints)
        self.n_valid = len(rows)
        # a config value (maybe 32.0 for 32) -> the exact object Kernel Tuner listed
        self._canonical = {k: {_lookup_key(v): v for v in self.tune_params[k]} for k in self.keys}

    @classmethod
    def from_searchspace(cls, searchspace: Any, defaults: Mapping[str, Any] | None = None) -> KernelTunerSpace:
        return cls(searchspace.tune_params, searchspace.list, defaults)

    def element(self, config: Mapping[str, Any]) -> tuple:
        """Our configuration -> Kernel Tuner's parameter tuple (``tune_params`` order)."""
        return tuple(
            self.constants[k] if k in self.constants else self._canonical[k][_lookup_key(config[k])] for k in self.keys
        )

    def cache_key(self, element: Sequence[Any]) -> str:
        """The key Kernel Tuner's cache uses for ``element``."""
        return ",".join(str(v) for v in element)

    def config(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """A Kernel Tuner result/cache record -> our configuration (None if it is not in this space)."""
        try:
            config = {k: self._canonical[k][_lookup_key(record[k])] for k in self.names}
        except (KeyError, TypeError):
            return None
        if any(_lookup_key(record.get(k, v)) != _lookup_key(v) for k, v in self.constants.items()):
            return None
        X = self.space.to_matrix([config])
        return config if bool(self.space.is_feasible(X)[0]) else None


def _nearest_middle(
    names: Sequence[str], tune_params: Mapping[str, Sequence[Any]], rows: Sequence[tuple], given: Mapping[str, Any]
) -> tuple:
    """The valid row that agrees with the ``given`` values (when one does) and is nearest each
    other parameter's middle value (by position in its ``tune_params`` list)."""
    position = {k: {_lookup_key(v): i for i, v in enumerate(tune_params[k])} for k in names}

    def distance(row: tuple) -> tuple[int, float]:
        mismatched = sum(k in given and _lookup_key(given[k]) != _lookup_key(v) for k, v in zip(names, row))
        spread = sum(
            abs(position[k][_lookup_key(v)] - (len(tune_params[k]) - 1) / 2) / len(tune_params[k])
            for k, v in zip(names, row)
        )
        return mismatched, spread

    return min(rows, key=distance)


def _lookup_key(value: Any) -> Any:
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)) or hasattr(value, "__float__") and not isinstance(value, str):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    return ("repr", repr(value))


def _parameter(name: str, values: Sequence[Any], default: Any) -> Parameter:
    """Ordinal for numeric values (log scale where it suits, by replay's rule), else categorical."""
    if all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):  # numpy ints too
        ordered = sorted({v.item() if hasattr(v, "item") else v for v in values})
        return Ordinal(name, ordered, log=log_scale_suits(ordered), default=default)
    return Categorical(name, list(values), default=default)
