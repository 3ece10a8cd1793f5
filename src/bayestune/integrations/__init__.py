"""bayestune inside other tuning tools (Kernel Tuner, ...): each submodule imports its tool lazily,
so ``import bayestune.integrations`` works without any of them installed."""
