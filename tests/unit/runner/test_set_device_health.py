"""setDeviceHealth with timeoutSeconds and expectHealth with message, against a real simulated node."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from drasim.report.model import RESULTS
from drasim.runner.drivers import FakeDriverHandle
from drasim.runner.run import run_scenario
from drasim.scenario.common import PluginFault
from drasim.scenario.loader import load_text

HEAD = """
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata:
  name: set-device-health
  description: setDeviceHealth and expectHealth.
spec:
  driver:
    fake: {name: gpu.example.com, health: true, devices: 2}
  claims:
    - {name: gpu}
  steps:
    - allocate: {claim: gpu, devices: [{device: gpu-0}]}
    - startPod: {name: a, claims: [gpu]}
"""


def run(steps: str) -> Any:
    (scenario,) = load_text(HEAD + steps)
    return run_scenario(scenario, results=RESULTS)


def explain(result: Any) -> str:
    failure = result.failure
    return "" if failure is None else f"{failure.message}\n{failure.step_text}"


def sent_timeouts(result: Any, device: str) -> list[str]:
    """healthCheckTimeoutSeconds of ``device`` in each message the fake plugin sent (int64: a JSON string)."""
    found = []
    for event in result.journal:
        if event.get("side") == "plugin" and str(event.get("method", "")).endswith("/NodeWatchResources"):
            for dev in event["response"]["devices"]:
                if dev["device"]["deviceName"] == device:
                    found.append(dev.get("healthCheckTimeoutSeconds", "0"))
    return found


def test_timeout_seconds_is_sent_and_ages_the_report() -> None:
    result = run("""
    - setDeviceHealth: {device: gpu-0, health: Unhealthy, message: ECC errors, timeoutSeconds: 10}
    - expectHealth: {pod: a, claim: gpu, health: Unhealthy, message: ECC errors}
    - advanceClock: 10
    - expectHealth: {pod: a, claim: gpu, health: Unhealthy, messageContains: ECC}
    - advanceClock: 1
    - expectHealth: {pod: a, claim: gpu, health: Unknown, message: ""}
    - setDeviceHealth: {device: gpu-0, health: Unhealthy, message: ECC errors}
    - advanceClock: 11
    - expectHealth: {pod: a, claim: gpu, health: Unhealthy, message: ECC errors}
    - advanceClock: 20
    - expectHealth: {pod: a, claim: gpu, health: Unknown, message: ""}
""")
    assert result.status == "passed", explain(result)
    # The opening list, the report with a 10 s timeout, then the one without (0: kubelet default).
    assert sent_timeouts(result, "gpu-0") == ["0", "10", "0"]


def test_a_new_message_or_timeout_for_the_same_health_is_waited_for() -> None:
    """Re-reporting the current health returns only once the kubelet stored the new report."""
    steps = "".join(
        f"    - setDeviceHealth: {{device: gpu-0, health: Unhealthy, message: r{i}, timeoutSeconds: {i}}}\n"
        f"    - expectHealth: {{pod: a, claim: gpu, health: Unhealthy, message: r{i}}}\n"
        for i in range(1, 21)
    )
    result = run(
        steps + "    - advanceClock: 21\n    - expectHealth: {pod: a, claim: gpu, health: Unknown}\n"
    )
    assert result.status == "passed", explain(result)


def test_the_same_report_again_restarts_the_timeout() -> None:
    result = run("""
    - setDeviceHealth: {device: gpu-0, health: Unhealthy, message: ECC, timeoutSeconds: 10}
    - advanceClock: 6
    - setDeviceHealth: {device: gpu-0, health: Unhealthy, message: ECC, timeoutSeconds: 10}
    - advanceClock: 6
    - expectHealth: {pod: a, claim: gpu, health: Unhealthy, message: ECC}
    - advanceClock: 5
    - expectHealth: {pod: a, claim: gpu, health: Unknown, message: ""}
""")
    assert result.status == "passed", explain(result)


def test_expect_health_message_failure_shows_expected_and_actual() -> None:
    result = run("""
    - setDeviceHealth: {device: gpu-0, health: Unhealthy, message: "ECC errors: 3"}
    - expectHealth: {pod: a, claim: gpu, health: Unhealthy, message: "ECC errors: 4"}
""")
    assert result.status == "failed"
    assert result.failure.message == (
        "expected every resource of allocatedResourcesStatus entry claim:gpu of container ctr in pod "
        "default/a to have message 'ECC errors: 4'; found gpu.example.com/gpu=gpu-0: 'ECC errors: 3'"
    )
    assert result.failure.expected == {"gpu.example.com/gpu=gpu-0": "ECC errors: 4"}
    assert result.failure.actual == {"gpu.example.com/gpu=gpu-0": "ECC errors: 3"}


def test_a_report_the_kubelet_stores_differently_fails_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """A handle that loses the timeout on the way is caught, with what was sent and what arrived."""
    monkeypatch.setattr("drasim.runner.actions.plugins.HEALTH_REPORT_WAIT", 0.2)
    original = FakeDriverHandle.set_health

    def lossy(self: FakeDriverHandle, device: str, health: str, **kwargs: Any) -> None:
        kwargs["timeout_seconds"] = 0
        original(self, device, health, **kwargs)

    monkeypatch.setattr(FakeDriverHandle, "set_health", lossy)
    result = run("    - setDeviceHealth: {device: gpu-0, health: Unhealthy, timeoutSeconds: 10}\n")
    assert result.status == "failed"
    assert result.failure.message.startswith(
        "setDeviceHealth: the kubelet's newest report for node-1/gpu-0 from gpu.example.com differs from "
        "what was sent: expected "
    )
    assert result.failure.expected == {"health": "Unhealthy", "message": "", "timeout": 10.0}
    assert result.failure.actual == {"health": "Unhealthy", "message": "", "timeout": 30.0}


def test_adding_or_clearing_a_fault_leaves_the_drivers_health_alone() -> None:
    """A fault step appends a rule; it no longer rebuilds the behaviour (which reset health)."""
    calls: list[tuple[str, object]] = []
    handle = FakeDriverHandle.__new__(FakeDriverHandle)
    handle._driver = SimpleNamespace(
        set_behaviour=lambda b: calls.append(("set_behaviour", b)),
        add_faults=lambda f: calls.append(("add_faults", f)),
        clear_faults=lambda: calls.append(("clear_faults", None)),
        release_hangs=lambda: calls.append(("release_hangs", None)),
    )
    handle.add_fault(PluginFault(rpc="NodePrepareResources", code="UNAVAILABLE", times=1), 0.01)
    handle.clear_faults()
    assert [name for name, _ in calls] == ["add_faults", "clear_faults", "release_hangs"]
    # The fake plugin gets the scenario's typed rule itself, no dict in its own vocabulary.
    assert calls[0][1] == [PluginFault(rpc="NodePrepareResources", code="UNAVAILABLE", times=1)]


def test_a_kubelet_without_health_streams_fails_the_step_with_the_reason() -> None:
    """Before 1.34 no report can reach the kubelet: the step says why instead of waiting."""
    from drasim.runner.options import RunOptions

    (scenario,) = load_text(HEAD + "    - setDeviceHealth: {device: gpu-0, health: Unhealthy}\n")
    result = run_scenario(scenario, RunOptions(kubelet_version="1.33"), results=RESULTS)
    assert result.status == "failed", explain(result)
    assert result.failure.message == (
        "setDeviceHealth: kubelet 1.33 opens no device-health stream (KEP-4680 streams arrived in 1.34), "
        "so gpu.example.com's Unhealthy for node-1/gpu-0 never reaches it"
    )
