"""--drasim-kubelet-version: one test per (scenario, version), restrictions skip, bad values stop pytest."""

from __future__ import annotations

import json
from typing import Any

import pytest

RESTRICTED = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata:
  name: old-only
  description: only for kubelets before 1.34
spec:
  kubeletVersions: ["<1.34"]
  driver:
    fake: {name: gpu.example.com}
  claims:
    - {name: gpu}
  steps:
    - startPod: {name: a, claims: [gpu]}
    - expectCalls: {NodePrepareResources: 1}
"""


def test_one_item_per_scenario_and_version(pytester: pytest.Pytester, write: Any, scenario_text: Any) -> None:
    write("drasim_one.yaml", scenario_text("one"))
    result = pytester.runpytest("-v", "--drasim-kubelet-version", "1.33,1.37", "--drasim-report-dir", "out")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*one[[]kubelet-1.33[]] PASSED*", "*one[[]kubelet-1.37[]] PASSED*"])
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    rows = {(r["name"], r["kubeletVersion"]) for r in report["results"]}
    assert rows == {("one[kubelet-1.33]", "1.33"), ("one[kubelet-1.37]", "1.37")}


def test_versions_outside_kubelet_versions_are_skipped(pytester: pytest.Pytester, write: Any) -> None:
    write("drasim_old.yaml", RESTRICTED)
    result = pytester.runpytest("-rs", "--drasim-kubelet-version", "1.33,1.34")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*kubelet 1.34 is outside this scenario's kubeletVersions*"])


def test_without_the_option_a_restricted_scenario_runs_as_its_newest_version(
    pytester: pytest.Pytester, write: Any
) -> None:
    write("drasim_old.yaml", RESTRICTED)
    result = pytester.runpytest("--drasim-report-dir", "out")
    result.assert_outcomes(passed=1)
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    assert [(r["name"], r["kubeletVersion"]) for r in report["results"]] == [("old-only", "1.33")]


def test_unknown_version_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--drasim-kubelet-version", "1.29")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "--drasim-kubelet-version: unknown kubelet version '1.29'; known versions: 1.31"
        in result.stderr.str()
    )


def test_python_tests_run_once_per_version(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_node="""
        def test_node(drasim_node, drasim_kubelet_version):
            assert drasim_node.world.version.version == drasim_kubelet_version
            drasim_node.step({"startPod": {"name": "a", "claims": []}})

        def test_plain():
            pass
        """
    )
    result = pytester.runpytest("-v", "--drasim-kubelet-version", "1.33,1.36")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["*test_node[[]kubelet-1.33[]] PASSED*", "*test_node[[]kubelet-1.36[]] PASSED*"]
    )


def test_a_single_version_applies_to_python_tests_unparametrized(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_node="""
        def test_node(drasim_node):
            assert drasim_node.world.version.version == "1.34"
        """
    )
    result = pytester.runpytest("-v", "--drasim-kubelet-version", "1.34")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_node PASSED*"])
