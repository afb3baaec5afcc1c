"""The pod worker's fidelity (retries, deletion, reconcile) and the fault harness, on a simulated node."""

from __future__ import annotations

from typing import Any

from drasim.journal import describe_event
from drasim.report.model import RESULTS
from drasim.runner.run import run_scenario
from drasim.scenario.loader import load_text

HEAD = """
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata:
  name: pod-worker
  description: Pod worker behaviour.
spec:
  driver:
    fake: {name: gpu.example.com, devices: %(devices)s}
  kubelet: {timers: {retryJitter: %(jitter)s}}
  claims:
    - {name: gpu}
  steps:
"""


def run(steps: str, *, devices: str = "2", jitter: float = 1.0) -> Any:
    (scenario,) = load_text(HEAD % {"devices": devices, "jitter": jitter} + steps)
    return run_scenario(scenario, results=RESULTS)


def explain(result: Any) -> str:
    """The failing step, its message and the journal's last events (calls with codes and durations)."""
    failure = result.failure
    if failure is None:
        return ""
    tail = "\n".join("  " + describe_event(e) for e in result.journal[-30:])
    return f"step {failure.step_index}: {failure.step_text}\n{failure.message}\njournal tail:\n{tail}"


def calls(result: Any, rpc: str) -> int:
    return sum(
        1
        for e in result.journal
        if e.get("kind") == "rpc" and e.get("side") != "plugin" and str(e.get("method", "")).endswith(rpc)
    )


def test_failed_unprepare_is_retried_at_the_start_of_the_backoff_window_with_jitter_0() -> None:
    result = run(
        """
    - startPod: {name: a, claims: [gpu]}
    - fault: {plugin: {rpc: NodeUnprepareResources, code: UNAVAILABLE, times: 1}}
    - stopPod: {pod: a, expectError: Unavailable}
    - advanceClock: 9.99
    - expectCalls: {NodeUnprepareResources: 1}
    - advanceClock: 0.01
    - expectCalls: {NodeUnprepareResources: 2}
    - expectPod: {pod: a, phase: Succeeded}
""",
        jitter=0,
    )
    assert result.status == "passed", explain(result)


def test_failed_prepare_waits_for_the_resync_not_the_backoff() -> None:
    result = run(
        """
    - fault: {plugin: {rpc: NodePrepareResources, code: UNAVAILABLE, times: 1}}
    - startPod: {name: a, claims: [gpu], expectError: Unavailable}
    - advanceClock: 59.9
    - expectCalls: {NodePrepareResources: 1}
    - advanceClock: 0.1
    - expectCalls: {NodePrepareResources: 2}
    - expectPod: {pod: a, phase: Running}
""",
        jitter=0,
    )
    assert result.status == "passed", explain(result)


def test_reconcile_unprepares_a_force_deleted_pod_whose_unprepare_fails() -> None:
    """The pod left the pod manager: it is inactive, so reconcile unprepares it too."""
    result = run("""
    - startPod: {name: a, claims: [gpu]}
    - fault: {plugin: {rpc: NodeUnprepareResources, code: UNAVAILABLE, times: 1}}
    - forceDeletePod: {pod: a, expectError: Unavailable}
    - expectPod: {pod: a, phase: Terminating, deleting: false}
    - reconcile: {}
    - expectCalls: {NodeUnprepareResources: 2}
    - expectCheckpoint: {entries: 0}
    - advanceClock: 15
    - expectPod: {pod: a, phase: Gone}
    - expectCalls: {NodeUnprepareResources: 2}
""")
    assert result.status == "passed", explain(result)


def test_a_restarted_kubelet_forgets_a_force_deleted_pod_it_was_terminating() -> None:
    result = run("""
    - startPod: {name: a, claims: [gpu]}
    - fault: {plugin: {rpc: NodeUnprepareResources, code: UNAVAILABLE, times: 1}}
    - forceDeletePod: {pod: a, expectError: Unavailable}
    - restartKubelet: {}
    - expectPod: {pod: a, phase: Gone}
    - expectCalls: {NodeUnprepareResources: 1}
    - expectMightNeedUnprepare: {a: true}
    - advanceClock: 60
    - expectCalls: {NodeUnprepareResources: 2}
    - expectCheckpoint: {entries: 0}
""")
    assert result.status == "passed", explain(result)


def test_graceful_delete_of_a_stopped_pod_while_the_kubelet_is_down_waits_for_the_kubelet() -> None:
    result = run("""
    - startPod: {name: a, claims: [gpu]}
    - stopPod: a
    - stopKubelet: {}
    - deletePod: a
    - expectPod: {pod: a, phase: Succeeded, deleting: true}
    - startKubelet: {}
    - expectPod: {pod: a, phase: Gone, deleting: false}
    - expectCalls: {NodeUnprepareResources: 1}
""")
    assert result.status == "passed", explain(result)


