"""What ``drasim init`` writes, run against each real driver as its CI would run it."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from drasim.cli import main

INIT = sys.modules["drasim_test_init_repo"]


def test_the_written_ci_step_runs_against_the_driver(real_driver: Any, tmp_path: Path) -> None:
    """The workflow's test step, limited to the repository's own scenario and the suite's round trip.

    (The whole suite through pytest, with the known bugs in init's conftest.py, is
    test_pytest_route.py.)
    """
    caps = [arg for cap in real_driver.expected.capabilities for arg in ("--capability", cap)]
    argv = ["init", str(tmp_path), "--driver-cmd", real_driver.cmd, "--driver-name", real_driver.driver_name]
    assert main([*argv, *caps]) == 0
    done = INIT.run_tests(tmp_path, "1.37", "-k", "round-trip")
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr
    assert "2 passed" in done.stdout.splitlines()[-1], done.stdout[-3000:]
    cases = {
        c.get("name"): c for c in ET.parse(tmp_path / "drasim-reports" / "pytest-junit.xml").iter("testcase")
    }
    own = cases["gpu-round-trip[kubelet-1.37]"]
    assert own.find("failure") is None
    assert f"rpc NodePrepareResources {real_driver.driver_name}" in (own.findtext("system-out") or "")
    assert real_driver.log_lines[1] in (own.findtext("system-err") or "")
    assert (tmp_path / "drasim-reports" / "drasim-report.html").is_file()
