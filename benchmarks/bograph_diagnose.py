"""What the learned DAG keeps and loses on the synthetic SoC (issue 14 diagnosis).

    PYTHONPATH=src python -m benchmarks.bograph_diagnose --seeds 3 --sizes 10 20 30 40

Per seed and number of observations (random configurations), the learned structure's parameter
ancestors of each summary column are compared with the true parameter ancestors of the metrics
the column summarises, and the parameters reaching the objective with the 16 that matter:
recall (true ones kept) and precision (kept ones true).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from bayestune.bograph.dag import effective_dimension
from bayestune.optimizer import Optimizer
from benchmarks.bograph_problems import SOC_TRUE_EDGES, soc

#: Distractor counters and what they copy (their true causes are the copied metric's).
#: Parameters that alone cost more than 10 % when set wrong at the optimum.
IMPORTANT = {
    "cycle_time",
    "pipelining",
    "cache_size",
    "cache_assoc",
    "cache_line",
    "cache_hit_latency",
    "cache_bandwidth",
    "tlb_miss_latency",
    "l2_size",
    "enable_l2",
    "pipelined_dma",
}
COPIES = {"cache.hits": "cache.miss_rate", "tlb.walks": "tlb.miss_rate", "cpu.ipc": "cpu.cycles"}


def true_parameter_ancestors(node: str, parameters: set[str]) -> set[str]:
    import networkx as nx

    g = nx.DiGraph(SOC_TRUE_EDGES)
    node = COPIES.get(node, node)
    if node not in g:
        return set()
    return {a for a in nx.ancestors(g, node) if a in parameters}


def learned_dag(problem: Any, seed: int, n: int, options: dict[str, Any]) -> tuple[Any, Any, float]:
    opt = Optimizer(problem.space, objectives=[problem.objective], strategy="random", seed=seed)
    noise = np.random.default_rng(10_000 + seed)
    while opt.n_evaluated < n:
        config = opt.ask()[0]
        opt.tell(config, problem.evaluate(config, noise))
    graph = Optimizer(
        problem.space,
        objectives=[problem.objective],
        strategy="bograph",
        strategy_options={"structure": "learn", **options},
        seed=seed,
    ).strategy.graph
    history = opt.history()
    start = time.process_time()
    rows = np.flatnonzero(history.feasible)
    features, raw = graph._parameter_data(history.X[rows])
    table = graph._metric_table(history, rows)
    graph._restructure(history, rows, features, raw, table, {}, history.Y[rows, 0])
    return graph._dag, graph._summary, time.process_time() - start


def main(argv: list[str] | None = None) -> None:
    import networkx as nx

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10, 20, 30, 40])
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--alpha", type=float, default=0.25, help="recall_alpha (0: off, BIC parents only)")
    parser.add_argument(
        "--set",
        nargs="*",
        default=[],
        metavar="KEY=JSON",
        help="other bograph options, e.g. --set cv_parents='\"objectives\"'",
    )
    args = parser.parse_args(argv)
    import json

    options = {k: json.loads(v) for k, v in (item.split("=", 1) for item in args.set)}
    problem = soc()
    parameters = set(problem.space.names)
    relevant = true_parameter_ancestors("edp", parameters)
    for n in args.sizes:
        recalls, precisions, cpu, important_recall, dims, target_in = [], [], [], [], [], []
        for seed in range(args.seeds):
            # the learner itself at every size (the strategy's default waits for parameters + 1 rows)
            dag, summary, seconds = learned_dag(
                problem,
                seed,
                n,
                {"notears": {"recall_alpha": args.alpha or None}, "relearn": {"min_rows": 3}, **options},
            )
            cpu.append(seconds)
            dims.append(effective_dimension(dag, "edp"))
            target_in.append(dag.in_degree("edp"))
            kept = {a for a in nx.ancestors(dag, "edp") if a in parameters}
            recalls.append(len(kept & relevant) / len(relevant))
            important_recall.append(len(kept & IMPORTANT) / len(IMPORTANT))
            precisions.append(len(kept & relevant) / max(1, len(kept)))
            print(
                f"n={n} seed={seed}: objective reached by {len(kept)} parameters, recall {recalls[-1]:.2f}, "
                f"precision {precisions[-1]:.2f}, missing {sorted(relevant - kept)}, {seconds:.2f} s CPU"
            )
            for column in summary.columns if summary is not None else []:
                if column.name not in dag:
                    print(
                        f"    {column.name:16s} (pruned)  true {len(set().union(*(true_parameter_ancestors(s, parameters) for s in column.sources)))}"
                    )
                    continue
                true = set().union(*(true_parameter_ancestors(s, parameters) for s in column.sources))
                direct = {p for p in dag.predecessors(column.name) if p in parameters}
                anc = {a for a in nx.ancestors(dag, column.name) if a in parameters}
                print(
                    f"    {column.name:16s} parents {sorted(dag.predecessors(column.name))}"
                    if args.verbose
                    else f"    {column.name:16s} direct {len(direct):2d} ancestors {len(anc):2d} "
                    f"true {len(true):2d} hit {len(anc & true):2d} -> {sorted(dag.successors(column.name))}"
                )
            if args.verbose:
                print(f"    edp parents {sorted(dag.predecessors('edp'))}")
        print(
            f"n={n}: recall {np.mean(recalls):.2f} (of the important {np.mean(important_recall):.2f}), precision {np.mean(precisions):.2f}, "
            f"effective dimension (largest in-degree) {np.mean(dims):.1f}, objective's in-degree {np.mean(target_in):.1f}, structure {np.mean(cpu):.2f} s CPU per update"
        )


if __name__ == "__main__":
    main()
