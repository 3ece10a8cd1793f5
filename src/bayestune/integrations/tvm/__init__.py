"""bayestune as TVM MetaSchedule's search strategy (``pip install -e ".[tvm]"`` in the bayestune checkout).

MetaSchedule turns an operator into a few *design spaces*: traces of schedule primitives
whose ``Sample*`` instructions leave decisions open. :class:`BayestuneSearchStrategy`
(a ``PySearchStrategy``) makes those decisions the parameters of a bayestune space —

* ``SamplePerfectTile`` → :class:`~bayestune.space.PerfectTile` (always a valid tiling: TVM
  would silently rewrite one whose product is wrong),
* ``SampleCategorical`` → a categorical over its candidate values,
* ``SampleComputeLocation`` → a categorical over the loop indices TVM accepted for that block
  at the design spaces' own tiles (which loops exist depends on the tiles: TVM moves an
  unavailable location to a neighbour, and that program is measured once, keyed by the
  decisions TVM actually made),
* the design space itself → a categorical ``design``; decisions are shared between design
  spaces by signature and ignored where a design lacks them (details:
  :mod:`bayestune.integrations.tvm.space`) —

and applies each configuration through the trace's decision provider. A decision TVM
refuses, or a schedule a postprocessor rejects, is told to the optimizer as a
known-infeasible ``schedule`` failure without a build; build errors, run errors and timeouts
come back from the runner as ``compile``/``runtime``/``timeout`` failures (hidden
constraints the feasibility model learns). Each batch of ``num_trials_per_iter`` comes from
one ``ask(n)``; the objective is the mean of the runner's ``run_secs``.

Options for long runs (the TVM thesis): ``strategy_options={"max_training_points": 250,
"experimental": {"memory_policy": "lru"}}`` caps what the surrogate learns from (policies and
which suits what: :mod:`bayestune.models.training`), and ``epsilon=0.2`` replaces each pick by a uniform
draw with that probability once the initial design is done.

Every :func:`tune` keeps a bayestune journal in its work directory (``bayestune
show/report/export`` read it; a bayestune strategy's run resumes from it), takes earlier runs
of the same operator as ``prior_runs`` (:mod:`.prior`), returns ``outcome.best`` whatever the
strategy, and lets bayestune's own errors out as raised rather than as TVM's ``RuntimeError``.

Importing this package does not import TVM; :func:`load_tvm` (called by everything here that
needs TVM) does, by default with the ``tensor_intrin`` shortcut described there.

The folder: :mod:`.tuning` (loading TVM, :func:`tune`, :func:`measure`), :mod:`.space` (the
decisions as one ``Space``, no TVM import), :mod:`.strategy` (the ``PySearchStrategy``,
which imports TVM: its names load on first use, after :func:`load_tvm`) and :mod:`.prior`
(earlier runs read into the space).
"""

from typing import Any

from bayestune.integrations._lazy import lazy_exports
from bayestune.integrations.tvm.tuning import (
    TVM_STRATEGIES,
    Measurement,
    TuneOutcome,
    fast_build,
    load_tvm,
    measure,
    tune,
)

__all__ = [
    "BayestuneSearchStrategy",
    "Measurement",
    "TVM_STRATEGIES",
    "TuneOutcome",
    "TuningRecord",
    "fast_build",
    "load_tvm",
    "measure",
    "tune",
]
_STRATEGY_NAMES = {"BayestuneSearchStrategy": "strategy", "TuningRecord": "strategy"}
_lazy_strategy, _lazy_dir = lazy_exports(__name__, _STRATEGY_NAMES)


def __getattr__(name: str) -> Any:
    """``BayestuneSearchStrategy`` and ``TuningRecord`` import TVM on first use only."""
    if name in _STRATEGY_NAMES:
        load_tvm()  # with the tensor_intrin shortcut, before the strategy module imports TVM
    return _lazy_strategy(name)


def __dir__() -> list[str]:
    return _lazy_dir()
