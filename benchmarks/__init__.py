"""bayestune's benchmark suite (not part of the installed package; run from the repo root).

    python -m benchmarks list
    python -m benchmarks run --problems gpu,synthetic,halide --strategies bo,random,cot_random,genetic,annealing,local \\
        --budgets 20,40,60,100 --seeds 10 --out benchmarks/results/run.jsonl --jobs 2
    python -m benchmarks report benchmarks/results/run.jsonl --out benchmarks/RESULTS.md \\
        --plots benchmarks/results/plots/

Modules: :mod:`benchmarks.problems` (GPU replay, synthetic), :mod:`benchmarks.halide_problems`
(live Halide schedules), :mod:`benchmarks.strategies` (the strategy registry and the fair
budget rules every strategy and peer runs under), :mod:`benchmarks.runner` (JSONL records,
resume, process pool), :mod:`benchmarks.metrics` (pure metric functions) and
:mod:`benchmarks.report` (Markdown and PNG). A peer adapter registers itself with
:func:`benchmarks.strategies.register_strategy`.

Optional extras: ``pip install -e '.[plot,halide]'`` (matplotlib for the plots, halide for
the live problems). The GPU data directory is ``<repo>/../shared/data/gpu-kernels`` unless
``BAYESTUNE_DATA`` says otherwise.
"""
