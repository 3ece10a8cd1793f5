"""bayestune for ``kernel_tuner.tune_kernel_T1``: point ``custom_search_method_path`` at this file.

    kernel_tuner.tune_kernel_T1("kernel.json", strategy="BayestuneStrategy",
                                strategy_options={"custom_search_method_path": "bayestune_t1.py",
                                                  "max_fevals": 50, "seed": 0})

Kernel Tuner imports the class named by ``strategy`` from this file and builds it with the
remaining ``strategy_options`` as keyword arguments.
"""

from bayestune.integrations.kernel_tuner import BayestuneStrategy

__all__ = ["BayestuneStrategy"]
