"""JUnit XML and JSON reports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from drasim.errors import ConfigError
from drasim.report import (
    FailureInfo,
    RunReport,
    ScenarioResult,
    load_json_report,
    render_json,
    render_junit,
    write_json,
    write_junit,
)


def test_junit_counts_and_testcase_attributes(report: RunReport):
    root = ET.fromstring(render_junit(report))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert {k: suite.get(k) for k in ("name", "tests", "failures", "errors", "skipped", "time")} == {
        "name": "drasim",
        "tests": "5",
        "failures": "1",
        "errors": "1",
        "skipped": "1",
        "time": "1.250",
    }
    assert suite.get("timestamp") == "2026-12-02T13:00:00Z"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props == {
        "drasim.version": "0.1.0",
        "driver": "fake:gpu.example.com",
        "backend": "memory",
        "timeScale": "0.01",
    }
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name"), c.get("time")) for c in cases] == [
        ("scenarios.conformance", "prepare-unprepare-round-trip", "0.123"),
        ("scenarios.kubelet", "unprepare-is-retried", "0.500"),
        ("scenarios.kubelet", "driver-crash", "0.050"),
        ("scenarios.conformance", "health-stream", "0.000"),
        ("scenarios.examples", "evil <script>alert(1)</script>", "0.010"),
    ]
    assert cases[1].get("file") == "scenarios/kubelet/unprepare-retry.yaml"
    assert cases[1].get("line") == "3"
    assert [child.tag for child in cases[0]] == ["system-out"]
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith("expected 1 NodeUnprepareResources call")
    assert "Failing step 2: delete_pod p1" in (failure.text or "")
    assert "  -  code: OK\n  +  code: Unavailable" in (failure.text or "")
    assert "Reproduce: drasim run scenarios/kubelet/unprepare-retry.yaml" in (failure.text or "")
    out = cases[1].findtext("system-out") or ""
    assert (
        out.splitlines()[4]
        == "#5 t=0.002 rpc NodePrepareResources gpu.example.com claims=[default/gpu] -> OK (1.5ms)"
    )
    assert cases[1].findtext("system-err") == "E1202 plugin: unprepare failed\n"
    error = cases[2].find("error")
    assert error is not None
    assert error.get("message") == "driver process exited with code 2 before registering"
    assert cases[2].findtext("system-out") == "driver stdout:\nstarting\n"
    assert cases[2].findtext("system-err") == "panic: boom\\x1b[31m\n"
    skipped = cases[3].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "driver does not advertise the health service"


def test_junit_escapes_control_characters_everywhere():
    nasty = "bell\x07 nul\x00 esc\x1b ok\ttab"
    result = ScenarioResult(
        name=nasty,
        status="failed",
        file="s/x.yaml",
        failure=FailureInfo.build(nasty),
        journal=[{"seq": 1, "t": 0.0, "kind": "step", "index": 1, "text": nasty}],
        stderr=nasty + "\ud800",
    )
    text = render_junit(RunReport(results=[result]))
    case = ET.fromstring(text).find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == "bell\\x07 nul\\x00 esc\\x1b ok\ttab"
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == "bell\\x07 nul\\x00 esc\\x1b ok\ttab"
    assert case.findtext("system-err") == "bell\\x07 nul\\x00 esc\\x1b ok\ttab\\ud800\n"


def test_write_junit_and_json_files(report: RunReport, tmp_path):
    write_junit(report, tmp_path / "out" / "junit.xml")
    write_json(report, tmp_path / "out" / "report.json")
    assert ET.parse(tmp_path / "out" / "junit.xml").getroot().tag == "testsuites"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["junit.xml", "report.json"]


def test_json_report_has_version_summary_and_round_trips(report: RunReport):
    text = render_json(report)
    data = json.loads(text)
    assert data["reportVersion"] == 1
    assert list(data) == sorted(data)
    assert data["summary"] == {"passed": 2, "failed": 1, "error": 1, "skipped": 1, "total": 5}
    assert data["environment"] == {
        "driver": "fake:gpu.example.com",
        "backend": "memory",
        "timeScale": 0.01,
        "extra": {},
    }
    failed = data["results"][1]
    assert failed["status"] == "failed"
    assert failed["failure"]["stepIndex"] == 2
    assert failed["failure"]["expected"] == {"NodeUnprepareResources": {"calls": 1, "code": "OK"}}
    assert failed["failure"]["similarEvents"][0]["seq"] == 10
    assert failed["journal"][4]["request"]["claims"][0]["name"] == "gpu"
    assert data["results"][3]["skipReason"] == "driver does not advertise the health service"
    assert load_json_report(text) == report
    assert render_json(load_json_report(text)) == text


def test_load_json_report_rejects_other_documents():
    with pytest.raises(ConfigError, match=r"r\.json:1: not valid JSON"):
        load_json_report("{", "r.json")
    with pytest.raises(ConfigError, match=r"r\.json: reportVersion: expected 1, found 2"):
        load_json_report('{"reportVersion": 2}', "r.json")
    with pytest.raises(ConfigError, match=r"r\.json: reportVersion: expected 1, found 'list'"):
        load_json_report("[]", "r.json")
    with pytest.raises(ConfigError, match=r"r\.json: not a drasim report: 'name'"):
        load_json_report('{"reportVersion": 1, "results": [{"status": "passed"}]}', "r.json")
