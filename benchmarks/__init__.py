"""bayestune's benchmark suite (not part of the installed package; run from the repo root).

    python -m benchmarks list
    python -m benchmarks run --problems gpu,synthetic,halide --strategies bo,random,cot_random,genetic,annealing,local \\
        --budgets 20,40,60,100 --seeds 10 --jobs 2   # -> benchmarks/scratch/search-quality/run.jsonl
    python -m benchmarks run --problems multiobjective --strategies pareto_rf,parego,random,optuna_tpe,optuna_nsga2 \\
        --budgets 60 --seeds 10 --out benchmarks/scratch/multiobjective/multiobjective.jsonl
    python -m benchmarks report benchmarks/scratch/search-quality/run.jsonl   # -> .../report.md and plots/

``python -m benchmarks.multiobjective {run,report}`` is the multi-objective runs' command with
their published defaults (one budget, HyperMapper on fewer seeds); it goes through the same
harness.

One harness, one problem record, one set of budget rules, for one objective or several:

* :mod:`benchmarks.problem` — the :class:`~benchmarks.problem.Problem` record and
  :func:`~benchmarks.problem.config_key`, the identity of a configuration;
* :mod:`benchmarks.problems` — GPU replay and synthetic problems, and the registry of all of
  them; :mod:`benchmarks.halide_problems` (live Halide schedules) and
  :mod:`benchmarks.multiobjective_problems` (two objectives) supply theirs;
* :mod:`benchmarks.budget` — the fair budget rules every contender runs under
  (``CountedObjective``) and the record of a run (``Trajectory``);
* :mod:`benchmarks.contenders` — the registry of what competes: bayestune's strategies and the
  peer adapters in :mod:`benchmarks.peers`;
* :mod:`benchmarks.harness` — (problem, strategy, seed) runs: JSONL records, resume, process pool;
* :mod:`benchmarks.metrics` — pure metric functions (best/optimum, MDF, hypervolume ratios);
* :mod:`benchmarks.results_report` — Markdown tables and PNG plots of the records;
* :mod:`benchmarks.trajectory_check` — the same seeds give the same trajectories (refactors).

A peer adapter registers itself with :func:`benchmarks.contenders.register_strategy`.

Optional extras: ``pip install -e '.[plot,halide]'`` (matplotlib for the plots, halide for
the live problems). The GPU data directory is ``<repo>/../shared/data/gpu-kernels`` unless
``BAYESTUNE_DATA`` says otherwise.
"""
