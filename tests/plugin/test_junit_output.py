"""pytest's own ``--junitxml`` with ``junit_logging``: the journal and driver output per scenario."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest


def test_junit_logging_puts_the_journal_in_pytests_junit(
    pytester: pytest.Pytester, write: Any, scenario_text: Any
) -> None:
    write("drasim_ok.yaml", scenario_text("ok"))
    write("drasim_bad.yaml", scenario_text("bad", count=2))
    result = pytester.runpytest("-q", "--junitxml", "j.xml", "-o", "junit_logging=all")
    result.assert_outcomes(passed=1, failed=1)
    cases = {c.get("name"): c for c in ET.parse(pytester.path / "j.xml").iter("testcase")}
    for name in ("ok", "bad"):
        out = cases[name].findtext("system-out") or ""
        assert "rpc NodePrepareResources gpu.example.com claims=[default/gpu] -> OK" in out, name
        assert "step 1: startPod {name: a, claims: [gpu]}" in out, name


def test_without_junit_logging_a_failure_shows_no_captured_journal(
    pytester: pytest.Pytester, write: Any, scenario_text: Any
) -> None:
    write("drasim_bad.yaml", scenario_text("bad", count=2))
    result = pytester.runpytest("-q", "--junitxml", "j.xml")
    result.assert_outcomes(failed=1)
    assert "Captured stdout call" not in result.stdout.str()
    (case,) = ET.parse(pytester.path / "j.xml").iter("testcase")
    assert case.find("system-out") is None
