"""The YAML scenario language: schema, loader, JSON Schema and the built-in library.

Typical use by a runner::

    from drasim.scenario import load_paths
    for scenario in load_paths(["scenarios/"]):
        for step in scenario.spec.steps:
            ...  # dispatch on type(step.args)

Names are imported lazily so that ``python -m drasim.scenario.schema`` runs cleanly.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drasim.errors import ScenarioError
    from drasim.scenario.library import builtin_scenario_dir
    from drasim.scenario.loader import discover, load_file, load_paths, load_text
    from drasim.scenario.registry import STEP_TYPES, Step, StepType
    from drasim.scenario.schema import Scenario
    from drasim.scenario.variables import expand_variables, scenario_variables

_EXPORTS = {
    "STEP_TYPES": "drasim.scenario.registry",
    "Scenario": "drasim.scenario.schema",
    "ScenarioError": "drasim.errors",
    "Step": "drasim.scenario.registry",
    "StepType": "drasim.scenario.registry",
    "builtin_scenario_dir": "drasim.scenario.library",
    "discover": "drasim.scenario.loader",
    "expand_variables": "drasim.scenario.variables",
    "load_file": "drasim.scenario.loader",
    "load_paths": "drasim.scenario.loader",
    "load_text": "drasim.scenario.loader",
    "scenario_variables": "drasim.scenario.variables",
}

__all__ = [
    "STEP_TYPES",
    "Scenario",
    "ScenarioError",
    "Step",
    "StepType",
    "builtin_scenario_dir",
    "discover",
    "expand_variables",
    "load_file",
    "load_paths",
    "load_text",
    "scenario_variables",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module 'drasim.scenario' has no attribute {name!r}"
        raise AttributeError(msg)
    return getattr(importlib.import_module(module), name)
