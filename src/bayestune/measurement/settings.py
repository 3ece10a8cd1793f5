"""The measurement records' former home, kept so that old imports still work: the records now
live in :mod:`bayestune.measurement_spec` (the bottom layer, where the scenario layer reads them)."""

from bayestune.measurement_spec import (
    CHECK_KEYS,
    MEASUREMENT_KEYS,
    STATISTICS,
    CorrectnessCheck,
    MeasurementPolicy,
    MeasurementSpec,
)

__all__ = ["CHECK_KEYS", "MEASUREMENT_KEYS", "STATISTICS", "CorrectnessCheck", "MeasurementPolicy", "MeasurementSpec"]
