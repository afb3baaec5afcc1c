"""A scenario that outlasts its time limit is stopped, fails at the step it was on, and the run goes on.

Stopping means: the step's waits end, the kubelet and every driver (processes included) stop,
the workspace is removed, and the next scenario runs normally.
"""

from __future__ import annotations

import os
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from drasim.cli import main
from drasim.journal import describe_event
from drasim.report.model import RESULTS, ScenarioResult
from drasim.runner import nodeclock
from drasim.runner import session as session_module
from drasim.runner import world as world_module
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario, run_scenarios
from drasim.runner.session import ABORT_GRACE
from drasim.runner.workspace import Workspace, create_workspace
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


SETUP_BOUND = 120.0
"""Real seconds a test waits for a node's set-up before the time limit counts anyway."""


class LimitGate:
    """Makes one scenario's time limit count from the start of one of its steps.

    The product's limit includes the node's set-up (docs/scenarios.md#limits), which takes
    0.02 s on an idle machine and more than 1 s on a loaded 2-core one. Tests that mean to
    stop a scenario in a given step use limits of about a second, so a slow set-up would use
    up the limit before that step started. Through this gate the limit's clock
    (``StepSession.within``'s join of its worker thread) starts when ``step`` starts in
    ``scenario``; for other scenarios (meant to pass) it starts when their work has ended, so
    their limit is not reached however loaded the machine. Everything after the step started
    (the abort, the grace, the teardown, the report) is the product's own timing.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, scenario: str, step: str) -> None:
        self.opened_at: float | None = None
        """When ``step`` started in ``scenario`` (``time.monotonic()``)."""
        real_run_action = session_module.run_action
        gate = self

        class Worker(threading.Thread):
            def __init__(self, *, target: Callable[[], None], name: str, daemon: bool) -> None:
                def work() -> None:
                    try:
                        target()
                    finally:
                        self.limit_starts.set()

                super().__init__(target=work, name=name, daemon=daemon)
                self.limit_starts = threading.Event()
                self.waits_for_step = name == f"drasim-scenario-{scenario}"
                self.limit_joined = False

            def join(self, timeout: float | None = None) -> None:
                if not self.limit_joined:  # the first join is the time limit's
                    self.limit_joined = True
                    started = self.limit_starts.wait(SETUP_BOUND)
                    assert started, f"{self.name}: step {step} not reached within {SETUP_BOUND:g}s"
                super().join(timeout)

        def run_action(world: Any, name: str, *args: Any) -> Any:
            thread = threading.current_thread()
            if isinstance(thread, Worker) and thread.waits_for_step and name == step:
                if gate.opened_at is None:
                    gate.opened_at = time.monotonic()
                thread.limit_starts.set()
            return real_run_action(world, name, *args)

        monkeypatch.setattr(session_module, "run_action", run_action)
        monkeypatch.setattr(session_module, "threading", _Threading(Worker))


class _Threading:
    """``threading`` as ``drasim.runner.session`` sees it under a :class:`LimitGate`."""

    def __init__(self, thread: type[threading.Thread]) -> None:
        self.Thread = thread

    def __getattr__(self, name: str) -> Any:
        return getattr(threading, name)


@pytest.fixture
def limit_from_step(monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], LimitGate]:
    return lambda scenario, step: LimitGate(monkeypatch, scenario, step)


def explain(result: ScenarioResult) -> str:
    """What a failed assertion on ``result`` prints: its status, failure and journal tail."""
    lines = [f"scenario {result.name}: {result.status}"]
    if result.failure is not None:
        failure = result.failure
        lines.append(f"  at step {failure.step_index} ({failure.step_text}): {failure.message}")
    lines += ["  " + describe_event(e) for e in result.journal[-25:]]
    return "\n".join(lines)


def test_a_hung_step_fails_at_its_step_and_the_next_scenario_runs(
    workspaces: list[Path], limit_from_step: Callable[[str, str], LimitGate]
) -> None:
    gate = limit_from_step("hangs", "startPod")
    scenarios = load_text(HANGS + "---\n" + PASSES, "s.yaml")
    options = RunOptions(scenario_timeout=1.0)
    started = time.monotonic()
    results = run_scenarios(scenarios, options, results=RESULTS)
    elapsed = time.monotonic() - started
    hung, passed = results
    assert hung.status == "failed", explain(hung)
    assert hung.failure is not None
    assert hung.failure.message.startswith(
        "the scenario did not finish within its time limit of 1s (--scenario-timeout); "
        "it was stopped during step 3 (startPod)"
    ), explain(hung)
    assert hung.failure.step_index == 3  # numbered from 1, as in the message and the journal
    assert hung.failure.step_text == "startPod {name: a, claims: [gpu]}  (s.yaml:11:7)"
    assert hung.failure.reproduce == "drasim run s.yaml -k hangs --scenario-timeout 1"
    assert gate.opened_at is not None
    setup = gate.opened_at - started  # the part of the limit the gate kept out
    assert 1.0 <= hung.duration < setup + 1.0 + ABORT_GRACE, (setup, explain(hung))
    assert passed.status == "passed", explain(passed)
    assert elapsed < setup + 1.0 + ABORT_GRACE + 5, (setup, elapsed)
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
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limit_from_step: Callable[[str, str], LimitGate]
) -> None:
    limit_from_step("hangs", "startPod")
    (tmp_path / "s.yaml").write_text(HANGS + "---\n" + PASSES)
    code = main(["run", str(tmp_path / "s.yaml"), "--scenario-timeout", "1"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "time limit of 1s (--scenario-timeout); it was stopped during step 3 (startPod)" in out, out
    assert "1 passed, 1 failed" in out, out


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_drasim_run_refuses_a_bad_limit(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--scenario-timeout", value]) == 2
    assert "--scenario-timeout must be a number of seconds (0 = no limit)" in capsys.readouterr().err


def test_drasim_run_bounds_the_time_scale_like_scenarios_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--time-scale", "11"]) == 2
    assert "--time-scale must be at most 10, got '11'" in capsys.readouterr().err


def test_the_clock_refuses_unbounded_timer_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nodeclock, "MAX_TIMER_RUNS", 30)
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


def test_a_step_that_ignores_the_abort_is_left_behind_and_said_so(
    monkeypatch: pytest.MonkeyPatch, limit_from_step: Callable[[str, str], LimitGate]
) -> None:
    release = threading.Event()

    def stubborn(*args: Any) -> None:
        release.wait(120)  # ignores the node being stopped

    monkeypatch.setattr(session_module, "ABORT_GRACE", 0.2)
    monkeypatch.setattr(session_module, "run_action", stubborn)
    gate = limit_from_step("passes", "startPod")  # wraps stubborn
    (scenario,) = load_text(PASSES, "s.yaml")
    try:
        result = run_scenario(scenario, RunOptions(scenario_timeout=0.5), results=RESULTS)
        returned = time.monotonic()
    finally:
        release.set()
    assert result.status == "failed", explain(result)
    assert result.failure is not None
    assert result.failure.message.endswith(
        "it was stopped during step 1 (startPod) "
        "(that step still had not returned 0.2s after the node was stopped)"
    ), explain(result)
    # It returned after the limit and the grace, not when the step did (120 s, or never).
    assert gate.opened_at is not None
    assert 0.5 + 0.2 <= returned - gate.opened_at < 60, explain(result)
