"""The pytest route with the example driver: ``pytest --drasim-suite conformance --drasim-driver-cmd``."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType


def test_conformance_suite_through_pytest(
    example_driver_cmd: str, expected: ModuleType, repo_env: dict[str, str], tmp_path: Path
) -> None:
    """What a driver author types; pytest's own JUnit and drasim's reports both checked."""
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
            "--drasim-suite", "conformance",
            "--drasim-driver-cmd", example_driver_cmd,
            "--drasim-driver-name", "gpu.example.com",
            "--drasim-no-proxy",  # expected.py was measured without drasim's proxy (issue 30)
            "--drasim-report-dir", "out",
            "--junitxml", "pytest-junit.xml",
            "-o", "junit_logging=all",
        ],
        capture_output=True,
        text=True,
        env=repo_env,
        cwd=tmp_path,
        timeout=900,
        check=False,
    )  # fmt: skip
    bugs = {n: m for n, m in expected.DRIVER_BUGS.items() if n.startswith("conformance-")}
    summary = done.stdout.strip().splitlines()[-1]
    counts = f"{len(bugs)} failed, {len(expected.CONFORMANCE_PASSED)} passed, 2 skipped"
    assert counts in summary, done.stdout[-5000:] + done.stderr
    for reason in expected.CONFORMANCE_SKIPPED.values():
        assert reason in done.stdout
    # A failure is the scenario's text (failing step, journal, driver log), not a traceback.
    for name, message in bugs.items():
        assert f"FAILED {name}" in done.stdout or name in done.stdout
        assert message in done.stdout
    assert "Traceback" not in done.stdout

    # pytest's JUnit: each scenario's result travels in its properties; with junit_logging
    # the driver's log and the RPC sequence are the test case's output.
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "pytest-junit.xml").iter("testcase")}
    assert set(expected.CONFORMANCE_PASSED) | set(expected.CONFORMANCE_SKIPPED) | set(bugs) == set(cases)
    for name in expected.CONFORMANCE_PASSED:
        out, err = cases[name].findtext("system-out") or "", cases[name].findtext("system-err") or ""
        assert "rpc NotifyRegistrationStatus gpu.example.com -> OK" in out, name
        assert "draplugin.go" in err, name
    for name in bugs:
        assert "Driver stderr" in (cases[name].findtext("failure") or "")

    # drasim's own reports from the same run.
    report = json.loads((tmp_path / "out" / "drasim-report.json").read_text())
    results = {r["name"]: r for r in report["results"]}
    assert report["environment"]["backend"] == "http"
    for name in expected.CONFORMANCE_PASSED:
        rpcs = [e["method"].rsplit("/", 1)[-1] for e in results[name]["journal"] if e["kind"] == "rpc"]
        assert rpcs[:2] == ["GetInfo", "NotifyRegistrationStatus"], (name, rpcs)
        assert "draplugin.go" in results[name]["stderr"]
    junit = {c.get("name"): c for c in ET.parse(tmp_path / "out" / "drasim-report.xml").iter("testcase")}
    round_trip = junit["conformance-prepare-unprepare-round-trip"]
    assert "rpc NodePrepareResources gpu.example.com" in (round_trip.findtext("system-out") or "")
    assert "PrepareResourceClaims is called" in (round_trip.findtext("system-err") or "")
    page = (tmp_path / "out" / "drasim-report.html").read_text()
    assert page.count('class="diagram"') == len(expected.CONFORMANCE_PASSED) + len(bugs)
    assert "PrepareResourceClaims is called" in page
