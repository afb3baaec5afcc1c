"""A failing Python test that uses drasim's fixtures shows what a failing YAML scenario shows
(failing step, journal tail, driver output, reproduce line) and is in drasim's reports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

DRIVER_REPO_TESTS = '''
import pytest


@pytest.mark.drasim_node(claims=["gpu"])
def test_wrong_count(drasim_node):
    """Prepares once and expects two calls, on purpose."""
    drasim_node.step({"startPod": {"name": "a", "claims": ["gpu"]}})
    drasim_node.step({"expectCalls": {"NodePrepareResources": 2}})


def test_journal_assertion(drasim_node, drasim_journal):
    drasim_journal.assert_calls("NodePrepareResources", 3)


def test_caught_step_then_plain_assert(drasim_node):
    from drasim.pytest_plugin.harness import StepAssertionError

    with pytest.raises(StepAssertionError):
        drasim_node.step({"expectCalls": {"NodePrepareResources": 5}})
    assert drasim_node.name == "another-node"


def test_scenario_run_fails(drasim_scenario, drasim_run):
    result = drasim_run(drasim_scenario("ran-from-python", claims=["gpu"], steps=[
        {"startPod": {"name": "a", "claims": ["gpu"]}},
        {"expectCalls": {"NodePrepareResources": 4}},
    ]))
    assert result.status == "passed"


def test_passes(drasim_node):
    drasim_node.step({"expectRegistered": {"connected": True}})


def test_skips(drasim_factory):
    pytest.skip("not on this node")


def test_without_drasim():
    assert True
'''


@pytest.fixture
def run(pytester: pytest.Pytester) -> Any:
    pytester.makepyfile(test_driver=DRIVER_REPO_TESTS)
    return pytester.runpytest("-q", "--drasim-report-dir", "out", "--drasim-time-scale", "0.02")


def sections(out: str, test: str) -> str:
    """The terminal text of one failure, from its header to the next one."""
    start = out.index(f"_ {test} _")
    end = out.find("\n____", start + 1)
    return out[start : end if end != -1 else len(out)]


def test_a_failing_step_shows_the_scenario_sections(run: Any) -> None:
    run.assert_outcomes(passed=2, failed=4, skipped=1)
    text = sections(run.stdout.str(), "test_wrong_count")
    assert "drasim failing step" in text
    assert "Failing step 2: expectCalls {NodePrepareResources: 2}" in text
    assert "drasim journal tail" in text
    journal = text[text.index("drasim journal tail") : text.index("drasim reproduce")]
    assert "rpc NodePrepareResources gpu.example.com claims=[default/gpu] -> OK" in journal
    assert "step-end 2: expectCalls failed" in journal
    assert "python -m pytest test_driver.py::test_wrong_count --drasim-time-scale 0.02" in text
    # The traceback ends at the test's own line: drasim's frames are hidden.
    assert '>       drasim_node.step({"expectCalls": {"NodePrepareResources": 2}})' in text
    assert "harness.py" not in text
    assert "self.session.run(step)" not in text


def test_a_journal_assertion_gets_the_journal_tail(run: Any) -> None:
    text = sections(run.stdout.str(), "test_journal_assertion")
    assert "AssertionError: expected 3 NodePrepareResources calls, found 0" in text
    assert "registration gpu.example.com v1.DRAPlugin registered" in text
    assert "drasim failing step" not in text
    assert "harness.py" not in text


def test_a_caught_step_failure_is_not_the_failing_step(run: Any) -> None:
    text = sections(run.stdout.str(), "test_caught_step_then_plain_assert")
    assert "drasim failing step" not in text
    assert "drasim journal tail" in text


def test_a_scenario_run_from_python_shows_its_failure(run: Any) -> None:
    text = sections(run.stdout.str(), "test_scenario_run_fails")
    assert "drasim scenario ran-from-python" in text
    assert "Failing step 2: expectCalls {NodePrepareResources: 4}" in text
    assert "expected 4 NodePrepareResources calls since the start; found 1" in text


def test_fixture_tests_are_in_the_report_directory(run: Any, pytester: pytest.Pytester) -> None:
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    by_name = {r["name"]: r for r in report["results"]}
    assert "test_without_drasim" not in by_name  # no drasim fixture: not drasim's to report
    assert {n: r["status"] for n, r in by_name.items()} == {
        "test_wrong_count": "failed",
        "test_journal_assertion": "failed",
        "test_caught_step_then_plain_assert": "failed",
        "test_scenario_run_fails": "failed",
        "test_passes": "passed",
        "test_skips": "skipped",
    }
    assert report["summary"] == {"passed": 1, "failed": 4, "error": 0, "skipped": 1, "total": 6}
    wrong = by_name["test_wrong_count"]
    assert wrong["duration"] > 0
    assert wrong["description"] == "Prepares once and expects two calls, on purpose."
    assert wrong["file"].endswith("test_driver.py")
    failure = wrong["failure"]
    assert (failure["stepIndex"], failure["stepText"]) == (2, "expectCalls {NodePrepareResources: 2}")
    assert failure["message"].startswith("expected 2 NodePrepareResources calls since the start; found 1")
    assert "-NodePrepareResources: 2" in failure["diff"]
    assert failure["journalTail"][-1]["kind"] == "step-end"
    assert failure["reproduce"].startswith("python -m pytest test_driver.py::test_wrong_count")
    assert any(e["kind"] == "rpc" for e in wrong["journal"])
    assert by_name["test_skips"]["skipReason"] == "not on this node"
    assert by_name["test_passes"]["failure"] is None
    ran = by_name["test_scenario_run_fails"]
    assert any(e["kind"] == "rpc" for e in ran["journal"])  # the scenario's journal

    cases = {c.get("name"): c for c in ET.parse(pytester.path / "out" / "drasim-report.xml").iter("testcase")}
    assert set(cases) == set(by_name)
    body = cases["test_wrong_count"].find("failure")
    assert body is not None
    assert body.text is not None
    assert "Journal tail:" in body.text
    assert "Reproduce: python -m pytest" in body.text
    assert cases["test_skips"].find("skipped") is not None
    html = (pytester.path / "out" / "drasim-report.html").read_text()
    assert "test_wrong_count" in html
    assert "Failing step 2" in html


def test_a_driver_that_cannot_start_is_a_setup_error_with_its_stderr(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_node(drasim_node):
            pass
        """
    )
    driver = "sh -c 'echo this-driver-cannot-start >&2; exit 3'"
    result = pytester.runpytest("-q", "--drasim-driver-cmd", driver, "--drasim-report-dir", "out")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "drasim_node: setting up the node failed: driver exited with status 3" in out
    stderr_section = out[out.index("drasim driver stderr") :]
    assert "this-driver-cannot-start" in stderr_section
    assert "During handling" not in out
    assert "python -m pytest test_a_driver_that_cannot_start_is_a_setup_error_with_its_stderr.py::" in out
    assert "--drasim-driver-cmd" in out
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    (entry,) = report["results"]
    assert entry["status"] == "error"
    assert "this-driver-cannot-start" in entry["stderr"]
    assert entry["failure"]["message"].startswith("setup: drasim_node: setting up the node failed")


