"""A real PostgreSQL server under pgbench as a black box, its statistics views as logged metrics.

Per configuration, :class:`PostgresTuner` copies a template cluster (made once by ``initdb`` and
``pgbench -i`` in a temporary directory), writes the knobs into the copy's postgresql.conf,
starts the server on a Unix socket in that directory (no TCP), zeroes the statistics, runs
pgbench and answers its throughput (``tps``, to maximise) or latency (``latency_ms``) with every
counter of the statistics views under a dotted name (``Database.blks_hit``,
``Checkpointer.num_requested``, ``Tables.pgbench_accounts.heap_blks_read``, ...) for
structured BO. A copy per evaluation gives every configuration the same starting data.

Knob values the server refuses (out of range, inconsistent) and servers that do not start are
failures carrying the reason from the server log; the server is stopped and the copy removed
after every evaluation, also on timeout and Ctrl-C; ``close()`` removes the workspace.

    tuner = PostgresTuner()
    opt = Optimizer(tuner.space(), objectives=[tuner.objective()], seed=0)
    best = opt.optimize(tuner, budget=30)

The folder: :mod:`.knobs` (the settings searched over), :mod:`.tuner` (the black box),
:mod:`.server` (the throw-away cluster), :mod:`.pgbench` (the workload) and :mod:`.stats` (the
statistics views as metrics).
"""

from bayestune.integrations.postgres.knobs import DEFAULT_KNOBS, DURABILITY_KNOBS, Knob
from bayestune.integrations.postgres.pgbench import Pgbench
from bayestune.integrations.postgres.server import missing_programs
from bayestune.integrations.postgres.tuner import OBJECTIVES, PostgresTuner

__all__ = ["DEFAULT_KNOBS", "DURABILITY_KNOBS", "OBJECTIVES", "Knob", "Pgbench", "PostgresTuner", "missing_programs"]
