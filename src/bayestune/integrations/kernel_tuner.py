"""bayestune as a Kernel Tuner search strategy.

Use it where Kernel Tuner takes a strategy::

    from bayestune.integrations.kernel_tuner import BayestuneStrategy
    results, env = kernel_tuner.tune_kernel(name, source, size, args, tune_params, cache="mm.json",
                                            strategy=BayestuneStrategy(seed=0),
                                            strategy_options={"max_fevals": 40})

Kernel Tuner (1.5) calls ``strategy.tune(searchspace, runner, tuning_options)`` for any object
with a ``tune`` method (``interface.py``), and ``tune_kernel_T1`` instantiates a class named by
``strategy`` from ``strategy_options["custom_search_method_path"]`` and calls it as
``obj(cost_func, searchspace)`` (``strategies/wrapper.py``); :class:`BayestuneStrategy` answers
both. What it does with them:

* **Space.** ``tune_params`` become ordinals (log scale by replay's rule,
  :func:`bayestune.evaluators.replay.log_scale_suits`), one-valued parameters constants.
  Kernel Tuner has already resolved the restrictions (strings and callables) and the device
  limits (max threads per block) into its ``Searchspace``; that exact valid set becomes one
  known constraint (a membership table), so nothing is re-interpreted and nothing is lost.
* **Evaluations** go one configuration at a time through Kernel Tuner's own runner (so its
  cache, result records, verification and simulation mode all apply). Anything that goes wrong
  with one configuration -- an exception from the compiler, a runtime error, a failed answer
  check, the per-configuration wall-clock limit -- is caught and told to the optimizer as a
  hidden-constraint failure (kinds ``compile``, ``runtime``, ``verification``, ``timeout``) and
  written to the cache as Kernel Tuner's failure marker; the run goes on.
* **Budget**: Kernel Tuner's ``max_fevals`` / ``time_limit`` (its ``TuningBudget``) end the run.
* **Objectives** are Kernel Tuner's: ``objective`` / ``objective_higher_is_better``, or several
  through ``objectives={"time": False, "GFLOP/s": True}`` (then bayestune's multi-objective
  search, ParEGO by default). An objective may be a user-defined metric (``metrics=``), which
  Kernel Tuner computes into every result record.
* **Device**: the worker process uses the ``device``/``platform``/``compiler`` that
  ``tune_kernel`` was given (read from its own arguments, see :func:`tune_kernel_device_options`).
* **Warm start / resume.** Configurations already in Kernel Tuner's cache file are told to the
  optimizer before the first suggestion, free (not in simulation mode, where the cache is the
  simulated device). A SQLite journal is kept beside the cache (``<cache>.bayestune.sqlite``);
  when it exists the run resumes from it: a killed run continues where it stopped.

Per-configuration limit (compile + answer check + benchmark): with Kernel Tuner's
SequentialRunner each configuration runs in a spawned worker process holding its own runner,
killed at the limit (``_kernel_tuner_worker``); a hung compile or kernel costs the limit and a
worker restart, nothing else. When the kernel's options cannot be pickled (a lambda ``verify``)
or another runner is in use, configurations run in-process under ``SIGALRM``, which cannot stop a
single blocking C call; a configuration over the limit is then recorded as a timeout when it ends.
"""

from __future__ import annotations

import contextlib
import logging
import math
import numbers
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from time import perf_counter
from typing import Any

from bayestune.exceptions import BayestuneError
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.scenario.records import DesignSpec
from bayestune.space.inference import log_scale_suits
from bayestune.space.membership import IndexMembershipConstraint, MembershipConstraint
from bayestune.space.parameters import Categorical, Ordinal, Parameter
from bayestune.space.space import Space
from bayestune.storage.base import TrialJournal
from bayestune.storage.journal import Journal
from bayestune.trial import FailureKind, Result

logger = logging.getLogger(__name__)

