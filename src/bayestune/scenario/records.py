"""What a tuning run is: the space, objectives, budget, black box and strategy.

These frozen records are the Python API equivalent of a scenario file; the format modules of
:mod:`bayestune.scenario` build them from JSON/YAML (ours, HyperMapper/BaCO, T1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bayestune.exceptions import ScenarioError
from bayestune.measurement_spec import MeasurementSpec
from bayestune.objectives import Objective, parse_output_constraints
from bayestune.space.space import Space

#: Strategy used when a scenario names none.
DEFAULT_STRATEGY = "bo"
#: ... and when it has several objectives (``bo`` optimises one).
DEFAULT_MULTI_OBJECTIVE_STRATEGY = "parego"
BLACKBOX_KINDS = ("python", "command", "external", "replay", "table")


@dataclass(frozen=True)
class DesignSpec:
    """The initial design: how many configurations to evaluate before modelling, and how."""

    method: str = "cot"  # uniform | cot | lhs | maximin | feasible_lhs | prior | hypermapper | grid
    size: int = 10
    include_default: bool = True

    def __post_init__(self) -> None:
        size = self.size
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_DESIGN_SIZE:
            raise ScenarioError(
                f"initial design size must be an integer in [0, {MAX_DESIGN_SIZE:,}] (configurations evaluated "
                f"before modelling), but got {size!r}"
            )


#: The largest initial design: more points than any tuning run evaluates (a design of 10**11
#: points would ask for terabytes before the first evaluation).
MAX_DESIGN_SIZE = 100_000


#: What a transfer from prior runs does: a warm-start design kept while the evidence supports it
#: and a transfer model (``auto``), a transfer model, a warm-start design, or both.
TRANSFER_MODES = ("auto", "model", "design", "both")


@dataclass(frozen=True)
class TransferSpec:
    """Prior runs of the same space (journals, CSV files, Kernel Tuner caches, or loaded
    ``bayestune.transfer.PriorRun`` records) and how to use them (see :mod:`bayestune.transfer`).

    ``mode`` defaults to ``auto``: the sources' best configurations alternate with the cold
    design's points only while they measure better than those (:mod:`bayestune.transfer.gate`),
    then the transfer model, down-weighted to a cold start when the sources rank this run's
    results badly. ``model`` is the transfer model alone; ``design``/``both`` open the design
    with the sources' best whatever they measure, a bet nothing can undo before the first
    observations (``benchmarks/results/transfer/transfer.md``: an unrelated source's design was worse in
    10 of 10 seeds). ``top``: how many of the sources' best configurations open the initial
    design (None: half of the design, at least one; in ``auto`` at most that many); they
    replace random design points, not add to them.
    """

    runs: tuple[Any, ...]
    mode: str = "auto"
    top: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.runs, (str, bytes)) or not isinstance(self.runs, (tuple, list)):
            raise ScenarioError(f"transfer runs must be a list of files, but got {self.runs!r}")
        object.__setattr__(self, "runs", tuple(self.runs))
        if not self.runs:
            raise ScenarioError("transfer needs at least one prior run")
        if self.mode not in TRANSFER_MODES:
            raise ScenarioError(f"transfer mode must be one of {list(TRANSFER_MODES)}, but got {self.mode!r}")
        if self.top is not None and (isinstance(self.top, bool) or not isinstance(self.top, int) or self.top < 0):
            raise ScenarioError(f"transfer top must be an integer >= 0, but got {self.top!r}")

    def resolved(self, base_dir: Path) -> TransferSpec:
        """The spec with relative run paths taken from ``base_dir`` (a scenario file's directory)."""
        runs = tuple(str(base_dir / Path(r).expanduser()) if isinstance(r, str) else r for r in self.runs)
        return TransferSpec(runs, self.mode, self.top)

    def design_top(self, design_size: int) -> int:
        """Source configurations in a design of ``design_size`` (0 in ``model`` mode)."""
        if self.mode in ("model", "auto"):  # auto: the gate draws them one by one (gate_top)
            return 0
        return self.gate_top(design_size)

    def gate_top(self, design_size: int) -> int:
        """Source configurations a design of ``design_size`` may hold."""
        return self.top if self.top is not None else max(1, design_size // 2)


@dataclass(frozen=True)
class BlackBoxSpec:
    """How to evaluate a configuration.

    ``python``: ``target`` is ``"module:function"`` (or ``"path/to/file.py:function"``), called with
    the configuration dict. ``command``: ``target`` is a shell command template with ``{param}``
    placeholders whose stdout carries the objective values. ``external``: a long-running tool
    speaking the line protocol. ``replay``: ``target`` is a recorded cache file. ``table``:
    ``target`` is a CSV file of recorded outputs, one row per configuration, looked up by the
    parameter values (HyperMapper's ``exhaustive_search_file``).

    ``build``: an optional first stage for ``command`` and ``python`` black boxes: a command
    template (``build_kind="command"``, ``{artefact}`` the path it writes) or a
    ``"module:function"`` (``build_kind="python"``, called as ``build(config, artefact)``), with
    its own ``build_timeout``; the run then measures the artefact (``evaluators.staged``).
    """

    kind: str
    target: str
    timeout: float | None = None
    workdir: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    build: str | None = None
    build_kind: str = "command"
    build_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in BLACKBOX_KINDS:
            raise ScenarioError(f"black box kind must be one of {list(BLACKBOX_KINDS)}, but got {self.kind!r}")
        if not isinstance(self.target, str) or not self.target.strip():
            raise ScenarioError(f"black box {self.kind!r}: target must be a non-empty string, but got {self.target!r}")
        if self.timeout is not None and not (isinstance(self.timeout, (int, float)) and self.timeout > 0):
            raise ScenarioError(f"black box timeout must be a positive number of seconds, but got {self.timeout!r}")
        if self.build is not None:
            if self.kind not in ("command", "python"):
                raise ScenarioError(
                    f"a build step needs a 'command' or 'python' run step, but the black box is {self.kind!r}"
                )
            if not isinstance(self.build, str) or not self.build.strip():
                raise ScenarioError(f"black box build must be a non-empty string, but got {self.build!r}")
            if self.build_kind not in ("command", "python"):
                raise ScenarioError(f"black box build kind must be 'command' or 'python', but got {self.build_kind!r}")
            if self.build_timeout is not None and not (
                isinstance(self.build_timeout, (int, float))
                and not isinstance(self.build_timeout, bool)
                and self.build_timeout > 0
            ):
                raise ScenarioError(
                    f"black box build timeout must be a positive number of seconds, but got {self.build_timeout!r}"
                )


@dataclass(frozen=True)
class Scenario:
    """One tuning problem, ready to run."""

    name: str
    space: Space
    objectives: tuple[Objective, ...] = (Objective("value"),)
    budget: int | None = 50  # None: no limit on evaluations, the time_limit ends the run
    design: DesignSpec = field(default_factory=DesignSpec)
    strategy: str = DEFAULT_STRATEGY
    strategy_options: dict[str, Any] = field(default_factory=dict)
    blackbox: BlackBoxSpec | None = None
    seed: int | None = None
    journal: str | None = None
    feasible_output: str | None = None  # name of a black-box output that flags feasibility
    output_constraints: tuple[str, ...] = ()  # e.g. "utilisation <= 100": breaking one makes a result infeasible
    time_limit: float | None = None  # wall-clock seconds after which no new evaluation starts
    batch: int | None = None  # evaluations asked for together, in lock-step (None: one as each finishes)
    measurement: MeasurementSpec | None = None  # repeats, re-measurement of the best, correctness check
    transfer: TransferSpec | None = None  # prior runs of the same space (bayestune.transfer)
    source: str = "<python>"  # file the scenario came from (for error messages and relative paths)
    #: What became of each key of a HyperMapper/BaCO file (``KeyHandling`` records: mapped,
    #: ignored, approximated; refused keys are errors); empty for the other formats.
    key_handling: tuple[Any, ...] = field(default=(), compare=False)
    #: A HyperMapper/BaCO file's own sample CSV (``storage.csv_io.PeerSamples``: where the peer
    #: writes it, its header, the file ``resume_optimization`` continues from); None otherwise.
    peer_samples: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.objectives:
            raise ScenarioError("a scenario needs at least one objective")
        names = [o.name for o in self.objectives]
        if len(set(names)) != len(names):
            raise ScenarioError(f"objective names must be unique, but got {names}")
        clash = sorted(set(names) & set(self.space.names))
        if clash:
            raise ScenarioError(f"objective names {clash} clash with parameter names")
        if self.budget is None:
            if self.time_limit is None:
                raise ScenarioError(
                    "a run needs a budget of evaluations, a time_limit in seconds, or both; "
                    "budget is null and there is no time_limit"
                )
        elif not isinstance(self.budget, int) or isinstance(self.budget, bool) or self.budget < 1:
            raise ScenarioError(f"budget must be a positive integer, but got {self.budget!r}")
        if self.measurement is not None and not isinstance(self.measurement, MeasurementSpec):
            raise ScenarioError(f"measurement must be a MeasurementSpec, but got {self.measurement!r}")
        parse_output_constraints(self.output_constraints)
        if self.time_limit is not None and (
            isinstance(self.time_limit, bool)
            or not isinstance(self.time_limit, (int, float))
            or not self.time_limit > 0
        ):
            raise ScenarioError(f"time_limit must be a positive number of seconds, but got {self.time_limit!r}")
        if self.batch is not None and (
            isinstance(self.batch, bool) or not isinstance(self.batch, int) or self.batch < 1
        ):
            raise ScenarioError(f"batch must be a positive integer, but got {self.batch!r}")

    @property
    def objective_names(self) -> list[str]:
        return [o.name for o in self.objectives]

    @property
    def base_dir(self) -> Path:
        """Directory the scenario's relative paths (journal, black-box files, workdir, replay
        data) are resolved against: its file's, else the current one."""
        if self.source and not self.source.startswith("<"):
            return Path(self.source).resolve().parent
        return Path.cwd()
