"""``drasim run --driver-cmd`` with the example driver: the conformance suite and the whole library."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).parent
REPO = HERE.parents[1]


def _drasim_run(env: dict[str, str], *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "drasim", "run", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=timeout,
        check=False,
    )


def _by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in report["results"]}


def test_conformance_suite(
    example_driver_cmd: str, expected: ModuleType, repo_env: dict[str, str], tmp_path: Path
) -> None:
    junit, html, json_path = tmp_path / "c.xml", tmp_path / "c.html", tmp_path / "c.json"
    done = _drasim_run(
        repo_env,
        str(REPO / "scenarios" / "conformance"),
        "--driver-cmd",
        example_driver_cmd,
        "--driver-name",
        "gpu.example.com",
        # expected.py was measured without drasim's proxy; with it more scenarios run (issue 30)
        "--no-proxy",
        "--junit",
        str(junit),
        "--html",
        str(html),
        "--json",
        str(json_path),
    )
    results = _by_name(json.loads(json_path.read_text()))
    bugs = {n: m for n, m in expected.DRIVER_BUGS.items() if n.startswith("conformance-")}
    assert done.returncode == (1 if bugs else 0), done.stdout + done.stderr
    statuses = {name: r["status"] for name, r in results.items()}
    assert statuses == {
        **dict.fromkeys(expected.CONFORMANCE_PASSED, "passed"),
        **dict.fromkeys(expected.CONFORMANCE_SKIPPED, "skipped"),
        **dict.fromkeys(bugs, "failed"),
    }, {n: (r["status"], (r["failure"] or {}).get("message")) for n, r in results.items()}
    for name, reason in expected.CONFORMANCE_SKIPPED.items():
        assert reason in results[name]["skipReason"]
    for name, message in bugs.items():
        assert message in results[name]["failure"]["message"]

    # The JUnit report: the RPC sequence (journal) in system-out, the driver's log in system-err.
    cases = {case.get("name"): case for case in ET.parse(junit).iter("testcase")}
    ran = [n for n, r in results.items() if r["status"] != "skipped"]
    for name in ran:
        out = cases[name].findtext("system-out") or ""
        err = cases[name].findtext("system-err") or ""
        assert "rpc GetInfo gpu.example.com -> OK" in out, name
        assert "rpc NotifyRegistrationStatus gpu.example.com -> OK" in out, name
        assert "draplugin.go" in err, name  # klog lines of the kubeletplugin helper
    round_trip = cases["conformance-prepare-unprepare-round-trip"]
    assert "rpc NodePrepareResources gpu.example.com claims=[default/gpu] -> OK" in (
        round_trip.findtext("system-out") or ""
    )
    assert '"PrepareResourceClaims is called"' in (round_trip.findtext("system-err") or "")

    # The HTML report: one sequence diagram per scenario that ran, and the driver's log.
    page = html.read_text()
    assert page.count('class="diagram"') == len(ran)
    assert "NodePrepareResources" in page
    assert "PrepareResourceClaims is called" in page


def test_whole_library(
    example_driver_cmd: str, expected: ModuleType, repo_env: dict[str, str], tmp_path: Path
) -> None:
    json_path = tmp_path / "lib.json"
    done = _drasim_run(
        repo_env,
        "--driver-cmd", example_driver_cmd, "--driver-name", "gpu.example.com", "-j", "2",
        "--no-proxy",  # expected.py was measured without drasim's proxy (issue 30)
        "--json", str(json_path),
        timeout=1800,
    )  # fmt: skip
    results = _by_name(json.loads(json_path.read_text()))
    assert done.returncode == (1 if expected.DRIVER_BUGS else 0), done.stderr
    bad = {n: r["failure"]["message"] for n, r in results.items() if r["status"] in ("failed", "error")}
    skipped = {n: r["skipReason"] for n, r in results.items() if r["status"] == "skipped"}
    assert set(bad) == set(expected.DRIVER_BUGS), bad
    for name, message in expected.DRIVER_BUGS.items():
        assert message in bad[name], bad[name]
    # Every skip says what the real driver lacks (nothing is skipped without a reason).
    assert skipped
    assert all("real driver lacks capability" in reason for reason in skipped.values()), skipped
    passed = [n for n, r in results.items() if r["status"] == "passed"]
    assert set(expected.CONFORMANCE_PASSED) <= set(passed)
    assert len(passed) + len(skipped) + len(bad) == len(results)