def test_a_pending_pod_deleted_while_the_kubelet_is_down_is_never_prepared() -> None:
    result = run("""
    - stopKubelet: {}
    - startPod: {name: a, claims: [gpu]}
    - deletePod: a
    - startKubelet: {}
    - expectPod: {pod: a, phase: Gone}
    - expectCalls: {NodePrepareResources: 0, NodeUnprepareResources: 0}
""")
    assert result.status == "passed", explain(result)


def test_a_fault_step_does_not_rearm_used_up_rules() -> None:
    result = run("""
    - fault: {plugin: {rpc: NodePrepareResources, code: UNAVAILABLE, times: 1}}
    - startPod: {name: a, claims: [gpu], expectError: Unavailable}
    - fault: {plugin: {rpc: NodeUnprepareResources, code: INTERNAL, times: 1}}
    - syncPod: a
    - expectPod: {pod: a, phase: Running}
""")
    assert result.status == "passed", explain(result)


def test_only_the_first_matching_rule_applies() -> None:
    result = run("""
    - fault: {plugin: {rpc: NodePrepareResources, code: UNAVAILABLE, times: 1}}
    - fault: {plugin: {rpc: NodePrepareResources, code: INTERNAL, times: 1}}
    - startPod: {name: a, claims: [gpu], expectError: Unavailable}
    - syncPod: {pod: a, expectError: Internal}
    - syncPod: a
    - expectPod: {pod: a, phase: Running}
""")
    assert result.status == "passed", explain(result)


def test_fake_driver_with_named_devices() -> None:
    result = run(
        """
    - expectResourceSlices: {driver: gpu.example.com, count: 1, devices: 2}
    - allocate: {claim: gpu, devices: [{device: gpu-b}]}
    - startPod: {name: a, claims: [gpu]}
    - expectCdiDevices: {pod: a, ids: [gpu.example.com/gpu=gpu-b]}
""",
        devices="[gpu-a, gpu-b]",
    )
    assert result.status == "passed", explain(result)


def test_call_counts_may_be_ranges() -> None:
    result = run("""
    - startPod: {name: a, claims: [gpu]}
    - expectCalls: {NodePrepareResources: {atLeast: 1}, NodeUnprepareResources: {atMost: 0}}
    - expectCalls: {NodePrepareResources: {atLeast: 1, atMost: 1}, GetInfo: {atLeast: 1}}
""")
    assert result.status == "passed", explain(result)
    failed = run("""
    - startPod: {name: a, claims: [gpu]}
    - expectCalls: {NodePrepareResources: {atLeast: 2}}
""")
    assert failed.status == "failed"
    assert failed.failure.message.startswith("expected at least 2 NodePrepareResources calls")
    assert failed.failure.expected == {"NodePrepareResources": "at least 2"}


def test_slices_unchanged_since_a_mark() -> None:
    kept = run("""
    - mark: m
    - restartPlugin: {downtime: 5}
    - expectResourceSlices: {unchangedSince: m}
""")
    assert kept.status == "passed", explain(kept)
    wiped = run("""
    - mark: m
    - restartKubelet: {}
    - expectResourceSlices: {count: 1, unchangedSince: m}
""")
    assert wiped.status == "failed"
    assert "to be the same objects as at mark 'm'; deleted or replaced: " in wiped.failure.message
    assert "; new: " in wiped.failure.message


def test_connection_counts() -> None:
    result = run("""
    - startPod: {name: a, claims: [gpu]}
    - stopPod: a
    - expectConnections: {channels: 1, connects: 1, disconnects: 0}
    - mark: before
    - restartPlugin: {downtime: 1}
    - startPod: {name: b, claims: [gpu]}
    - expectConnections:
        {since: before, channels: {atMost: 1}, connects: {atLeast: 1}, disconnects: {atLeast: 1}}
""")
    assert result.status == "passed", explain(result)
    failed = run("    - expectConnections: {channels: 2}\n")
    assert failed.status == "failed"
    assert failed.failure.message == "gRPC connections of the kubelet: expected 2 channels, found 1"


def test_a_refused_deletion_finalizer_update_is_a_step_error_naming_the_permission() -> None:
    """Issue 28 follow-up: a 403 on the finalizer update was swallowed and surfaced only as a
    failed expectation later; now the deletePod step errors and names the permission."""
    result = run(
        "    - startPod: {name: a, claims: [gpu]}\n"
        "    - stopKubelet: {}\n"  # the pod then waits, held by the finalizer, for the next kubelet
        "    - fault: {apiServer: {verb: update, resource: pods, client: runner, code: 403,"
        " message: denied}}\n"
        "    - deletePod: a\n"
        "    - startKubelet: {}\n"
    )
    assert result.status == "error", explain(result)
    assert result.failure.step_index == 4, explain(result)
    message = result.failure.message
    assert "pod default/a: the API server refused drasim's runner 'update pods'" in message
    assert "drasim.dev/kubelet-termination" in message
    assert "403 Forbidden: denied;" in message
    assert "the runner needs the permission 'update pods'" in message


