"""bayestune and other tools, one folder per tool, in two directions:

* bayestune *inside* another tuning tool, as its search strategy driving an
  :class:`~bayestune.optimizer.Optimizer` through ask/tell: ``kernel_tuner/`` (Kernel Tuner)
  and ``tvm/`` (TVM MetaSchedule);
* another tool *inside* bayestune, as a black box: ``halide/`` (a Halide schedule compiled and
  timed) and ``postgres/`` (a PostgreSQL server under pgbench).

Each folder's face exports its public names; the optional tools (Kernel Tuner, Halide, TVM) are
imported only when used, so ``import bayestune.integrations`` works without any of them installed.
"""
