"""Built-in scenario suites and what scenarios need from the driver under test.

Public API::

    SUITES                                   # {"conformance": ..., "kubelet": ..., "all": ...}
    suite_paths(name) -> list[Path]          # directories of a suite in the built-in library
    load_suite(name) -> list[Scenario]
    scenario_requirements(scenario) -> list[Requirement]
    missing_requirements(scenario, capabilities) -> list[Requirement]
    real_driver_skip_reason(scenario, capabilities=()) -> str
"""

from __future__ import annotations

from drasim.conformance.requirements import (
    FAKE_PLUGIN,
    HEALTH,
    KNOWN_CAPABILITIES,
    PROXY,
    Requirement,
    check_capability_names,
    missing_requirements,
    real_driver_skip_reason,
    scenario_requirements,
    skip_reason,
)
from drasim.conformance.suites import SUITES, load_suite, suite_paths

__all__ = [
    "FAKE_PLUGIN",
    "HEALTH",
    "KNOWN_CAPABILITIES",
    "PROXY",
    "SUITES",
    "Requirement",
    "check_capability_names",
    "load_suite",
    "missing_requirements",
    "real_driver_skip_reason",
    "scenario_requirements",
    "skip_reason",
    "suite_paths",
]
