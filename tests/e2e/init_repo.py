"""Run what ``drasim init`` wrote: the workflow's test command, in the repository it wrote to.

Shared by tests/e2e/test_init.py (the fake plugin as the driver process) and
tests/real_driver/test_init.py (Kubernetes' DRA test driver).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]


def workflow(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((root / ".github" / "workflows" / "drasim.yml").read_text())
    return data


def test_command(root: Path, kubelet: str) -> list[str]:
    """The workflow's pytest step for one matrix cell, as argv (``python`` is this interpreter)."""
    steps = workflow(root)["jobs"]["drasim"]["steps"]
    [run] = [s["run"] for s in steps if "pytest" in str(s.get("run", ""))]
    words = shlex.split(run.replace("${{ matrix.kubelet }}", kubelet))
    assert words[:3] == ["python", "-m", "pytest"], words
    return [sys.executable, *words[1:]]


def run_tests(
    root: Path, kubelet: str, *extra: str, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run the workflow's test step in ``root`` with this checkout's drasim first on the path."""
    path = [str(REPO), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))
    return subprocess.run(
        [*test_command(root, kubelet), *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=timeout,
        check=False,
    )


test_command.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test
