"""Scenario files: read and write tuning problems as JSON or YAML.

Three input formats are recognised from their top-level keys:

* **native** (``parameters``, ``objectives``, ...): bayestune's own format, described by the
  published JSON Schema ``bayestune/schemas/scenario.schema.json`` and ``docs/scenario.md``;
* **HyperMapper 2.0 / BaCO** (``application_name``, ``optimization_objectives``,
  ``input_parameters``, ...): their scenario JSON, read unchanged; every key of their schemas
  is mapped, ignored, approximated or refused (:mod:`.hypermapper.keys`, listed in
  :attr:`Scenario.key_handling`);
* **T1** (``General``, ``ConfigurationSpace``, ``KernelSpecification``, ...): the community
  search-space format of the GPU-kernel benchmark collections.

One module per format (:mod:`.native`, :mod:`.hypermapper`, :mod:`.t1`), :mod:`.formats`
telling them apart, :mod:`.files` for reading and writing files, and :mod:`.records` for the
:class:`Scenario` record itself.

:func:`scenario_to_dict` always writes the native format. Every problem is reported as a
:class:`~bayestune.exceptions.ScenarioError` naming the file, the JSON path, the rule and the
offending value, e.g. ``examples/x.json: $.parameters[1].bounds: `low < high` must hold, but got [5, 2]``.
"""

from bayestune.scenario.files import load_scenario, save_scenario
from bayestune.scenario.formats import FORMATS, detect_format, scenario_from_dict
from bayestune.scenario.hypermapper.keys import KeyHandling, format_key_handling, review_keys
from bayestune.scenario.native import load_schema, scenario_to_dict
from bayestune.scenario.records import (
    BLACKBOX_KINDS,
    DEFAULT_MULTI_OBJECTIVE_STRATEGY,
    DEFAULT_STRATEGY,
    BlackBoxSpec,
    DesignSpec,
    Scenario,
    TransferSpec,
)
from bayestune.space.spec import space_from_spec

__all__ = [
    "BLACKBOX_KINDS",
    "DEFAULT_MULTI_OBJECTIVE_STRATEGY",
    "DEFAULT_STRATEGY",
    "FORMATS",
    "BlackBoxSpec",
    "DesignSpec",
    "KeyHandling",
    "Scenario",
    "detect_format",
    "format_key_handling",
    "load_scenario",
    "load_schema",
    "review_keys",
    "save_scenario",
    "scenario_from_dict",
    "scenario_to_dict",
    "space_from_spec",
    "TransferSpec",
]
