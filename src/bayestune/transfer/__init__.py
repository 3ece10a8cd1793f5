"""Transfer from earlier runs: prior runs of the same space (on another device, input size,
compiler version) loaded as rows of the new space, a warm-start design from their best
configurations (in mode ``auto``, the default, kept only while they measure better than the
design's other points: :mod:`bayestune.transfer.gate`), and a transfer model whose prior mean is
the source runs' values, weighted by how well they rank the new run's own observations (weight 0:
a plain cold-start GP)."""

from bayestune.transfer.design import warm_start_rows
from bayestune.transfer.model import TransferModel
from bayestune.transfer.runs import PriorRun, load_prior_run, load_prior_runs
from bayestune.transfer.weighting import source_weight

__all__ = ["PriorRun", "TransferModel", "load_prior_run", "load_prior_runs", "source_weight", "warm_start_rows"]
