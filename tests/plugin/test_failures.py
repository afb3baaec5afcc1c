"""A failing scenario shows its step, message and diff, not a Python traceback."""

from __future__ import annotations

from typing import Any

import pytest


def test_failure_shows_step_message_and_diff(
    pytester: pytest.Pytester, write: Any, scenario_text: Any
) -> None:
    write("drasim_wrong.yaml", scenario_text("wrong-count", count=2))
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*scenario: wrong-count*",
            "Failing step 2: expectCalls {NodePrepareResources: 2}*drasim_wrong.yaml:14:7*",
            "expected 2 NodePrepareResources calls since the start; found 1",
            "Expected vs actual:",
            "*-NodePrepareResources: 2",
            "*+NodePrepareResources: 1",
            "Journal tail:",
            "Reproduce: drasim run *drasim_wrong.yaml -k wrong-count",
        ]
    )
    out = result.stdout.str()
    assert "Traceback" not in out
    assert "def runtest" not in out
    assert "run_scenario(" not in out


def test_setup_error_is_reported_as_failure(pytester: pytest.Pytester, write: Any) -> None:
    write(
        "drasim_crash.yaml",
        """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {name: driver-cannot-start, description: the driver command does not exist}
        spec:
          driver:
            command: {name: gpu.example.com, args: [/nonexistent/driver-binary]}
          steps:
            - expectRegistered: {}
        """,
    )
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*cannot start driver command /nonexistent/driver-binary*"])
    assert "Traceback" not in result.stdout.str()


def test_junitxml_gets_no_result_dump_and_report_dir_still_gets_the_result(
    pytester: pytest.Pytester, write: Any, scenario_text: Any
) -> None:
    """pytest's own --junitxml is the user's file: no drasim property dump in it."""
    import json
    import xml.etree.ElementTree as ET

    write("drasim_ok.yaml", scenario_text("fine"))
    write("drasim_wrong.yaml", scenario_text("wrong-count", count=2))
    result = pytester.runpytest("-q", "--junitxml=junit.xml", "--drasim-report-dir", "out")
    result.assert_outcomes(passed=1, failed=1)
    junit = pytester.path / "junit.xml"
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    assert len(cases) == 2
    assert [p.get("name") for case in cases for p in case.iter("property")] == []
    assert "'journal'" not in junit.read_text()
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    assert sorted((r["name"], r["status"]) for r in report["results"]) == [
        ("fine", "passed"),
        ("wrong-count", "failed"),
    ]
