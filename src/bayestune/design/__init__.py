"""Initial designs evaluated before the first model: uniform, CoT-uniform, LHS, maximin, feasible LHS, prior;
HyperMapper 2.0's prior draws and grid."""

from bayestune.design.initial import DESIGNS, design_features, initial_design

__all__ = ["DESIGNS", "design_features", "initial_design"]
