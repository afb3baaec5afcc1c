"""Kubelet restart from the checkpoint, simulated crashes, and upstream's duplicate devices."""

from __future__ import annotations

import pytest

from drasim.errors import KubeletError, RpcError
from drasim.kubelet.manager import HOOK_POINTS
from drasim.state import DriverState


@pytest.fixture
def restarted(harness, kit):
    """A manager restarted from the checkpoint of one prepared claim."""
    harness.claims.add(kit.claim())
    harness.manager.prepare_resources(kit.pod())
    return harness.restart()


def test_corrupt_checkpoint_prevents_start(kit) -> None:
    harness = kit.Harness()
    harness.checkpoint.corrupt = True
    with pytest.raises(KubeletError) as info:
        harness.new_manager()
    assert str(info.value) == (
        "create ResourceClaim cache: could not initialize checkpoint manager, please drain node and remove "
        "DRA state file, err: checkpoint is corrupted"
    )


def test_missing_checkpoint_starts_empty(harness) -> None:
    assert harness.checkpoint.entries == []  # get_or_create created it
    assert harness.manager.claim_infos() == []


def test_restart_restores_state_unprepared(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.manager.prepare_resources(kit.pod())
    before = harness.manager.claim_infos()
    manager = harness.restart()
    assert manager.claim_infos() == before
    assert not manager.is_prepared(kit.NAMESPACE, kit.CLAIM)
    # Containers keep working from the restored cache.
    assert manager.get_resources(kit.pod(), kit.CONTAINER) == ["test-driver/test=claim-test-claim-uid"]
    assert manager.pod_might_need_to_unprepare_resources(kit.POD_UID)
    assert harness.metrics.gauge("dra_resource_claims_in_use", driver_name="<any>") == 0


def test_prepare_after_restart_calls_driver_again_without_duplicating_devices(
    harness, kit, restarted
) -> None:
    """The restored claim is prepared again; the reply replaces its devices (k/k#140274, #140471)."""
    restarted.prepare_resources(kit.pod())
    assert harness.prepare_count() == 2
    info = restarted.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info.prepared
    assert len(info.driver_state[kit.DRIVER].devices) == 1
    cdi = "test-driver/test=claim-test-claim-uid"
    assert restarted.get_resources(kit.pod(), kit.CONTAINER) == [cdi]
    assert len(harness.checkpoint.entry(kit.NAMESPACE, kit.CLAIM).driver_state[kit.DRIVER].devices) == 1


def test_retry_after_partial_failure_does_not_duplicate_devices(harness, kit) -> None:
    """Batch for A succeeds, batch for B fails: A's devices stay; the retry replaces them (k/k#140274)."""
    other = harness.drivers.register(kit.FakeDriverClient("other.example.com"))
    harness.claims.add(kit.claim(driver=[kit.DRIVER, "other.example.com"]))
    other.prepare_script = RpcError("Unavailable", "connection refused")
    with pytest.raises(KubeletError, match="NodePrepareResources: rpc error: code = Unavailable"):
        harness.manager.prepare_resources(kit.pod())
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert not info.prepared
    assert len(info.driver_state[kit.DRIVER].devices) == 1
    other.prepare_script = None
    harness.manager.prepare_resources(kit.pod())
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info.prepared
    assert len(info.driver_state[kit.DRIVER].devices) == 1
    assert len(info.driver_state["other.example.com"].devices) == 1


def test_unprepare_after_restart_without_prepare(harness, kit, restarted) -> None:
    restarted.unprepare_resources(kit.pod())
    assert harness.unprepare_count() == 1
    assert harness.checkpoint.entries == []


def test_restored_claim_of_vanished_pod_is_reconciled(harness, kit, restarted) -> None:
    assert restarted.reconcile(active_pod_uids=[]) == {kit.POD_UID: None}
    assert harness.unprepare_count() == 1
    assert harness.checkpoint.entries == []


def test_hook_points_in_order(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.manager.prepare_resources(kit.pod())
    harness.manager.unprepare_resources(kit.pod())
    assert harness.hook_points == list(HOOK_POINTS)


def test_crash_after_validation_leaves_nothing(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.crash_at = "prepare:after-validation"
    with pytest.raises(kit.SimulatedCrashError):
        harness.manager.prepare_resources(kit.pod())
    assert harness.checkpoint.entries == []
    assert harness.prepare_count() == 0
    # A crash is not an operation outcome: no metric sample, no journal entry.
    assert harness.metrics.series("dra_operations_duration_seconds") == {}
    assert [f for k, f in harness.recorder.events if k == "kubelet"] == []


def test_crash_after_pod_reference_checkpoint_is_reconciled(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.crash_at = "prepare:after-pod-reference-checkpoint"
    with pytest.raises(kit.SimulatedCrashError):
        harness.manager.prepare_resources(kit.pod())
    entry = harness.checkpoint.entry(kit.NAMESPACE, kit.CLAIM)
    assert entry.pod_uids == {kit.POD_UID}
    assert entry.driver_state == {kit.DRIVER: DriverState()}
    assert harness.prepare_count() == 0
    manager = harness.restart()
    # The pod was deleted while the kubelet was down: the reconcile loop unprepares the claim
    # even though NodePrepareResources was never called (drivers must cope).
    assert manager.reconcile([]) == {kit.POD_UID: None}
    assert harness.unprepare_count() == 1
    assert harness.checkpoint.entries == []


def test_crash_after_rpc_loses_devices_and_prepares_again(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.crash_at = "prepare:after-rpc"
    with pytest.raises(kit.SimulatedCrashError):
        harness.manager.prepare_resources(kit.pod())
    # The devices were only in memory; the checkpoint still has the empty driver state.
    assert harness.checkpoint.entry(kit.NAMESPACE, kit.CLAIM).driver_state == {kit.DRIVER: DriverState()}
    manager = harness.restart()
    manager.prepare_resources(kit.pod())
    assert harness.prepare_count() == 2
    info = manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info.prepared
    assert len(info.driver_state[kit.DRIVER].devices) == 1


def test_crash_after_unprepare_rpc_repeats_unprepare(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.manager.prepare_resources(kit.pod())
    harness.crash_at = "unprepare:after-rpc"
    with pytest.raises(kit.SimulatedCrashError):
        harness.manager.unprepare_resources(kit.pod())
    assert harness.checkpoint.entry(kit.NAMESPACE, kit.CLAIM) is not None
    manager = harness.restart()
    manager.unprepare_resources(kit.pod())
    assert harness.unprepare_count() == 2
    assert harness.checkpoint.entries == []


def test_shared_claim_reference_drop_is_lost_on_crash(harness, kit) -> None:
    """The dropped pod reference is only persisted by the final write: a crash before it loses it."""
    harness.claims.add(kit.claim(reserved_for=("a", "b")))
    harness.manager.prepare_resources(kit.pod("pa", "a"))
    harness.manager.prepare_resources(kit.pod("pb", "b"))
    harness.crash_at = "unprepare:after-rpc"
    with pytest.raises(kit.SimulatedCrashError):
        harness.manager.unprepare_resources(kit.pod("pa", "a"))
    assert harness.unprepare_count() == 0
    assert harness.checkpoint.entry(kit.NAMESPACE, kit.CLAIM).pod_uids == {"a", "b"}
    manager = harness.restart()
    manager.unprepare_resources(kit.pod("pa", "a"))
    assert harness.checkpoint.entry(kit.NAMESPACE, kit.CLAIM).pod_uids == {"b"}
    assert harness.unprepare_count() == 0
