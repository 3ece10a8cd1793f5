"""The Kernel Tuner search strategy that runs bayestune's ask/tell loop (the package docstring says
what it does with Kernel Tuner's space, runner, budget, objectives, cache and device)."""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from time import perf_counter
from typing import Any

from bayestune.exceptions import BayestuneError
from bayestune.integrations.kernel_tuner import confirm as confirmation
from bayestune.integrations.kernel_tuner.options import (
    kernel_tuner_objectives,
    tune_kernel_device_options,
    tuning_option,
)
from bayestune.integrations.kernel_tuner.outcomes import classify_exception, error_marker, failure_kind_of, result_of
from bayestune.integrations.kernel_tuner.space import KernelTunerSpace
from bayestune.integrations.kernel_tuner.timeouts import ConfigTimeout, time_limit
from bayestune.integrations.kernel_tuner.worker import IsolatedRunner, WorkerStartError
from bayestune.measurement.remeasure import Remeasured
from bayestune.measurement_spec import DEFAULT_CONFIRM_ROUNDS, DEFAULT_CONFIRM_TOP
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.scenario.records import DesignSpec, TransferSpec
from bayestune.storage.base import TrialJournal
from bayestune.storage.journal import Journal

logger = logging.getLogger(__name__)

#: Suffix of the journal kept beside a Kernel Tuner cache file.
JOURNAL_SUFFIX = ".bayestune.sqlite"
#: Default per-configuration wall-clock limit (compile + verify + benchmark), seconds.
DEFAULT_CONFIG_TIMEOUT = 120.0


