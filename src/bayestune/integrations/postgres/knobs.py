"""The server settings searched over: :class:`Knob` (a parameter and the unit postgresql.conf
writes it in), the default knob sets, and the checks on knob and fixed-setting names."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bayestune.exceptions import EvaluationError
from bayestune.space import Categorical, Integer, Real, Space
from bayestune.space.parameter import Parameter

#: Units PostgreSQL accepts after a number in postgresql.conf.
UNITS = ("", "B", "kB", "MB", "GB", "TB", "us", "ms", "s", "min", "h", "d")
#: What PostgreSQL accepts as a setting name.
SETTING_NAME = re.compile(r"^[a-z_][a-z0-9_.]*$")


@dataclass(frozen=True)
class Knob:
    """One server setting searched over: a parameter named like the setting, and the unit its
    value is written in (``Knob(Integer("shared_buffers", 16, 4096, log=True), "MB")``)."""

    parameter: Parameter
    unit: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.parameter, Parameter):
            raise EvaluationError(f"Knob needs a bayestune parameter (Integer, Real, ...), but got {self.parameter!r}")
        if not SETTING_NAME.match(self.parameter.name):
            raise EvaluationError(
                f"knob {self.parameter.name!r} is not a PostgreSQL setting name "
                "(lower-case letters, digits, '_' and '.')"
            )
        if self.unit not in UNITS:
            raise EvaluationError(
                f"knob {self.parameter.name!r}: unit must be one of {list(UNITS)}, but got {self.unit!r}"
            )

    @property
    def name(self) -> str:
        return self.parameter.name

    def setting(self, value: Any) -> str:
        """The value as postgresql.conf spells it (``'256MB'``, ``'1.5'``, ``'on'``)."""
        if isinstance(value, bool):
            return "on" if value else "off"
        if isinstance(self.parameter, Integer):
            return f"{int(value)}{self.unit}"
        if isinstance(value, float):
            return f"{value:.6g}{self.unit}"
        return f"{value}{self.unit}"


#: Knobs that change speed but not what survives a crash, with ranges for a small machine
#: (a few GB of memory, two cores) and the server's defaults as defaults.
DEFAULT_KNOBS: tuple[Knob, ...] = (
    Knob(Integer("shared_buffers", 16, 4096, log=True, default=128), "MB"),
    Knob(Integer("work_mem", 64, 262144, log=True, default=4096), "kB"),
    Knob(Integer("effective_io_concurrency", 1, 256, log=True, default=1)),
    Knob(Real("random_page_cost", 1.0, 8.0, default=4.0)),
    Knob(Integer("wal_buffers", 32, 65536, log=True, default=4096), "kB"),
    Knob(Integer("checkpoint_timeout", 30, 1800, log=True, default=300), "s"),
    Knob(Integer("max_wal_size", 32, 8192, log=True, default=1024), "MB"),
    Knob(Real("checkpoint_completion_target", 0.1, 1.0, default=0.9)),
    Knob(Integer("max_parallel_workers_per_gather", 0, 4, default=2)),
    Knob(Integer("bgwriter_delay", 10, 10000, log=True, default=200), "ms"),
    Knob(Integer("bgwriter_lru_maxpages", 0, 1000, default=100)),
    Knob(Integer("wal_writer_delay", 1, 10000, log=True, default=200), "ms"),
    Knob(Integer("commit_delay", 0, 10000, default=0)),  # microseconds
    Knob(Integer("commit_siblings", 1, 100, log=True, default=5)),
    Knob(Categorical("wal_compression", ["off", "pglz", "lz4", "zstd"], default="off")),
)

#: Knobs that buy speed with durability (a crash can lose committed transactions or tear
#: pages): add them on purpose, e.g. ``DEFAULT_KNOBS + DURABILITY_KNOBS``.
DURABILITY_KNOBS: tuple[Knob, ...] = (
    Knob(Categorical("synchronous_commit", ["on", "off"], default="on")),
    Knob(Categorical("full_page_writes", ["on", "off"], default="on")),
)


def check_knobs(knobs: Sequence[Knob], fixed: Mapping[str, str]) -> tuple[list[Knob], Space]:
    """The knobs and their space (which checks names are unique and there is at least one)."""
    knobs = list(knobs)
    for knob in knobs:
        if not isinstance(knob, Knob):
            raise EvaluationError(f"knobs must be Knob records, but got {knob!r}")
    space = Space([k.parameter for k in knobs])
    both = sorted({k.name for k in knobs} & set(fixed))
    if both:
        raise EvaluationError(f"settings {both} are both searched (knobs) and fixed (settings=); keep one")
    return knobs, space


def fixed_setting(name: Any, value: Any) -> str:
    if not isinstance(name, str) or not SETTING_NAME.match(name):
        raise EvaluationError(f"settings: {name!r} is not a PostgreSQL setting name")
    if isinstance(value, bool):
        return "on" if value else "off"
    if not isinstance(value, (str, int, float)):
        raise EvaluationError(f"settings: {name} must be a string or a number, but got {value!r}")
    return str(value)
