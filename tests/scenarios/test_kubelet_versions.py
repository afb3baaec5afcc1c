"""Version-pinned scenarios: each holds exactly for the kubelet versions its kubeletVersions lists.

Every scenario in scenarios/kubelet/versions/ passes as every version it allows and FAILS as
every version it excludes (run with the restriction lifted). That proves both that the profile
of each version changes what a driver sees and that each restriction is exact.
"""

from __future__ import annotations

import dataclasses
import sys

import pytest

from drasim.profiles import VERSIONS
from drasim.report.model import RESULTS
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.runner.versions import allowed
from drasim.scenario import builtin_scenario_dir, load_paths
from drasim.scenario.schema import Scenario

PINNED: list[Scenario] = sorted(
    load_paths([builtin_scenario_dir() / "kubelet" / "versions"]), key=lambda s: s.name
)
ALLOWED = [(s, v) for s in PINNED for v in allowed(s)]
EXCLUDED = [(s, v) for s in PINNED for v in VERSIONS if v not in allowed(s)]


_passing = sys.modules["drasim_test_scenario_passing"]  # loaded by tests/conftest.py


def _ids(value: object) -> str:
    return value if isinstance(value, str) else getattr(value, "name", str(value))


def _unrestricted(scenario: Scenario) -> Scenario:
    return dataclasses.replace(scenario, spec=dataclasses.replace(scenario.spec, kubelet_versions=[]))


def test_at_least_ten_version_pinned_scenarios() -> None:
    assert len(PINNED) >= 10
    assert all(s.spec.kubelet_versions and len(allowed(s)) < len(VERSIONS) for s in PINNED)
    # Between them they pin behaviour of every version.
    assert {v for s in PINNED for v in allowed(s)} == set(VERSIONS)


@pytest.mark.parametrize(("scenario", "version"), ALLOWED, ids=_ids)
def test_passes_as_every_allowed_version(scenario: Scenario, version: str) -> None:
    result = _passing.run_passing(scenario, RunOptions(kubelet_version=version))
    assert result.status == "passed", _passing.explain(result) or result.skip_reason
    assert result.name == f"{scenario.name}[kubelet-{version}]"
    assert result.kubelet_version == version


@pytest.mark.parametrize(("scenario", "version"), EXCLUDED, ids=_ids)
def test_fails_as_every_excluded_version(scenario: Scenario, version: str) -> None:
    result = run_scenario(_unrestricted(scenario), RunOptions(kubelet_version=version), results=RESULTS)
    assert result.status == "failed", (
        f"{scenario.name} does not fail as kubelet {version}: {result.status} "
        f"{result.failure.message if result.failure else ''}"
    )


def test_excluded_version_is_a_skipped_row() -> None:
    scenario = next(s for s in PINNED if s.name == "versions-kubelet-1-31-rejects-service-names")
    result = run_scenario(scenario, RunOptions(kubelet_version="1.37"), results=RESULTS)
    assert result.status == "skipped"
    assert result.name == "versions-kubelet-1-31-rejects-service-names[kubelet-1.37]"
    assert "kubelet 1.37 is outside this scenario's kubeletVersions ['1.31']" in result.skip_reason