#: Suffix of the journal kept beside a Kernel Tuner cache file.
JOURNAL_SUFFIX = ".bayestune.sqlite"
#: Default per-configuration wall-clock limit (compile + verify + benchmark), seconds.
DEFAULT_CONFIG_TIMEOUT = 120.0
#: Failure kinds this integration reports besides the core vocabulary.
COMPILE, VERIFICATION = FailureKind.COMPILE, FailureKind.VERIFICATION
#: Kernel Tuner's failure markers -> failure kinds, and back.
_MARKER_KIND = {"InvalidConfig": FailureKind.INVALID, "CompilationFailedConfig": COMPILE,
                "RuntimeFailedConfig": FailureKind.RUNTIME, "ErrorConfig": FailureKind.RUNTIME}
_COMPILE_HINTS = ("clbuildprogram", "build_program_failure", "compil", "nvrtc", "nvcc", "ptxas")


class ConfigTimeout(BaseException):
    """Raised inside an evaluation at the per-configuration limit. A BaseException, so Kernel
    Tuner's ``except Exception`` handlers do not swallow it."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`ConfigTimeout` after ``seconds`` (no-op without SIGALRM or off the main thread)."""
    usable = (seconds is not None and seconds > 0 and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
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


# ---- the search space --------------------------------------------------------------------------
class KernelTunerSpace:
    """bayestune's view of a Kernel Tuner ``Searchspace`` and the conversions between the two."""

    def __init__(self, tune_params: Mapping[str, Sequence[Any]], valid: Sequence[Sequence[Any]],
                 defaults: Mapping[str, Any] | None = None) -> None:
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
        parameters = [_parameter(k, self.tune_params[k], defaults.get(k)) for k in self.names]
        index = [self.keys.index(k) for k in self.names]
        rows = sorted({tuple(element[i] for i in index) for element in valid}, key=str)
        if not rows:
            raise BayestuneError("Kernel Tuner's search space has no valid configuration after restrictions")
        full = math.prod(len(self.tune_params[k]) for k in self.names)
        if len(rows) == full:
            constraints: list[Any] = []
        elif all(isinstance(p, Ordinal) for p in parameters):
            constraints = [MembershipConstraint(self.names, [[float(v) for v in r] for r in rows],
                                                label="kernel_tuner_restrictions")]
        else:
            index_rows = [[p.to_raw(p.validate(v))[0] for p, v in zip(parameters, r)] for r in rows]
            constraints = [IndexMembershipConstraint(parameters, index_rows, "kernel_tuner_restrictions")]
        self.space = Space(parameters, constraints)
        self.n_valid = len(rows)
        # a config value (maybe 32.0 for 32) -> the exact object Kernel Tuner listed
        self._canonical = {k: {_lookup_key(v): v for v in self.tune_params[k]} for k in self.keys}

    @classmethod
    def from_searchspace(cls, searchspace: Any, defaults: Mapping[str, Any] | None = None) -> "KernelTunerSpace":
        return cls(searchspace.tune_params, searchspace.list, defaults)

    def element(self, config: Mapping[str, Any]) -> tuple:
        """Our configuration -> Kernel Tuner's parameter tuple (``tune_params`` order)."""
        return tuple(self.constants[k] if k in self.constants else self._canonical[k][_lookup_key(config[k])]
                     for k in self.keys)

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


# ---- outcomes ----------------------------------------------------------------------------------
def failure_kind_of(record: Mapping[str, Any], objective: str) -> str | None:
    """The failure kind of a Kernel Tuner result/cache record, None if it holds a measurement."""
    if record.get("bayestune_failure"):  # our own kinds (verification, timeout) outlive the cache marker
        return str(record["bayestune_failure"])
    value = record.get(objective)
    marker = record.get("__error__", value if isinstance(value, str) else None)
    if marker is not None:
        name = marker if type(marker) is str else type(marker).__name__
        return _MARKER_KIND.get(name, FailureKind.RUNTIME)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return FailureKind.PARSE
    if not math.isfinite(number) or number >= 1e20:  # very old caches mark failures with 1e20
        return FailureKind.RUNTIME
    return None


def result_of(record: Mapping[str, Any], objective: str | Sequence[str]) -> Result:
    """A Kernel Tuner record as the optimizer's Result (``objective``: one name or several)."""
    names = [objective] if isinstance(objective, str) else list(objective)
    for name in names:
        kind = failure_kind_of(record, name)
        if kind is None:
            continue
        if kind == FailureKind.PARSE and name not in record:
            return Result.failure(f"Kernel Tuner's result has no objective {name!r} (it has {sorted(record)}); "
                                  "a derived objective must be defined in tune_kernel's metrics=", kind)
        return Result.failure(str(record.get("bayestune_error") or record.get("__error__") or record.get(name)), kind)
    values = {name: float(record[name]) for name in names}
    for extra in ("compile_time", "verification_time", "benchmark_time"):
        if isinstance(record.get(extra), (int, float)):
            values[extra] = float(record[extra])
    return Result(values=values)


def classify_exception(exc: BaseException) -> str:
    """Which hidden constraint an exception out of Kernel Tuner's runner reveals."""
    if isinstance(exc, ConfigTimeout):
        return FailureKind.TIMEOUT
    text = f"{type(exc).__name__}: {exc}".lower()
    if "verification failed" in text:
        return VERIFICATION
    if any(h in text for h in _COMPILE_HINTS):
        return COMPILE
    return FailureKind.RUNTIME


def _error_marker(kind: str) -> Any:
    from kernel_tuner import util

    return util.CompilationFailedConfig() if kind == COMPILE else util.RuntimeFailedConfig()


# ---- the strategy ------------------------------------------------------------------------------
class BayestuneStrategy:
    """A Kernel Tuner strategy that runs bayestune's ask/tell loop (see the module docstring).

    ``strategy``/``strategy_options``/``seed``/``design`` are the :class:`~bayestune.optimizer.Optimizer`'s.
    ``journal``: ``"auto"`` keeps one beside Kernel Tuner's cache file (none without a cache or in
    simulation mode), a path keeps it there, None keeps the run in memory; an existing journal is
    resumed. ``config_timeout``: wall-clock seconds per configuration (None: no limit; not applied
    in simulation mode). ``defaults``: the configuration evaluated first (else each parameter's
    middle value, when it is valid). ``warm_start``: tell the optimizer the cache's records first.
    ``isolate``: run configurations in a worker process that is killed at ``config_timeout`` (None:
    whenever Kernel Tuner's runner is its SequentialRunner, a limit is set and the kernel's
    options can be pickled -- a lambda ``verify`` cannot; then in-process with SIGALRM);
    ``device``/``platform`` override the worker's, which are otherwise those ``tune_kernel`` was
    given. ``strategy=None`` picks ``bo`` for one objective and ``parego`` for several.
    """

    def __init__(self, *, seed: int | None = 0, strategy: str | None = None,
                 strategy_options: dict[str, Any] | None = None,
                 design: DesignSpec | None = None, journal: str | os.PathLike | None = "auto",
                 config_timeout: float | None = DEFAULT_CONFIG_TIMEOUT, defaults: Mapping[str, Any] | None = None,
                 warm_start: bool = True, isolate: bool | None = None, device: int | None = None,
                 platform: int | None = None) -> None:
        if config_timeout is not None and not config_timeout > 0:
            raise BayestuneError(f"config_timeout must be > 0 seconds or None, but got {config_timeout!r}")
        self.seed = seed
        self.strategy = strategy
        self.strategy_options = dict(strategy_options or {})
        self.design = design
        self.journal = journal
        self.config_timeout = config_timeout
        self.defaults = dict(defaults or {})
        self.warm_start = warm_start
        self.isolate = isolate
        self.device, self.platform = device, platform
        self.costfunc_kwargs = {"scaling": False, "snap": False}  # read by Kernel Tuner's OptAlgWrapper
        self.constraint_aware = False
        self.optimizer_: Optimizer | None = None
        self.space_: KernelTunerSpace | None = None

    # Kernel Tuner's two ways in ------------------------------------------------------------
    def tune(self, searchspace: Any, runner: Any, tuning_options: Any) -> list[dict[str, Any]]:
        """``tune_kernel(strategy=BayestuneStrategy(...))``: Kernel Tuner's results list."""
        results: list[dict[str, Any]] = []
        self._run(searchspace, runner, tuning_options, results)
        return results

    def __call__(self, cost_func: Any, searchspace: Any) -> tuple[tuple, float] | None:
        """``tune_kernel_T1`` (custom search method): evaluations land in ``cost_func.results``."""
        self._run(searchspace, cost_func.runner, cost_func.tuning_options, cost_func.results)
        best = self.optimizer_.best if self.optimizer_ is not None else None
        if best is None or self.space_ is None:
            return None
        return self.space_.element(best.config), float(best.values[self.optimizer_.objectives[0].name])

    # the loop ------------------------------------------------------------------------------
    def _run(self, searchspace: Any, runner: Any, tuning_options: Any, results: list[dict[str, Any]]) -> None:
        directions = kernel_tuner_objectives(tuning_options)
        objective = [name for name, _ in directions]
        simulation = bool(getattr(runner, "simulation_mode", False))
        space = KernelTunerSpace.from_searchspace(searchspace, self.defaults)
        journal, resume = self._open_journal(tuning_options, simulation)
        opt = Optimizer(space.space, objectives=[Objective(n, "maximize" if higher else "minimize")
                                                 for n, higher in directions],
                        strategy=self.strategy, strategy_options=self.strategy_options or None,
                        design=self.design, seed=self.seed, journal=journal, resume=resume)
        self.optimizer_, self.space_ = opt, space
        logger.info("bayestune in Kernel Tuner: %d valid configurations of %d parameters, %d trials resumed",
                    space.n_valid, len(space.names), opt.n_evaluated)
        if self.warm_start and not simulation:
            self._warm_start(opt, space, tuning_options, objective)
        budget = tuning_options.budget
        timeout = None if simulation else self.config_timeout
        worker = None if simulation else self._isolated_runner(runner, tuning_options)
        try:
            while not budget.is_done():
                started = perf_counter()
                asked = opt.ask(1)
                if hasattr(runner, "add_strategy_time"):
                    runner.add_strategy_time(perf_counter() - started)
                if not asked:
                    logger.info("every valid configuration has been evaluated")
                    break
                record = self._evaluate(worker or runner, tuning_options, space, asked[0], objective, timeout)
                if record is None:  # the runner found the budget spent
                    break
                results.append(record)
                opt.tell(asked[0], result_of(record, objective))
        finally:
            if worker is not None:
                worker.close()
            if isinstance(journal, Journal):
                journal.close()

    def _isolated_runner(self, runner: Any, tuning_options: Any) -> Any:
        from bayestune.integrations._kernel_tuner_worker import IsolatedRunner

        if self.isolate is False or self.config_timeout is None:
            return None
        if self.isolate is None and type(runner).__name__ != "SequentialRunner":
            return None
        device_options = tune_kernel_device_options(runner)
        device_options.update({k: v for k, v in (("device", self.device), ("platform", self.platform)) if v is not None},
                              quiet=True)
        try:
            return IsolatedRunner(runner, tuning_options, device_options)
        except Exception as exc:  # noqa: BLE001 - unpicklable options: fall back, or refuse if asked to isolate
            if self.isolate:
                raise BayestuneError(f"cannot run configurations in a worker process: {exc}") from exc
            logger.warning("configurations run in-process (the time limit cannot stop a blocking call): %s", exc)
            return None

    def _open_journal(self, tuning_options: Any, simulation: bool) -> tuple[TrialJournal | None, bool]:
        if self.journal is None:
            return None, False
        if self.journal == "auto":
            cachefile = _option(tuning_options, "cachefile")
            if simulation or not cachefile:
                return None, False
            path = Path(str(cachefile) + JOURNAL_SUFFIX)
        else:
            path = Path(self.journal)
        journal = Journal(path)
        resume = bool(journal.trials())
        if resume:
            logger.info("resuming the run journaled in %s", path)
        return journal, resume

    def _warm_start(self, opt: Optimizer, space: KernelTunerSpace, tuning_options: Any,
                    objective: Sequence[str]) -> None:
        """Tell the optimizer what Kernel Tuner's cache already knows (free: nothing is run)."""
        known = {space.cache_key(space.element(t.config)) for t in opt.trials}
        told = 0
        for key, record in dict(_option(tuning_options, "cache") or {}).items():
            config = space.config(record)
            if config is None or key in known or space.cache_key(space.element(config)) in known:
                continue
            opt.tell(config, result_of(record, objective))
            known.add(key)
            told += 1
        if told:
            logger.info("warm start: %d configuration(s) from Kernel Tuner's cache", told)

    def _evaluate(self, runner: Any, tuning_options: Any, space: KernelTunerSpace, config: Mapping[str, Any],
                  objective: Sequence[str], timeout: float | None) -> dict[str, Any] | None:
        """Run one configuration; any failure becomes a failure record (and a cache entry)."""
        from bayestune.integrations._kernel_tuner_worker import IsolatedRunner

        element = space.element(config)
        if isinstance(runner, IsolatedRunner):
            runner.ensure_started()  # a device that cannot be set up ends the run, as in Kernel Tuner
        started = perf_counter()
        try:
            if isinstance(runner, IsolatedRunner):
                record = self._run_isolated(runner, tuning_options, space, element, timeout)
            else:
                with time_limit(timeout):
                    out = runner.run([element], tuning_options)
                record = out[0] if out else None
            if record is None:
                return None
            elapsed = perf_counter() - started
            if timeout is not None and elapsed > timeout and failure_kind_of(record, objective[0]) is None:
                raise ConfigTimeout(f"took {elapsed:.1f} s, over the per-configuration limit of {timeout:g} s")
            return record
        except ConfigTimeout as exc:
            error: BaseException = exc
        except Exception as exc:  # noqa: BLE001 - one broken configuration must not end the run
            error = exc
        kind = classify_exception(error)
        message = f"{type(error).__name__}: {error}".strip()
        logger.warning("configuration %s failed (%s): %s", dict(zip(space.keys, element)), kind,
                       message.splitlines()[0][:300] if message else kind)
        marker = _error_marker(kind)
        record = dict(zip(space.keys, element))
        record.update({name: marker for name in ([objective] if isinstance(objective, str) else objective)})
        record.update({"__error__": marker, "bayestune_failure": kind,
                       "bayestune_error": message[:2000], "compile_time": 0, "verification_time": 0,
                       "benchmark_time": 1000 * (perf_counter() - started)})
        from kernel_tuner import util

        util.store_cache(space.cache_key(element), record, _option(tuning_options, "cachefile"),
                         _option(tuning_options, "cache"))
        return record

    @staticmethod
    def _run_isolated(worker: Any, tuning_options: Any, space: KernelTunerSpace, element: tuple,
                      timeout: float | None) -> dict[str, Any]:
        """What SequentialRunner.run does around a configuration (budget, metrics, cache), the
        compile and benchmark themselves in the worker."""
        from kernel_tuner import util

        tuning_options.budget.add_evaluations(1)
        record = worker.run(element, timeout)
        metrics = _option(tuning_options, "metrics")
        if metrics and "__error__" not in record:
            record = util.process_metrics(record, metrics)
        util.store_cache(space.cache_key(element), record, _option(tuning_options, "cachefile"),
                         _option(tuning_options, "cache"))
        return record


def _option(tuning_options: Any, name: str) -> Any:
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
        raise BayestuneError(f"Kernel Tuner's objectives {names} and objective_higher_is_better {higher} must "
                             "name distinct objectives, one direction each")
    return [(str(n), bool(h)) for n, h in zip(names, higher)]


def tune_kernel_device_options(runner: Any) -> dict[str, Any]:
    """``device``, ``platform``, ``compiler`` and ``compiler_options`` as given to ``tune_kernel``.

    Kernel Tuner 1.5 hands a strategy its runner, which does not keep them (a SequentialRunner
    passes them on to its device interface). They are read from ``tune_kernel``'s own
    ``device_options`` in the calling frame; when the strategy is not called from there, the
    OpenCL device is found from the runner's context, and the rest from its backend.
    """
    keys = ("device", "platform", "compiler", "compiler_options")
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "tune_kernel" and frame.f_globals.get("__name__") == "kernel_tuner.interface":
            options = frame.f_locals.get("device_options")
            if options is not None:
                return {k: options[k] for k in keys if k in options}
        frame = frame.f_back
    backend = getattr(getattr(runner, "dev", None), "dev", None)
    found = {"device": 0, "platform": 0, "compiler": getattr(backend, "compiler", None),
             "compiler_options": getattr(backend, "compiler_options", None)}
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
