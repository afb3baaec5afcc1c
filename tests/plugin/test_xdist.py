"""Scenarios and node fixtures in parallel under pytest-xdist: no socket or port clashes."""

from __future__ import annotations

import json
from typing import Any

import pytest


def test_scenarios_under_xdist_with_reports(
    pytester: pytest.Pytester, write: Any, scenario_text: Any
) -> None:
    for index in range(4):
        write(f"drasim_{index}.yaml", scenario_text(f"parallel-{index}"))
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("n", range(3))
        def test_node(drasim_node, n):
            drasim_node.step({"expectRegistered": {"connected": True}})
            assert drasim_node.kubeconfig().exists()
        """
    )
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "--drasim-report-dir", "out")
    result.assert_outcomes(passed=7)
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    # The scenarios and the Python tests that used drasim_node, each once.
    assert report["summary"]["passed"] == 7
    assert sorted(r["name"] for r in report["results"]) == [f"parallel-{i}" for i in range(4)] + [
        f"test_node[{n}]" for n in range(3)
    ]


def test_suite_under_xdist(pytester: pytest.Pytester) -> None:
    # Workers get the suite directory from the controller's arguments and must not add it twice.
    result = pytester.runpytest_subprocess(
        "-n", "2", "--drasim-suite", "conformance", "-k", "round-trip or batched or shared"
    )
    result.assert_outcomes(passed=3)
