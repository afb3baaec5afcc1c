"""The kubelet slot: the emulation implements the Kubelet protocol, and a kubelet without an
optional capability makes the steps that need it skip their scenario ("not comparable")."""

from __future__ import annotations

import pytest

from drasim.errors import ConfigError
from drasim.report.model import RESULTS
from drasim.runner.emulated import EmulatedKubelet
from drasim.runner.kubelets import KUBELET_IMPLEMENTATIONS
from drasim.runner.kubeletslot import (
    CAPABILITIES,
    CRASH_POINTS,
    SCALED_RECONNECT,
    Kubelet,
    KubeletImplementation,
)
from drasim.runner.options import RunOptions
from drasim.runner.plan import plan_run
from drasim.runner.run import run_scenario
from drasim.scenario import load_text
from drasim.scenario.schema import Scenario


def scenario(*steps: str) -> Scenario:
    """A one-driver, one-claim scenario with these steps (YAML flow mappings)."""
    text = (
        "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: slot, description: the slot}\n"
        "spec: {driver: {fake: {name: gpu.example.com}}, claims: [{name: gpu}], steps: ["
        + ", ".join(steps)
        + "]}\n"
    )
    (loaded,) = load_text(text, "s.yaml")
    return loaded


CRASH = (
    '{restartKubelet: {crashAt: "prepare:after-rpc", during: {startPod: {name: a, claims: [gpu]}}}}',
    "{expectCheckpoint: {claims: {gpu: {pods: [a]}}}}",
)
KILL = (
    "{startPod: {name: a, claims: [gpu]}}",
    "{killPlugin: {}}",
    "{startPlugin: {}}",
    "{deletePod: a}",
    "{expectCalls: {NodePrepareResources: 1, NodeUnprepareResources: 1}}",
)


class BareKubelet(EmulatedKubelet):
    """The emulation without its optional calls, as another implementation may be."""

    paused: int = 0

    def paused_watcher(self) -> None:
        BareKubelet.paused += 1

    def health_streams(self, driver: str) -> None:
        return None


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch) -> str:
    """An implementation offering no optional capability."""
    monkeypatch.setitem(
        KUBELET_IMPLEMENTATIONS, "bare", KubeletImplementation("bare", BareKubelet.create, frozenset())
    )
    BareKubelet.paused = 0
    return "bare"


def test_the_emulation_offers_every_capability() -> None:
    emulated = KUBELET_IMPLEMENTATIONS["emulated"]
    assert emulated.capabilities == frozenset(CAPABILITIES)
    assert plan_run(scenario(*KILL)).kubelet == "emulated"


def test_the_protocol_names_the_emulated_managers_calls() -> None:
    """An adapter keeps the names the runner calls today: the manager's own."""
    manager_calls = {
        "prepare_resources",
        "unprepare_resources",
        "reconcile",
        "get_resources_by_device",
        "claim_info",
        "claim_infos",
        "is_prepared",
        "pod_might_need_to_unprepare_resources",
    }
    members = {name for name in vars(Kubelet) if not name.startswith("_")}
    assert manager_calls <= members
    assert all(callable(getattr(EmulatedKubelet, name)) for name in members)


def test_an_unknown_implementation_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="kubelet implementation: unknown 'nope' \\(known: emulated"):
        plan_run(scenario(*KILL), RunOptions(kubelet="nope"))


def test_a_crash_point_step_is_not_comparable_without_the_capability(bare: str) -> None:
    result = run_scenario(scenario(*CRASH), RunOptions(kubelet=bare), results=RESULTS)
    assert result.status == "skipped", result.failure
    assert result.skip_reason == (
        f"not comparable: restartKubelet with crashAt needs the kubelet capability {CRASH_POINTS!r}, "
        "which the bare kubelet does not offer"
    )


def test_the_same_crash_runs_on_the_emulation() -> None:
    result = run_scenario(scenario(*CRASH), RunOptions(), results=RESULTS)
    assert result.status == "passed", result.failure


def test_a_kill_without_the_watcher_pause_still_runs(bare: str) -> None:
    """Killing a fake driver holds the registry scan where the kubelet can; elsewhere it just kills."""
    result = run_scenario(scenario(*KILL), RunOptions(kubelet=bare), results=RESULTS)
    assert result.status == "passed", result.failure
    assert BareKubelet.paused == 1  # asked once, for the kill, and did without


REFUSED = (
    "{startPod: {name: a, claims: [gpu]}}",
    "{deletePod: a}",
    "{mark: refused}",
    "{refuseConnections: {}}",
    "{expectConnections: {since: refused, disconnects: {atLeast: 1}}}",
    "{startPod: {name: b, claims: [gpu], expectError: Unavailable}}",
    "{mark: served}",
    "{refuseConnections: {refuse: false}}",
    "{expectConnections: {since: served, connects: {atLeast: 1}}}",
    "{advanceClock: 90}",
    "{expectPod: {pod: b, phase: Running}}",
)


def test_serving_a_refused_socket_again_is_not_comparable_without_scaled_reconnect(bare: str) -> None:
    """The retry after the socket serves again is timed by the kubelet's gRPC reconnect backoff,
    which upstream's grpc-go runs in real seconds: not comparable there."""
    result = run_scenario(scenario(*REFUSED), RunOptions(kubelet=bare), results=RESULTS)
    assert result.status == "skipped", result.failure
    assert result.skip_reason == (
        "not comparable: refuseConnections {refuse: false} needs the kubelet capability "
        f"{SCALED_RECONNECT!r}, which the bare kubelet does not offer"
    )
    assert run_scenario(scenario(*REFUSED), RunOptions(), results=RESULTS).status == "passed"
