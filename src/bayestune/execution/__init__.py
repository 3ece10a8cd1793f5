"""Running evaluations: the loop that drives an optimizer, and where evaluations run
(this process, local worker processes, a Dask cluster)."""

from bayestune.execution.backend_choice import BACKENDS, make_backend
from bayestune.execution.backends import Backend, SerialBackend, Task, WorkerLost
from bayestune.execution.factories import (
    CallableFactory,
    CommandFactory,
    EvaluatorFactory,
    InstanceFactory,
    ScenarioFactory,
    WorkerSetupError,
    portable,
)
from bayestune.execution.loop import AllFailedError, most_common_failure, run

__all__ = [
    "AllFailedError",
    "BACKENDS",
    "Backend",
    "CallableFactory",
    "CommandFactory",
    "EvaluatorFactory",
    "InstanceFactory",
    "ScenarioFactory",
    "SerialBackend",
    "Task",
    "WorkerLost",
    "WorkerSetupError",
    "make_backend",
    "most_common_failure",
    "portable",
    "run",
]