class BayestuneStrategy:
    """A Kernel Tuner strategy that runs bayestune's ask/tell loop (see the package docstring).

    ``strategy``/``strategy_options``/``seed``/``design`` are the :class:`~bayestune.optimizer.Optimizer`'s.
    ``journal``: ``"auto"`` keeps one beside Kernel Tuner's cache file (none without a cache or in
    simulation mode), a path keeps it there, None keeps the run in memory; an existing journal is
    resumed. ``config_timeout``: wall-clock seconds per configuration (None: no limit; not applied
    in simulation mode). ``defaults``: the configuration evaluated first (what it leaves out
    comes from the valid configuration nearest each parameter's middle value). ``warm_start``: tell the optimizer the cache's records first.
    ``isolate``: run configurations in a worker process that is killed at ``config_timeout`` (None:
    whenever Kernel Tuner's runner is its SequentialRunner, a limit is set and the kernel's
    options can be pickled -- a lambda ``verify`` cannot; then in-process with SIGALRM);
    ``device``/``platform`` override the worker's, which are otherwise those ``tune_kernel`` was
    given. ``strategy=None`` picks ``bo`` for one objective and ``parego`` for several.
    ``prior_caches``: Kernel Tuner caches of the same kernel on other devices (files, folders or
    glob patterns; caches of other kernels in a folder are skipped, named) to learn from, used as
    ``transfer_mode`` says (:class:`bayestune.scenario.TransferSpec`; default its own).
    ``confirm_top``/``confirm_rounds``: after the budget, the best ``confirm_top`` and the default
    are re-measured in ``confirm_rounds`` interleaved rounds through Kernel Tuner's runner
    (:mod:`.confirm`; one objective, not in simulation mode; ``confirm_top=0``: none); the
    outcome is ``confirmation_`` and the confirmed winner ``winner_``.
    """

    def __init__(
        self,
        *,
        seed: int | None = 0,
        strategy: str | None = None,
        strategy_options: dict[str, Any] | None = None,
        design: DesignSpec | None = None,
        journal: str | os.PathLike | None = "auto",
        config_timeout: float | None = DEFAULT_CONFIG_TIMEOUT,
        defaults: Mapping[str, Any] | None = None,
        warm_start: bool = True,
        isolate: bool | None = None,
        device: int | None = None,
        platform: int | None = None,
        prior_caches: Sequence[str | os.PathLike] | None = None,
        transfer_mode: str | None = None,
        confirm_top: int = DEFAULT_CONFIRM_TOP,
        confirm_rounds: int = DEFAULT_CONFIRM_ROUNDS,
    ) -> None:
        if config_timeout is not None and not config_timeout > 0:
            raise BayestuneError(f"config_timeout must be > 0 seconds or None, but got {config_timeout!r}")
        for name, value, least in (("confirm_top", confirm_top, 0), ("confirm_rounds", confirm_rounds, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise BayestuneError(f"{name} must be an integer >= {least}, but got {value!r}")
        self.confirm_top, self.confirm_rounds = confirm_top, confirm_rounds
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
        runs = tuple(str(p) for p in prior_caches or ())
        self.transfer = (
            None if not runs else TransferSpec(runs, mode=transfer_mode) if transfer_mode else TransferSpec(runs)
        )
        self.costfunc_kwargs = {"scaling": False, "snap": False}  # read by Kernel Tuner's OptAlgWrapper
        self.constraint_aware = False
        self.optimizer_: Optimizer | None = None
        self.space_: KernelTunerSpace | None = None
        self.confirmation_: Remeasured | None = None
        self.winner_: dict[str, Any] | None = None

    # Kernel Tuner's two ways in ------------------------------------------------------------
    def tune(self, searchspace: Any, runner: Any, tuning_options: Any) -> list[dict[str, Any]]:
        """``tune_kernel(strategy=BayestuneStrategy(...))``: Kernel Tuner's results list."""
        results: list[dict[str, Any]] = []
        self._run(searchspace, runner, tuning_options, results)
        return results

    def __call__(self, cost_func: Any, searchspace: Any) -> tuple[tuple, float] | None:
        """``tune_kernel_T1`` (custom search method): evaluations land in ``cost_func.results``."""
        self._run(searchspace, cost_func.runner, cost_func.tuning_options, cost_func.results)
        opt, space = self.optimizer_, self.space_
        best = opt.best if opt is not None else None
        if opt is None or best is None or space is None:
            return None
        winner = self.confirmation_.winner if self.confirmation_ is not None else None
        if winner is not None and self.winner_ is not None:
            return space.element(self.winner_), float(winner.value)
        return space.element(best.config), float(best.values[opt.objectives[0].name])

    # the loop ------------------------------------------------------------------------------
    def _run(self, searchspace: Any, runner: Any, tuning_options: Any, results: list[dict[str, Any]]) -> None:
        directions = kernel_tuner_objectives(tuning_options)
        objective = [name for name, _ in directions]
        simulation = bool(getattr(runner, "simulation_mode", False))
        space = KernelTunerSpace.from_searchspace(searchspace, self.defaults)
        journal, resume = self._open_journal(tuning_options, simulation)
        opt = Optimizer(
            space.space,
            objectives=[Objective(n, "maximize" if higher else "minimize") for n, higher in directions],
            strategy=self.strategy,
            strategy_options=self.strategy_options or None,
            design=self.design,
            seed=self.seed,
            journal=journal,
            resume=resume,
            transfer=self.transfer,
        )
        self.optimizer_, self.space_ = opt, space
        logger.info(
            "bayestune in Kernel Tuner: %d valid configurations of %d parameters, %d trials resumed",
            space.n_valid,
            len(space.names),
            opt.n_evaluated,
        )
        if opt.transfer_note():
            logger.info("%s", opt.transfer_note())
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
            if len(objective) == 1 and self.confirm_top and not simulation and opt.best is not None:
                self._confirm(opt, space, worker, runner, tuning_options, results, timeout)
            elif simulation and self.confirm_top:
                logger.info("no confirmation in simulation mode: the cache answers every re-measurement alike")
        finally:
            if worker is not None:
                worker.close()
            if isinstance(journal, Journal):
                journal.close()

    def _confirm(
        self,
        opt: Optimizer,
        space: KernelTunerSpace,
        worker: IsolatedRunner | None,
        runner: Any,
        tuning_options: Any,
        results: list[dict[str, Any]],
        timeout: float | None,
    ) -> None:
        """Re-measure the best and the default (:mod:`.confirm`); the winner into the results."""
        if worker is not None:
            metrics = tuning_option(tuning_options, "metrics")

            def run_element(element: tuple) -> dict[str, Any]:
                from kernel_tuner import util

                record = worker.run(element, timeout)
                return util.process_metrics(record, metrics) if metrics and "__error__" not in record else record

            outcome = confirmation.confirm(
                opt, space, run_element, top=self.confirm_top, rounds=self.confirm_rounds, timeout=None
            )
        else:
            outcome = confirmation.confirm(
                opt,
                space,
                confirmation.in_process(runner, tuning_options),
                top=self.confirm_top,
                rounds=self.confirm_rounds,
                timeout=timeout,
            )
        self.confirmation_ = outcome
        winner = outcome.winner
        if winner is not None:
            config = next(t.config for t in opt.trials if t.trial_id == winner.trial_id)
            self.winner_ = dict(zip(space.keys, space.element(config)))
            confirmation.annotate(results, outcome, space, opt)
            if opt.best is not None and opt.best.trial_id != winner.trial_id:
                logger.warning(
                    "Kernel Tuner's env['best_config'] is its lowest single measurement (%s); the confirmed "
                    "winner is %s (strategy.winner_, the result record with bayestune_winner)",
                    dict(zip(space.keys, space.element(opt.best.config))),
                    self.winner_,
                )

    def _isolated_runner(self, runner: Any, tuning_options: Any) -> Any:
        if self.isolate is False or self.config_timeout is None:
            return None
        if self.isolate is None and type(runner).__name__ != "SequentialRunner":
            return None
        device_options = tune_kernel_device_options(runner)
        device_options.update(
            {k: v for k, v in (("device", self.device), ("platform", self.platform)) if v is not None}, quiet=True
        )
        try:
            worker = IsolatedRunner(runner, tuning_options, device_options)
            worker.ensure_started()
            return worker
        except (WorkerStartError, pickle.PicklingError, TypeError, AttributeError) as exc:
            # unpicklable options, or a worker that cannot start (a script without a main guard):
            # fall back, or refuse if asked to isolate
            if self.isolate:
                raise BayestuneError(f"cannot run configurations in a worker process: {exc}") from exc
            logger.warning("configurations run in-process (the time limit cannot stop a blocking call): %s", exc)
            return None

    def _open_journal(self, tuning_options: Any, simulation: bool) -> tuple[TrialJournal | None, bool]:
        if self.journal is None:
            return None, False
        if self.journal == "auto":
            cachefile = tuning_option(tuning_options, "cachefile")
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

    def _warm_start(
        self, opt: Optimizer, space: KernelTunerSpace, tuning_options: Any, objective: Sequence[str]
    ) -> None:
        """Tell the optimizer what Kernel Tuner's cache already knows (free: nothing is run)."""
        known = {space.cache_key(space.element(t.config)) for t in opt.trials}
        told = 0
        for key, record in dict(tuning_option(tuning_options, "cache") or {}).items():
            config = space.config(record)
            if config is None or key in known or space.cache_key(space.element(config)) in known:
                continue
            opt.tell(config, result_of(record, objective))
            known.add(key)
            told += 1
        if told:
            logger.info("warm start: %d configuration(s) from Kernel Tuner's cache", told)

    def _evaluate(
        self,
        runner: Any,
        tuning_options: Any,
        space: KernelTunerSpace,
        config: Mapping[str, Any],
        objective: Sequence[str],
        timeout: float | None,
    ) -> dict[str, Any] | None:
        """Run one configuration; any failure becomes a failure record (and a cache entry)."""
        element = space.element(config)
        if isinstance(runner, IsolatedRunner):
            runner.ensure_started()  # a device that cannot be set up ends the run, as in Kernel Tuner
        started = perf_counter()
        record: dict[str, Any] | None
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
        logger.warning(
            "configuration %s failed (%s): %s",
            dict(zip(space.keys, element)),
            kind,
            message.splitlines()[0][:300] if message else kind,
        )
        marker = error_marker(kind)
        record = dict(zip(space.keys, element))
        record.update({name: marker for name in ([objective] if isinstance(objective, str) else objective)})
        record.update(
            {
                "__error__": marker,
                "bayestune_failure": kind,
                "bayestune_error": message[:2000],
                "compile_time": 0,
                "verification_time": 0,
                "benchmark_time": 1000 * (perf_counter() - started),
            }
        )
        from kernel_tuner import util

        util.store_cache(
            space.cache_key(element),
            record,
            tuning_option(tuning_options, "cachefile"),
            tuning_option(tuning_options, "cache"),
        )
        return record

    @staticmethod
    def _run_isolated(
        worker: Any, tuning_options: Any, space: KernelTunerSpace, element: tuple, timeout: float | None
    ) -> dict[str, Any]:
        """What SequentialRunner.run does around a configuration (budget, metrics, cache), the
        compile and benchmark themselves in the worker."""
        from kernel_tuner import util

        tuning_options.budget.add_evaluations(1)
        record = worker.run(element, timeout)
        metrics = tuning_option(tuning_options, "metrics")
        if metrics and "__error__" not in record:
            record = util.process_metrics(record, metrics)
        util.store_cache(
            space.cache_key(element),
            record,
            tuning_option(tuning_options, "cachefile"),
            tuning_option(tuning_options, "cache"),
        )
        return record
