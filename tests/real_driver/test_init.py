"""What ``drasim init`` writes, run against each real driver as its CI would run it."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from drasim.cli import main

INIT = sys.modules["drasim_test_init_repo"]


def test_the_written_ci_step_runs_the_suite_and_the_example(real_driver: Any, tmp_path: Path) -> None:
    exp = real_driver.expected
    caps = [arg for cap in exp.capabilities for arg in ("--capability", cap)]
    argv = ["init", str(tmp_path), "--driver-cmd", real_driver.cmd, "--driver-name", real_driver.driver_name]
    assert main([*argv, *caps]) == 0
    # As the driver's author would: its known bugs into the written conftest.py.
    bugs = {name: bug.reason for name, bug in exp.conformance_bugs().items()}
    conftest = tmp_path / "conftest.py"
    text = conftest.read_text()
    start = text.index("KNOWN_BUGS: dict[str, str] = {")
    end = text.index("}\n", start) + 2
    conftest.write_text(text[:start] + f"KNOWN_BUGS: dict[str, str] = {bugs!r}\n" + text[end:])

    done = INIT.run_tests(tmp_path, "1.37")
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr
    passed = len(exp.conformance_passed) + 1  # and scenarios/gpu-round-trip.yaml
    counts = f"{passed} passed, {len(exp.conformance_skipped)} skipped, {len(bugs)} xfailed"
    assert counts in done.stdout.splitlines()[-1], done.stdout[-3000:]
    cases = {
        c.get("name"): c for c in ET.parse(tmp_path / "drasim-reports" / "pytest-junit.xml").iter("testcase")
    }
    own = cases["gpu-round-trip[kubelet-1.37]"]
    assert own.find("failure") is None
    assert f"rpc NodePrepareResources {real_driver.driver_name}" in (own.findtext("system-out") or "")
    assert (tmp_path / "drasim-reports" / "drasim-report.html").is_file()
