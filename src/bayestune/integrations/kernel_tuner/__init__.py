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

* **Confirmation** (:mod:`.confirm`): after the budget, the best configurations and the default
  are re-measured through Kernel Tuner's runner in interleaved rounds (counted, logged,
  journaled); the winner by its re-measurements, its interval and its speedup over the default go
  into the result records (``bayestune_winner``, ``bayestune_confirmed``, ``bayestune_speedup``)
  and ``strategy.winner_`` / ``strategy.confirmation_``.

Per-configuration limit (compile + answer check + benchmark): with Kernel Tuner's
SequentialRunner each configuration runs in a spawned worker process holding its own runner,
killed at the limit (:mod:`.worker`); a hung compile or kernel costs the limit and a
worker restart, nothing else. When the kernel's options cannot be pickled (a lambda ``verify``)
or another runner is in use, configurations run in-process under ``SIGALRM``, which cannot stop a
single blocking C call; a configuration over the limit is then recorded as a timeout when it ends.

The folder: :mod:`.space` (the search space), :mod:`.strategy` (the loop), :mod:`.confirm` (the confirmation), :mod:`.outcomes`
(records -> results and failure kinds), :mod:`.options` (what ``tune_kernel`` was given),
:mod:`.timeouts` (the per-configuration limit) and :mod:`.worker` (the killable worker process).
Names are imported on first use, so importing this package imports none of them.
"""

from bayestune.integrations._lazy import lazy_exports

_WHERE = {
    "BayestuneStrategy": "strategy",
    "DEFAULT_CONFIG_TIMEOUT": "strategy",
    "JOURNAL_SUFFIX": "strategy",
    "KernelTunerSpace": "space",
    "COMPILE": "outcomes",
    "VERIFICATION": "outcomes",
    "classify_exception": "outcomes",
    "failure_kind_of": "outcomes",
    "result_of": "outcomes",
    "kernel_tuner_objectives": "options",
    "tune_kernel_device_options": "options",
    "ConfigTimeout": "timeouts",
    "time_limit": "timeouts",
    "IsolatedRunner": "worker",
    "WorkerError": "worker",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
