"""The built-in scenario library: every scenario passes against the correct fake plugin,
and every scenario that claims to catch a fake-plugin bug fails when that bug is switched on.

This is what proves the library can catch bugs: a scenario that passes whatever the
driver does would be worthless.
"""

from __future__ import annotations

import sys

import pytest

from drasim.report.model import RESULTS
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.scenario import builtin_scenario_dir, load_paths
from drasim.scenario.schema import Scenario

LIBRARY: list[Scenario] = sorted(load_paths([builtin_scenario_dir()]), key=lambda s: s.name)
CATCHES = [(s, bug) for s in LIBRARY for bug in s.metadata.catches]


_passing = sys.modules["drasim_test_scenario_passing"]  # loaded by tests/conftest.py
_explain = _passing.explain
_run_passing = _passing.run_passing


def test_library_is_large_enough() -> None:
    names = [s.name for s in LIBRARY]
    assert len(names) >= 40
    assert len(set(names)) == len(names)
    assert any(s.file.split("/scenarios/")[1].startswith("conformance/") for s in LIBRARY)
    assert any(s.file.split("/scenarios/")[1].startswith("kubelet/") for s in LIBRARY)


@pytest.mark.parametrize("scenario", LIBRARY, ids=lambda s: s.name)
def test_scenario_passes_against_the_fake_plugin(scenario: Scenario) -> None:
    result = _run_passing(scenario)
    assert result.status == "passed", _explain(result)


@pytest.mark.parametrize(("scenario", "bug"), CATCHES, ids=lambda v: v if isinstance(v, str) else v.name)
def test_scenario_catches_its_bug(scenario: Scenario, bug: str) -> None:
    result = run_scenario(scenario, RunOptions(bugs=(bug,)), results=RESULTS)
    assert result.status == "failed", f"{scenario.name} did not catch the {bug!r} bug of the fake plugin"


def test_every_bug_is_caught_by_some_scenario() -> None:
    from fake_plugins import BUGS

    caught = {bug for _, bug in CATCHES}
    assert caught == set(BUGS), f"bugs no scenario catches: {sorted(set(BUGS) - caught)}"


@pytest.mark.parametrize("scenario", LIBRARY, ids=lambda s: s.name)
def test_scenario_passes_with_the_http_backend(scenario: Scenario) -> None:
    """The kubelet, the runner and the fake drivers all use the kubernetes client over HTTP."""
    result = _run_passing(scenario, RunOptions(backend="http"))
    assert result.status == "passed", _explain(result)