def test_a_pod_gone_before_its_deletion_is_marked_is_no_error() -> None:
    result = run(
        "    - startPod: {name: a, claims: [gpu]}\n"
        "    - stopKubelet: {}\n"
        "    - fault: {apiServer: {verb: get, resource: pods, client: runner, code: 404, times: 1}}\n"
        "    - deletePod: a\n"
        "    - startKubelet: {}\n"
        "    - expectCalls: {NodeUnprepareResources: 1}\n"
    )
    assert result.status == "passed", explain(result)


def test_a_refused_finalizer_removal_is_a_step_error_naming_the_permission() -> None:
    """When the kubelet has finished a deleted pod, the runner removes its deletion finalizer; a
    403 there would leave the Pod on the server for ever, so it is a step error naming the
    permission (it was swallowed)."""
    result = run(
        "    - startPod: {name: a, claims: [gpu]}\n"
        "    - stopKubelet: {}\n"
        "    - deletePod: a\n"
        "    - fault: {apiServer: {verb: update, resource: pods, client: runner, code: 403,"
        " message: denied}}\n"
        "    - startKubelet: {}\n"
        "    - advanceClock: 120\n"
    )
    assert result.status == "error", explain(result)
    assert result.failure.step_index == 5, explain(result)  # startKubelet: the kubelet finishes the pod
    message = result.failure.message
    assert "pod default/a: the API server refused drasim's runner 'update pods'" in message, message
    assert "to remove its finalizer drasim.dev/kubelet-termination" in message
    assert "403 Forbidden: denied;" in message
    assert "the runner needs the permission 'update pods'" in message


# -- advanceClock lets registered plugins' connections come up ---------------------------------


class _Kubelet:
    def __init__(self, instances: dict[str, list[bool]]) -> None:
        self._instances = instances
        self.waited: list[tuple[str, float]] = []

    def instances(self, driver: str) -> list[Any]:
        from types import SimpleNamespace

        return [SimpleNamespace(connected=c) for c in self._instances.get(driver, [])]

    def wait_registered(self, driver: str, *, timeout: float, connected: bool = False) -> bool:
        assert connected
        self.waited.append((driver, timeout))
        self._instances[driver] = [True]
        return True


def _world(kubelet: _Kubelet, running: dict[str, bool]) -> Any:
    from types import SimpleNamespace

    drivers = {name: SimpleNamespace(name=name, running=up) for name, up in running.items()}
    return SimpleNamespace(kubelet=kubelet, fleet=SimpleNamespace(drivers=drivers))


def test_advance_waits_only_for_running_drivers_that_are_registered_but_not_connected() -> None:
    from drasim.runner import podworker

    kubelet = _Kubelet({"late": [False], "up": [True], "down": [False], "gone": []})
    world = _world(kubelet, {"late": True, "up": True, "down": False, "gone": True})
    podworker._let_connections_come_up(world, 0.6)
    [(driver, timeout)] = kubelet.waited
    assert driver == "late"
    assert 0 < timeout <= 0.6


def test_advance_waits_no_longer_than_the_connect_cap() -> None:
    from drasim.runner import podworker

    kubelet = _Kubelet({"late": [False, False]})
    podworker._let_connections_come_up(_world(kubelet, {"late": True}), 10_000.0)
    [(_, timeout)] = kubelet.waited
    assert timeout <= podworker.CONNECT_WAIT


def test_a_late_connection_does_not_lose_the_slices_to_a_clock_jump(monkeypatch: Any) -> None:
    """Since 1.34 only a connected instance cancels the slice wipe (due 30 s after a
    registration without one). A plugin whose gRPC connection reports READY only once the
    next advanceClock is under way (later than the start's own wait for it) keeps its slices:
    the step lets the connection come up before it moves the kubelet's timers."""
    import threading

    import grpc

    from drasim.plugins.client import GrpcDriverClient
    from drasim.runner import fleet, podworker

    advancing = threading.Event()
    on_state = GrpcDriverClient._on_state

    def late_ready(self: GrpcDriverClient, state: grpc.ChannelConnectivity) -> None:
        if state == grpc.ChannelConnectivity.READY and not advancing.is_set():
            # Held until an advanceClock lets connections come up (at most 5 s).
            threading.Thread(target=lambda: (advancing.wait(5), on_state(self, state)), daemon=True).start()
            return
        on_state(self, state)

    come_up = podworker._let_connections_come_up

    def while_advancing(world: Any, budget: float) -> None:
        advancing.set()
        try:
            come_up(world, budget)
        finally:
            advancing.clear()

    monkeypatch.setattr(GrpcDriverClient, "_on_state", late_ready)
    monkeypatch.setattr(podworker, "_let_connections_come_up", while_advancing)
    monkeypatch.setattr(fleet, "CONNECT_TIMEOUT", 0.01)  # the start's wait gives up first
    result = run(
        """
    - advanceClock: 1
    - expectResourceSlices: {count: 1}
    - mark: before
    - restartPlugin: {downtime: 5}
    - advanceClock: 60
    - expectResourceSlices: {count: 1, unchangedSince: before}
"""
    )
    assert result.status == "passed", explain(result)
