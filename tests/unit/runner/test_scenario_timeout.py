"""A scenario that outlasts its time limit is stopped, fails at the step it was on, and the run goes on.

Stopping means: the step's waits end, the kubelet and every driver (processes included) stop,
the workspace is removed, and the next scenario runs normally.
"""

from __future__ import annotations

import os
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from drasim.cli import main
from drasim.report.model import RESULTS
from drasim.runner import podworker
from drasim.runner import session as session_module
from drasim.runner import world as world_module
from drasim.runner.run import run_scenario, run_scenarios
from drasim.runner.session import ABORT_GRACE
from drasim.runner.workspace import Workspace, create_workspace
from drasim.runner.world import RunOptions
from drasim.scenario import load_text

HANGS = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: hangs, description: the driver never answers and the kubelet waits an hour}
spec:
  driver: {fake: {name: gpu.example.com}}
  kubelet: {timeScale: 1, timers: {callTimeout: 3600}}
  claims: [{name: gpu}]
  steps:
    - expectResourceSlices: {count: 1}
    - fault: {plugin: {rpc: NodePrepareResources, hang: true}}
    - startPod: {name: a, claims: [gpu]}
    - expectPod: {pod: a, phase: Running}
"""

PASSES = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: passes, description: prepare one claim}
spec:
  driver: {fake: {name: gpu.example.com}}
  claims: [{name: gpu}]
  steps:
    - startPod: {name: a, claims: [gpu]}
    - expectCalls: {NodePrepareResources: 1}
"""

NEVER_REGISTERS = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: never-registers, description: a driver process that never creates its sockets}
spec:
  driver:
    command: {name: gpu.example.com, args: [sleep, "300"], startTimeout: 600}
  steps:
    - reconcile: {}
"""


@pytest.fixture
def workspaces(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The root of every workspace the runner creates from now on."""
    roots: list[Path] = []

    def create(*args: Any, **kwargs: Any) -> Workspace:
        workspace = create_workspace(*args, **kwargs)
        roots.append(workspace.root)
        return workspace

    monkeypatch.setattr(world_module, "create_workspace", create)
    return roots


def test_a_hung_step_fails_at_its_step_and_the_next_scenario_runs(workspaces: list[Path]) -> None:
    scenarios = load_text(HANGS + "---\n" + PASSES, "s.yaml")
    options = RunOptions(scenario_timeout=1.0)
    started = time.monotonic()
    results = run_scenarios(scenarios, options, results=RESULTS)
    elapsed = time.monotonic() - started
    hung, passed = results
    assert hung.status == "failed"
    assert hung.failure is not None
    assert hung.failure.message.startswith(
        "the scenario did not finish within its time limit of 1s (--scenario-timeout); "
        "it was stopped during step 3 (startPod)"
    )
    assert hung.failure.step_index == 3  # numbered from 1, as in the message and the journal
    assert hung.failure.step_text == "startPod {name: a, claims: [gpu]}  (s.yaml:11:7)"
    assert hung.failure.reproduce == "drasim run s.yaml -k hangs --scenario-timeout 1"
    assert 1.0 <= hung.duration < 1.0 + ABORT_GRACE
    assert passed.status == "passed", passed.failure
    assert elapsed < 1.0 + ABORT_GRACE + 5
    assert len(workspaces) == 2
    assert not any(root.exists() for root in workspaces)


def test_a_limit_that_is_not_reached_changes_nothing(workspaces: list[Path]) -> None:
    (scenario,) = load_text(PASSES, "s.yaml")
    for limit in (None, 60.0):
        result = run_scenario(scenario, RunOptions(scenario_timeout=limit), results=RESULTS)
        assert result.status == "passed", result.failure
        assert any(e["kind"] == "rpc" for e in result.journal)
    assert len(workspaces) == 2
    assert not any(root.exists() for root in workspaces)


def test_a_limit_reached_while_setting_up_stops_the_driver_process(workspaces: list[Path]) -> None:
    (scenario,) = load_text(NEVER_REGISTERS, "s.yaml")
    result = run_scenario(scenario, RunOptions(scenario_timeout=1.0), results=RESULTS)
    assert result.status == "failed"
    assert result.failure is not None
    assert result.failure.message == (
        "the scenario did not finish within its time limit of 1s (--scenario-timeout); "
        "it was stopped while setting up the node (drivers, kubelet, objects)"
    )
    assert result.failure.step_index is None
    pids = [
        e["pid"] for e in result.journal if e["kind"] == "plugin-process" and e.get("action") == "started"
    ]
    assert len(pids) == 1
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)
    assert len(workspaces) == 1
    assert not workspaces[0].exists()


def test_drasim_run_reports_the_timeout_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "s.yaml").write_text(HANGS + "---\n" + PASSES)
    code = main(["run", str(tmp_path / "s.yaml"), "--scenario-timeout", "1"])
    out = capsys.readouterr().out
    assert code == 1
    assert "time limit of 1s (--scenario-timeout); it was stopped during step 3 (startPod)" in out
    assert "1 passed, 1 failed" in out


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_drasim_run_refuses_a_bad_limit(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--scenario-timeout", value]) == 2
    assert "--scenario-timeout must be a number of seconds (0 = no limit)" in capsys.readouterr().err


def test_drasim_run_bounds_the_time_scale_like_scenarios_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--time-scale", "11"]) == 2
    assert "--time-scale must be positive and at most 10, got 11.0" in capsys.readouterr().err


def test_the_clock_refuses_unbounded_timer_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(podworker, "MAX_TIMER_RUNS", 30)
    text = textwrap.dedent(
        """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {name: busy-clock, description: a failing pod retried every second}
        spec:
          driver: {fake: {name: gpu.example.com}}
          kubelet: {timers: {reconcilePeriod: 1, resyncInterval: 1, retryJitter: 0}}
          claims: [{name: gpu}]
          steps:
            - fault: {plugin: {rpc: NodePrepareResources, code: INTERNAL}}
            - startPod: {name: a, claims: [gpu], expectError: INTERNAL}
            - advanceClock: 3600
        """
    )
    (scenario,) = load_text(text, "s.yaml")
    result = run_scenario(scenario, results=RESULTS)
    assert result.status == "error"
    assert result.failure is not None
    assert result.failure.message == (
        "the nominal clock fired more than 30 reconcile passes and pod retries in this scenario "
        "(reconcile passes every 1s, pod retries after 10s / 1s): "
        "advance the clock less or use longer timer periods"
    )
    assert result.failure.step_index == 3  # advanceClock, the third step


def test_a_step_that_ignores_the_abort_is_left_behind_and_said_so(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def stubborn(*args: Any) -> None:
        release.wait(30)  # ignores the node being stopped

    monkeypatch.setattr(session_module, "ABORT_GRACE", 0.2)
    monkeypatch.setattr(session_module, "run_action", stubborn)
    (scenario,) = load_text(PASSES, "s.yaml")
    try:
        started = time.monotonic()
        result = run_scenario(scenario, RunOptions(scenario_timeout=0.5), results=RESULTS)
        assert time.monotonic() - started < 5
    finally:
        release.set()
    assert result.status == "failed"
    assert result.failure is not None
    assert result.failure.message.endswith(
        "it was stopped during step 1 (startPod) "
        "(that step still had not returned 0.2s after the node was stopped)"
    )
