"""``drasim run --driver-cmd`` with each real driver: the whole library (the conformance suite with it).

The library runs once per driver (``library_run``); the tests below check its results, its
JUnit and HTML reports, and pin each driver bug of tests/real_driver/expected.py as a strict
expected failure.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
REPO = HERE.parents[1]
EXPECTED = sys.modules["drasim_real_driver_expected"]
BY_ID = {"test-driver": EXPECTED.TEST_DRIVER, "example-driver": EXPECTED.EXAMPLE_DRIVER}
JOBS = "3"  # scenarios at a time: each mostly waits on its driver process (docs/real-driver.md)


class KnownBugError(AssertionError):
    """The scenario failed with the failure its driver bug gives."""


@dataclass(frozen=True)
class LibraryRun:
    results: dict[str, dict[str, Any]]
    returncode: int
    output: str
    junit: Path
    html: Path


@pytest.fixture(scope="session")
def library_runs(
    repo_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[Any], LibraryRun]:
    """Runs ``drasim run --driver-cmd ...`` of every built-in scenario once per driver, with reports."""
    done_runs: dict[str, LibraryRun] = {}

    def run(real_driver: Any) -> LibraryRun:
        if real_driver.id not in done_runs:
            done_runs[real_driver.id] = _run_library(real_driver, repo_env, tmp_path_factory)
        return done_runs[real_driver.id]

    return run


def _run_library(real_driver: Any, env: dict[str, str], factory: pytest.TempPathFactory) -> LibraryRun:
    """Run the library once per test session, also under xdist (workers share the run's files)."""
    shared = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the directory every worker's base directory is in
    out = shared / f"library-{real_driver.id}"
    out.mkdir(exist_ok=True)
    junit, html, json_path = out / "lib.xml", out / "lib.html", out / "lib.json"
    with open(out / "lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker runs it; the others wait and read its files
        if not (out / "done").is_file():
            done = subprocess.run(
                [
                    sys.executable, "-m", "drasim", "run",
                    "--driver-cmd", real_driver.cmd, "--driver-name", real_driver.driver_name,
                    *real_driver.run_args(), "-j", JOBS,
                    "--junit", str(junit), "--html", str(html), "--json", str(json_path),
                ],
                capture_output=True, text=True, env=env, cwd=REPO, timeout=900, check=False,
            )  # fmt: skip
            (out / "output").write_text(done.stdout + done.stderr)
            (out / "done").write_text(str(done.returncode))
    returncode = int((out / "done").read_text())
    output = (out / "output").read_text()
    assert json_path.is_file(), output[-6000:]
    results = {r["name"]: r for r in json.loads(json_path.read_text())["results"]}
    return LibraryRun(results, returncode, output, junit, html)


@pytest.fixture
def library_run(real_driver: Any, library_runs: Callable[[Any], LibraryRun]) -> LibraryRun:
    return library_runs(real_driver)


def test_library_results(real_driver: Any, library_run: LibraryRun) -> None:
    """Every scenario passes, is skipped for a capability it lacks, or fails with a known bug."""
    exp = real_driver.expected
    results = library_run.results
    assert library_run.returncode == (1 if exp.bugs else 0), library_run.output[-3000:]
    bad = {
        n: (r["failure"] or {}).get("message")
        for n, r in results.items()
        if r["status"] in ("failed", "error")
    }
    assert set(bad) == set(exp.bugs), bad
    skipped = {n: r["skipReason"] for n, r in results.items() if r["status"] == "skipped"}
    assert skipped
    assert all("real driver lacks capability" in reason for reason in skipped.values()), skipped
    if exp.proxy:  # behind drasim's proxy every plugin fault rule runs against the driver
        assert not [n for n, reason in skipped.items() if "capability 'proxy'" in reason], skipped
    conformance = {n: r["status"] for n, r in results.items() if n.startswith("conformance-")}
    assert conformance == {
        **dict.fromkeys(exp.conformance_passed, "passed"),
        **dict.fromkeys(exp.conformance_skipped, "skipped"),
        **dict.fromkeys(exp.conformance_bugs(), "failed"),
    }
    for name, reason in exp.conformance_skipped.items():
        assert reason in results[name]["skipReason"]


def _bug_params() -> list[Any]:
    return [
        pytest.param(
            driver,
            name,
            marks=pytest.mark.xfail(raises=KnownBugError, strict=True, reason=bug.reason),
            id=f"{driver}-{name}",
        )
        for driver, exp in BY_ID.items()
        for name, bug in exp.bugs.items()
    ]


@pytest.mark.parametrize(("driver_id", "scenario"), _bug_params())
def test_known_driver_bug(
    driver_id: str,
    scenario: str,
    real_drivers: Callable[[str], Any],
    library_runs: Callable[[Any], LibraryRun],
) -> None:
    """A driver bug of docs/real-driver.md: the scenario fails as written up until the driver is fixed."""
    real_driver = real_drivers(driver_id)
    result = library_runs(real_driver).results[scenario]
    bug = real_driver.expected.bugs[scenario]
    if result["status"] == "failed":
        message = result["failure"]["message"]
        assert bug.message in message, f"{scenario} fails otherwise than its known bug: {message}"
        raise KnownBugError(message)
    assert result["status"] == "passed", result


def test_reports_carry_the_rpc_sequence_and_the_driver_log(real_driver: Any, library_run: LibraryRun) -> None:
    """JUnit: the journal (RPC sequence) in system-out, the driver's log in system-err; HTML: diagrams."""
    name = real_driver.driver_name
    results = library_run.results
    cases = {case.get("name"): case for case in ET.parse(library_run.junit).iter("testcase")}
    ran = [n for n, r in results.items() if r["status"] != "skipped" and n.startswith("conformance-")]
    for case_name in ran:
        out = cases[case_name].findtext("system-out") or ""
        err = cases[case_name].findtext("system-err") or ""
        assert f"rpc GetInfo {name} -> OK" in out, case_name
        assert f"rpc NotifyRegistrationStatus {name} -> OK" in out, case_name
        assert real_driver.log_lines[0] in err, case_name
    round_trip = cases["conformance-prepare-unprepare-round-trip"]
    assert f"rpc NodePrepareResources {name} claims=[default/gpu] -> OK" in (
        round_trip.findtext("system-out") or ""
    )
    assert real_driver.log_lines[1] in (round_trip.findtext("system-err") or "")
    page = library_run.html.read_text()
    assert page.count('class="diagram"') == sum(r["status"] != "skipped" for r in results.values())
    assert real_driver.log_lines[1].strip('"') in page  # HTML-escaped quotes