def test_with_junit_logging_pytests_junitxml_has_the_sections(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(DRIVER_REPO_TESTS)
    result = pytester.runpytest("-q", "--junitxml=junit.xml", "-o", "junit_logging=all", "-k", "wrong_count")
    result.assert_outcomes(failed=1)
    (case,) = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    out = case.find("system-out")
    assert out is not None
    assert out.text is not None
    assert "Failing step 2: expectCalls {NodePrepareResources: 2}" in out.text
    assert "step-end 2: expectCalls failed" in out.text
    assert "python -m pytest" in out.text


def test_mistakes_in_steps_and_scenarios_point_at_the_test(pytester: pytest.Pytester) -> None:
    """A misspelt step, scenario field or marker value: the message, no drasim frames."""
    pytester.makepyfile(
        """
        import pytest

        def test_bad_step(drasim_node):
            drasim_node.step({"startPd": {"name": "a"}})

        def test_bad_scenario(drasim_scenario):
            drasim_scenario("x", claims=[{"nam": "gpu"}])

        @pytest.mark.drasim_node(claims=[{"nam": "gpu"}])
        def test_bad_marker(drasim_node):
            pass
        """
    )
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=2, errors=1)
    out = result.stdout.str()
    assert "unknown step 'startPd'. Did you mean 'startPod'?" in out
    assert "spec.claims[0]: unknown field 'nam'" in out
    assert "drasim_node marker: <py-test-bad-marker>:" in out
    for internal in ("harness.py", "loader.py", "fixtures.py", "Traceback"):
        assert internal not in out
