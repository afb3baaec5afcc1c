"""``drasim explore --driver-cmd`` against Kubernetes' DRA test driver (docs/explore.md).

The shrunk sequence of docs/explore.md's finding is run directly (no generation, so the test
is quick and deterministic), its reproducer written and replayed through ``drasim run
--driver-cmd``; a short generated exploration of steps the driver handles holds every invariant.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from drasim.explore import ExploreConfig, Trace, run_choices
from drasim.explore.generator import rule_index
from drasim.explore.reproducer import write_reproducer
from drasim.explore.violations import InvariantViolation

REPO = Path(__file__).parents[2]


def choice(name: str) -> tuple[int, int, int, int]:
    return (rule_index(name), 0, 0, 0)


@pytest.fixture
def test_driver(real_drivers: Callable[[str], Any]) -> Any:
    return real_drivers("test-driver")


def test_a_restart_forgets_prepared_claims(
    test_driver: Any, repo_env: dict[str, str], tmp_path: Path
) -> None:
    """Test driver bug 2 as exploration finds it: its reproducer fails under drasim run."""
    config = ExploreConfig(seed=1, driver_cmd=test_driver.cmd)
    with pytest.raises(InvariantViolation) as info:
        run_choices([choice("startPod"), choice("restartPlugin")], config.run_options())
    violation = info.value.violation
    assert violation.invariant == "all-released"
    assert violation.data["static_specs"] == 0
    [left] = violation.data["cdi_specs"]
    assert left.startswith("gpu.example.com-")
    assert left.endswith("-req-0.json")

    trace = _trace_of([choice("startPod"), choice("restartPlugin")], config)
    repro = write_reproducer(trace, tmp_path, config)
    assert repro.fails_with_bugs is True  # replayed with the driver: fails
    text = repro.path.read_text()
    assert "# Replay with: drasim run <this file> --driver-cmd " in text
    assert "- expectCdiSpecs: {count: 0}" in text
    done = subprocess.run(
        [sys.executable, "-m", "drasim", "run", str(repro.path), "--driver-cmd", test_driver.cmd],
        capture_output=True, text=True, env=repo_env, cwd=REPO, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "expected 0 spec files; found 1" in done.stdout


def _trace_of(choices: list[tuple[int, int, int, int]], config: ExploreConfig) -> Trace:
    trace = Trace(choices=list(choices))
    with pytest.raises(InvariantViolation):
        run_choices(choices, config.run_options(), trace=trace)
    return trace


def test_pods_and_claims_without_restarts_hold_every_invariant(test_driver: Any) -> None:
    """Pods sharing claims, template claims, stops and force deletions: the test driver is fine there."""
    config = ExploreConfig(driver_cmd=test_driver.cmd)
    choices = [
        choice("create"),
        choice("startPod"),
        choice("startPod"),
        choice("stopPod"),
        choice("recreateSandbox"),
        choice("forceDeletePod"),
        choice("reconcile"),
    ]
    trace = run_choices(choices, config.run_options())
    assert trace.violation is None
    names = [r.step.name for r in trace.records]
    assert names[:3] == ["create", "startPod", "startPod"]
    assert "restartKubelet" not in names
    assert "fault" not in names
