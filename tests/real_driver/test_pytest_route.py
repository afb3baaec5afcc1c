"""The pytest route with each real driver: ``pytest --drasim-suite conformance --drasim-driver-cmd``.

As a driver author would run it: the driver's known bugs are strict expected failures, listed
in the conftest.py ``drasim init`` writes, so the run passes and a fixed bug shows up as
XPASS(strict).
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from drasim.commands.init_cmd import CONFTEST


def test_conformance_suite_through_pytest(real_driver: Any, repo_env: dict[str, str], tmp_path: Path) -> None:
    """What a driver author types; pytest's own JUnit and drasim's reports both checked."""
    exp = real_driver.expected
    bugs = exp.conformance_bugs()
    # drasim init's conftest.py, with the driver's known bugs listed as its author would.
    known = f"KNOWN_BUGS: dict[str, str] = { ({name: bug.reason for name, bug in bugs.items()})!r}\n"
    start = CONFTEST.index("KNOWN_BUGS: dict[str, str] = {")
    end = CONFTEST.index("}\n", start) + 2
    (tmp_path / "conftest.py").write_text(CONFTEST[:start] + known + CONFTEST[end:], encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rsxX",
            "--drasim-suite", "conformance",
            "--drasim-driver-cmd", real_driver.cmd,
            "--drasim-driver-name", real_driver.driver_name,
            *real_driver.pytest_args(),
            "--drasim-report-dir", "out",
            "--junitxml", "pytest-junit.xml",
            "-o", "junit_logging=all",
        ],
        capture_output=True, text=True, env=repo_env, cwd=tmp_path, timeout=900, check=False,
    )  # fmt: skip
    summary = done.stdout.strip().splitlines()[-1]
    counted = {"passed": exp.conformance_passed, "skipped": exp.conformance_skipped, "xfailed": bugs}
    counts = ", ".join(f"{len(names)} {what}" for what, names in counted.items() if names)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr
    assert counts in summary, done.stdout[-5000:] + done.stderr
    for reason in exp.conformance_skipped.values():
        assert reason in done.stdout
    for name, bug in bugs.items():
        assert f"::{name} - {bug.reason[:40]}" in done.stdout  # the XFAIL line, with its reason
    assert "Traceback" not in done.stdout

    # pytest's JUnit: no drasim properties; with junit_logging the driver's log and the RPC
    # sequence are the test case's output (docs/pytest-plugin.md).
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "pytest-junit.xml").iter("testcase")}
    assert set(exp.conformance_passed) | set(exp.conformance_skipped) | set(bugs) == set(cases)
    for name in exp.conformance_passed:
        out, err = cases[name].findtext("system-out") or "", cases[name].findtext("system-err") or ""
        assert f"rpc NotifyRegistrationStatus {real_driver.driver_name} -> OK" in out, name
        assert real_driver.log_lines[0] in err, name
    for name in bugs:
        assert cases[name].find("skipped") is not None  # pytest's JUnit writes an xfail as skipped
    assert not [p for c in cases.values() for p in c.iter("property")]

    # drasim's own reports from the same run.
    report = json.loads((tmp_path / "out" / "drasim-report.json").read_text())
    results = {r["name"]: r for r in report["results"]}
    assert report["environment"]["backend"] == "http"
    for name in exp.conformance_passed:
        journal = [e for e in results[name]["journal"] if e["kind"] == "rpc"]
        # The kubelet's side; behind drasim's proxy the proxy journals the driver's side too.
        rpcs = [e["method"].rsplit("/", 1)[-1] for e in journal if e.get("side") == "kubelet"]
        # (a health stream the kubelet opens on registering may come before the notification)
        assert [m for m in rpcs if m != "NodeWatchResources"][:2] == ["GetInfo", "NotifyRegistrationStatus"]
        assert any(e.get("via") == "proxy" for e in journal) == exp.proxy, name
        assert real_driver.log_lines[0] in results[name]["stderr"]
    for name, bug in bugs.items():
        assert results[name]["status"] == "failed"
        assert bug.message in results[name]["failure"]["message"]
    junit = {c.get("name"): c for c in ET.parse(tmp_path / "out" / "drasim-report.xml").iter("testcase")}
    round_trip = junit["conformance-prepare-unprepare-round-trip"]
    assert f"rpc NodePrepareResources {real_driver.driver_name}" in (round_trip.findtext("system-out") or "")
    assert real_driver.log_lines[1] in (round_trip.findtext("system-err") or "")
    page = (tmp_path / "out" / "drasim-report.html").read_text()
    assert page.count('class="diagram"') == len(exp.conformance_passed) + len(bugs)
