"""Scenarios and node fixtures in parallel under pytest-xdist: no socket or port clashes."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # each runs an inner pytest with xdist workers


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


REMOTE_STYLE_TESTS = """
import os

import pytest


def test_node_passes(drasim_node):
    drasim_node.step({"expectRegistered": {"connected": True}})


@pytest.mark.drasim_node(claims=["gpu"])
def test_node_fails(drasim_node):
    drasim_node.step({"startPod": {"name": "a", "claims": ["gpu"]}})
    drasim_node.step({"expectCalls": {"NodePrepareResources": 2}})


def test_skipped(drasim_factory):
    pytest.skip("not here")


def test_worker_dies(drasim_node):
    os._exit(3)
"""


@pytest.mark.parametrize("layout", ["popen", "chdir"])
def test_tx_workers_report_to_the_controller(
    pytester: pytest.Pytester,
    write: Any,
    scenario_text: Any,
    tmp_path_factory: pytest.TempPathFactory,
    layout: str,
) -> None:
    """``--tx`` workers (what pytest-xdist runs on other machines: here popen ones, the only
    kind a loopback-only machine has, in a directory of their own with ``chdir``): the
    controller writes one merged report, each test once, a dead worker's test as an error; no
    worker writes one."""
    import sys
    import xml.etree.ElementTree as ET

    for index in range(3):
        write(f"drasim_{index}.yaml", scenario_text(f"remote-{index}", count=1 if index else 2))
    pytester.makepyfile(test_remote=REMOTE_STYLE_TESTS)
    pytester.makeini("[pytest]\n")
    tx = f"2*popen//python={sys.executable}"
    extra: list[str] = []
    elsewhere = tmp_path_factory.mktemp("workers")
    if layout == "chdir":  # xdist copies the project there (its --rsyncdir; deprecated, still there in 3.x)
        tx = f"2*popen//chdir={elsewhere}//python={sys.executable}"
        extra = ["--rsyncdir", str(pytester.path), "-W", "ignore::DeprecationWarning"]
    result = pytester.runpytest_subprocess(
        "-p", "xdist", "--tx", tx, "--dist", "load", *extra, "-v", "--drasim-report-dir", "out"
    )  # fmt: skip
    result.assert_outcomes(passed=3, failed=3, skipped=1)  # 2 scenarios and a test; 1 + 1 + the dead worker's
    out = result.stdout.str()
    assert "[gw0]" in out
    assert "[gw1]" in out  # both workers ran tests
    assert sorted(p.name for p in (pytester.path / "out").iterdir()) == [
        "drasim-report.html",
        "drasim-report.json",
        "drasim-report.xml",
    ]
    assert not list(elsewhere.rglob("drasim-report.*"))  # no worker wrote a report of its own
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    statuses = {r["name"]: r["status"] for r in report["results"]}
    assert len(statuses) == len(report["results"]) == 7  # each test once
    assert statuses == {
        "remote-0": "failed",
        "remote-1": "passed",
        "remote-2": "passed",
        "test_node_passes": "passed",
        "test_node_fails": "failed",
        "test_skipped": "skipped",
        "test_worker_dies": "error",
    }
    assert report["summary"] == {"passed": 3, "failed": 2, "error": 1, "skipped": 1, "total": 7}
    by_name = {r["name"]: r for r in report["results"]}
    assert "crashed while running" in by_name["test_worker_dies"]["failure"]["message"]
    assert any(e["kind"] == "rpc" for e in by_name["test_node_fails"]["journal"])
    assert by_name["test_node_fails"]["failure"]["stepIndex"] == 2
    suite = ET.parse(pytester.path / "out" / "drasim-report.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("7", "2", "1")
    assert sorted(c.get("name") for c in suite.iter("testcase")) == sorted(statuses)


def test_dist_each_keeps_every_workers_run(pytester: pytest.Pytester, write: Any, scenario_text: Any) -> None:
    """``--dist each``: every worker runs every test, and the report has each worker's run."""
    import sys

    write("drasim_once.yaml", scenario_text("everywhere"))
    pytester.makepyfile(test_each="def test_node(drasim_node):\n    assert drasim_node.name\n")
    result = pytester.runpytest_subprocess(
        "-p", "xdist", "--tx", f"2*popen//python={sys.executable}", "--dist", "each",
        "--drasim-report-dir", "out",
    )  # fmt: skip
    result.assert_outcomes(passed=4)
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    assert sorted(r["name"] for r in report["results"]) == [
        "everywhere@gw0",
        "everywhere@gw1",
        "test_node@gw0",
        "test_node@gw1",
    ]
