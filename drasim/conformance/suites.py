"""Named suites of the built-in scenario library (``--drasim-suite``)."""

from __future__ import annotations

from pathlib import Path

from drasim.errors import ConfigError
from drasim.scenario.library import builtin_scenario_dir
from drasim.scenario.loader import load_paths
from drasim.scenario.schema import Scenario

SUITES: dict[str, str] = {
    "conformance": "what every DRA driver must do (scenarios/conformance)",
    "kubelet": "the emulated kubelet's own behaviour (scenarios/kubelet)",
    "all": "the whole built-in library",
}


def suite_paths(name: str) -> list[Path]:
    """The directories holding suite ``name``; raises KeyError for an unknown suite."""
    if name not in SUITES:
        raise KeyError(name)
    root = builtin_scenario_dir()
    return [root] if name == "all" else [root / name]


def load_suite(name: str) -> list[Scenario]:
    """Every scenario of suite ``name``."""
    return load_paths(suite_paths(name))


def suite_dirs(name: str, flag: str) -> list[Path]:
    """The existing directories of suite ``name``, or a ConfigError naming ``flag`` and the choices."""
    try:
        paths = [p.resolve() for p in suite_paths(name)]
    except KeyError:
        raise ConfigError(f"{flag}: unknown suite {name!r}; valid suites: {', '.join(SUITES)}") from None
    missing = [p for p in paths if not p.is_dir()]
    if missing:
        raise ConfigError(f"{flag} {name}: the scenario directory {missing[0]} does not exist")
    return paths
