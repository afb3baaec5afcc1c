"""PrepareResources: upstream TestPrepareResources and friends, re-expressed."""

from __future__ import annotations

import pytest

from drasim.errors import KubeletError, RpcError
from drasim.kubelet.features import FeatureGates
from drasim.kubelet.manager import OPERATIONS_DURATION
from drasim.state import Device, DriverState
from drasim.values import PrepareResult


def prepare_error(harness, pod) -> str:
    with pytest.raises(KubeletError) as info:
        harness.manager.prepare_resources(pod)
    return str(info.value)


def op_count(harness, *, is_error: bool, operation: str = "PrepareResources") -> int:
    return harness.metrics.histogram_count(
        OPERATIONS_DURATION, operation_name=operation, is_error="true" if is_error else "false"
    )


def fixed_reply(kit, uid=None, **device):
    fields = {"request_names": (kit.REQUEST,), "cdi_device_ids": (kit.CDI_ID,)} | device
    dev = Device(kit.POOL, kit.DEVICE, **fields)
    return lambda claims: {uid or kit.CLAIM_UID: PrepareResult(devices=(dev,))}


def expected_state(kit, **device) -> dict[str, DriverState]:
    fields = {"request_names": (kit.REQUEST,), "cdi_device_ids": (kit.CDI_ID,)} | device
    return {kit.DRIVER: DriverState(devices=[Device(kit.POOL, kit.DEVICE, **fields)])}


def test_claim_does_not_exist(harness, kit) -> None:
    message = prepare_error(harness, kit.pod())
    assert message == (
        "prepare dynamic resources: fetch ResourceClaim test-claim: "
        'resourceclaims.resource.k8s.io "test-claim" not found'
    )
    assert harness.prepare_count() == 0
    assert op_count(harness, is_error=True) == 1
    assert op_count(harness, is_error=False) == 0
    assert harness.manager.claim_infos() == []
    assert harness.checkpoint.writes == []


def test_unknown_driver(harness, kit) -> None:
    harness.claims.add(kit.claim(driver="unknown driver"))
    assert prepare_error(harness, kit.pod()) == (
        "prepare dynamic resources: DRA driver unknown driver is not registered"
    )
    assert harness.manager.claim_infos() == []
    assert op_count(harness, is_error=True) == 1


def test_driver_returns_nil_value(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.driver.prepare_script = lambda claims: {kit.CLAIM_UID: None}
    harness.manager.prepare_resources(kit.pod())
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info is not None
    assert info.driver_state == {kit.DRIVER: DriverState()}
    assert info.pod_uids == {kit.POD_UID}
    assert info.prepared
    assert harness.prepare_count() == 1
    assert op_count(harness, is_error=False) == 1


def test_driver_returns_empty_result(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.driver.prepare_script = lambda claims: {}
    assert prepare_error(harness, kit.pod()) == (
        "prepare dynamic resources: NodePrepareResources skipped 1 ResourceClaims"
    )
    assert harness.prepare_count() == 1
    assert op_count(harness, is_error=True) == 1
    # The pod reference was checkpointed before the RPC; the claim stays unprepared.
    assert not harness.manager.is_prepared(kit.NAMESPACE, kit.CLAIM)
    assert harness.checkpoint.entry(kit.NAMESPACE, kit.CLAIM).pod_uids == {kit.POD_UID}


def test_pod_not_in_reserved_for(harness, kit) -> None:
    harness.claims.add(kit.claim(reserved_for=("",)))
    assert prepare_error(harness, kit.pod()) == (
        "prepare dynamic resources: pod test-pod (test-pod-uid) is not allowed to use "
        "ResourceClaim test-claim (test-claim-uid)"
    )
    assert harness.prepare_count() == 0
    assert harness.manager.claim_infos() == []


def podgroup_ref(name):
    return {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": name}


def test_podgroup_claim_reserved_for_other_group(kit) -> None:
    harness = kit.Harness(gates=FeatureGates(dra_workload_resource_claims=True))
    harness.claims.add(kit.claim(reserved_for=(podgroup_ref(""),)))
    message = prepare_error(harness, kit.pod(pod_group=kit.POD_GROUP))
    assert "is not allowed to use ResourceClaim " in message
    assert harness.prepare_count() == 0


def test_podgroup_claim_prepared_with_gate(kit) -> None:
    harness = kit.Harness(gates=FeatureGates(dra_workload_resource_claims=True))
    harness.claims.add(kit.claim(reserved_for=(podgroup_ref(kit.POD_GROUP),)))
    harness.driver.prepare_script = fixed_reply(kit)
    harness.manager.prepare_resources(kit.pod(pod_group=kit.POD_GROUP))
    assert harness.prepare_count() == 1
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info.prepared
    assert info.driver_state == expected_state(kit)


def test_podgroup_claim_refused_without_gate(harness, kit) -> None:
    harness.claims.add(kit.claim(reserved_for=(podgroup_ref(kit.POD_GROUP),)))
    message = prepare_error(harness, kit.pod(pod_group=kit.POD_GROUP))
    assert "is not allowed to use ResourceClaim " in message
    assert harness.prepare_count() == 0


def test_claim_used_by_no_container_is_still_prepared(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.driver.prepare_script = fixed_reply(kit)
    harness.manager.prepare_resources(kit.pod(container_claims=[]))
    assert harness.prepare_count() == 1
    assert harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM).driver_state == expected_state(kit)


def test_resource_already_prepared(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True))
    harness.manager.prepare_resources(kit.pod())
    assert harness.prepare_count() == 0
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info.prepared
    assert info.driver_state == expected_state(kit)
    assert op_count(harness, is_error=False) == 1


def test_rpc_timeout(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.driver.prepare_script = RpcError("DeadlineExceeded", "context deadline exceeded")
    assert prepare_error(harness, kit.pod()) == (
        "prepare dynamic resources: NodePrepareResources: rpc error: code = DeadlineExceeded "
        "desc = context deadline exceeded"
    )
    assert harness.prepare_count() == 1


def test_claim_not_in_cache(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.driver.prepare_script = fixed_reply(kit)
    harness.manager.prepare_resources(kit.pod())
    assert harness.prepare_count() == 1
    [request] = harness.driver.prepare_calls
    assert [(c.namespace, c.uid, c.name) for c in request] == [(kit.NAMESPACE, kit.CLAIM_UID, kit.CLAIM)]
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert (info.claim_uid, info.claim_name, info.namespace) == (kit.CLAIM_UID, kit.CLAIM, kit.NAMESPACE)
    assert info.pod_uids == {kit.POD_UID}
    assert info.driver_state == expected_state(kit)
    assert info.prepared
    # Two checkpoint writes: the pod reference before the RPC, then the prepared state.
    assert len(harness.checkpoint.writes) == 2
    first, second = harness.checkpoint.writes
    assert first[0].driver_state == {kit.DRIVER: DriverState()}
    assert second[0].driver_state == expected_state(kit)


def test_extended_resource_claim(kit) -> None:
    harness = kit.Harness(gates=FeatureGates(dra_extended_resource=True))
    harness.claims.add(kit.claim(request=kit.EXT_REQUEST))
    harness.driver.prepare_script = fixed_reply(kit, request_names=(kit.EXT_REQUEST,))
    extended = {
        "resourceClaimName": kit.CLAIM,
        "requestMappings": [
            {
                "containerName": kit.CONTAINER,
                "resourceName": "example.com/gpu",
                "requestName": kit.EXT_REQUEST,
            }
        ],
    }
    pod = kit.pod(claims=(), extended=extended, requests={"example.com/gpu": "1"})
    harness.manager.prepare_resources(pod)
    assert harness.prepare_count() == 1
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info.prepared
    assert info.driver_state == expected_state(kit, request_names=(kit.EXT_REQUEST,))


def test_extended_resource_claim_ignored_without_gate(harness, kit) -> None:
    pod = kit.pod(claims=(), extended={"resourceClaimName": kit.CLAIM, "requestMappings": []})
    harness.manager.prepare_resources(pod)
    assert harness.claims.gets == []
    assert harness.manager.claim_infos() == []


def test_claim_uid_mismatch(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.add_info(kit.claim_info(uid="another-claim-uid", pod_uids=[kit.POD_UID]))
    assert prepare_error(harness, kit.pod()) == (
        "prepare dynamic resources: old ResourceClaim with same name test-claim and different UID "
        "another-claim-uid still exists (previous pod force-deleted?!)"
    )
    assert harness.prepare_count() == 0


def test_share_id_is_stored(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.driver.prepare_script = fixed_reply(kit, share_id=kit.SHARE_ID)
    harness.manager.prepare_resources(kit.pod())
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info.driver_state == expected_state(kit, share_id=kit.SHARE_ID)


def test_prepared_and_new_claim(harness, kit) -> None:
    """Upstream TestPrepareResourcesWithPreparedAndNewClaim."""
    first = kit.pod("test-pod-1", "test-pod-uid-1", claims=[kit.CLAIM])
    second = kit.pod("test-pod-2", "test-pod-uid-2", claims=[kit.CLAIM, "test-claim-second"])
    harness.claims.add(kit.claim(reserved_for=("test-pod-uid-1", "test-pod-uid-2")))
    harness.claims.add(kit.claim("test-claim-second", reserved_for=("test-pod-uid-2",)))
    harness.manager.prepare_resources(first)
    assert harness.prepare_count() == 1
    harness.manager.prepare_resources(second)
    assert harness.prepare_count() == 2
    assert [c.name for c in harness.driver.prepare_calls[1]] == ["test-claim-second"]
    for name in (kit.CLAIM, "test-claim-second"):
        assert harness.manager.is_prepared(kit.NAMESPACE, name)
    assert harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM).pod_uids == {
        "test-pod-uid-1",
        "test-pod-uid-2",
    }


def test_template_claim_must_be_owned_by_pod(harness, kit) -> None:
    status = [{"name": kit.CLAIM, "resourceClaimName": "test-pod-claim-abc"}]
    pod = kit.pod(template=True, statuses=status)
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "other", "uid": "other-uid", "controller": True}
    harness.claims.add(kit.claim("test-pod-claim-abc", owner=owner))
    assert prepare_error(harness, pod) == (
        "prepare dynamic resources: ResourceClaim test-namespace/test-pod-claim-abc was not created for "
        "Pod test-namespace/test-pod (Pod is not owner)"
    )
    harness.claims.add(kit.claim("test-pod-claim-abc", owner=owner | {"uid": kit.POD_UID}))
    harness.manager.prepare_resources(pod)
    assert harness.manager.is_prepared(kit.NAMESPACE, "test-pod-claim-abc")


def test_template_claim_not_created_yet_and_skipped(harness, kit) -> None:
    assert prepare_error(harness, kit.pod(template=True)) == (
        'prepare dynamic resources: pod "test-namespace/test-pod": ResourceClaim not created yet'
    )
    # A status entry without a name means "intentionally not created": nothing to do.
    harness.manager.prepare_resources(kit.pod(template=True, statuses=[{"name": kit.CLAIM}]))
    assert harness.claims.gets == []
    assert harness.prepare_count() == 0


def test_not_allocated(harness, kit) -> None:
    harness.claims.add(kit.claim(allocated=False))
    assert (
        prepare_error(harness, kit.pod())
        == "prepare dynamic resources: ResourceClaim test-claim: not allocated"
    )


def test_validation_fails_before_any_cache_change(harness, kit) -> None:
    """The second claim's driver is missing: the first claim must not be cached either."""
    harness.claims.add(kit.claim("a"))
    harness.claims.add(kit.claim("b", driver="missing.example.com"))
    message = prepare_error(harness, kit.pod(claims=["a", "b"]))
    assert message == "prepare dynamic resources: DRA driver missing.example.com is not registered"
    assert harness.manager.claim_infos() == []
    assert harness.checkpoint.writes == []


def test_driver_must_be_registered_even_if_prepared(harness, kit) -> None:
    harness.claims.add(kit.claim(driver="gone.example.com"))
    info = kit.claim_info(pod_uids=[kit.POD_UID], prepared=True, driver="gone.example.com")
    harness.add_info(info)
    assert "DRA driver gone.example.com is not registered" in prepare_error(harness, kit.pod())


def test_one_batch_per_driver_and_multi_driver_claim(harness, kit) -> None:
    other = harness.drivers.register(kit.FakeDriverClient("other.example.com"))
    harness.claims.add(kit.claim("a"))
    harness.claims.add(kit.claim("b"))
    harness.claims.add(kit.claim("both", driver=[kit.DRIVER, "other.example.com", kit.DRIVER]))
    harness.manager.prepare_resources(kit.pod(claims=["a", "both", "b"]))
    assert [[c.name for c in call] for call in harness.driver.prepare_calls] == [["a", "both", "b"]]
    assert [[c.name for c in call] for call in other.prepare_calls] == [["both"]]
    both = harness.manager.claim_info(kit.NAMESPACE, "both")
    assert set(both.driver_state) == {kit.DRIVER, "other.example.com"}
    assert both.driver_state["other.example.com"].devices[0].cdi_device_ids == (
        "other.example.com/test=claim-both-uid",
    )


def test_allocation_without_results_needs_no_rpc(harness, kit) -> None:
    claim = kit.claim()
    claim["status"]["allocation"] = {}
    harness.claims.add(claim)
    harness.manager.prepare_resources(kit.pod())
    assert harness.prepare_count() == 0
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info.driver_state == {}
    assert info.prepared


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            lambda claims: {"bogus-uid": PrepareResult()},
            "NodePrepareResources returned result for unknown claim UID bogus-uid",
        ),
        (
            lambda claims: {claims[0].uid: PrepareResult(error="GPU on fire")},
            "NodePrepareResources failed for ResourceClaim test-claim: GPU on fire",
        ),
    ],
)
def test_reply_validation(harness, kit, reply, expected) -> None:
    harness.claims.add(kit.claim())
    harness.driver.prepare_script = reply
    assert prepare_error(harness, kit.pod()) == f"prepare dynamic resources: {expected}"
    assert not harness.manager.is_prepared(kit.NAMESPACE, kit.CLAIM)


def test_checkpoint_write_failure(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.checkpoint.fail_store = True
    assert prepare_error(harness, kit.pod()) == (
        "prepare dynamic resources: checkpoint ResourceClaim cache: "
        "could not save checkpoint dra_manager_state: disk full"
    )
    assert harness.prepare_count() == 0


def test_journal_records_each_operation(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.manager.prepare_resources(kit.pod())
    prepare_error(harness, kit.pod("p2", "uid-2"))
    kubelet_events = [fields for kind, fields in harness.recorder.events if kind == "kubelet"]
    assert [(e["operation"], e["pod"], e["pod_uid"]) for e in kubelet_events] == [
        ("PrepareResources", "test-namespace/test-pod", kit.POD_UID),
        ("PrepareResources", "test-namespace/p2", "uid-2"),
    ]
    assert kubelet_events[0]["error"] is None
    assert kubelet_events[0]["duration"] == pytest.approx(1.0)  # four hook points, 0.25 s each
    assert kubelet_events[1]["error"] == (
        "prepare dynamic resources: pod p2 (uid-2) is not allowed to use "
        "ResourceClaim test-claim (test-claim-uid)"
    )


def test_duration_is_observed_from_the_clock(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.manager.prepare_resources(kit.pod())
    text = harness.metrics.to_text()
    assert (
        'dra_operations_duration_seconds_sum{is_error="false",operation_name="PrepareResources"} 1.0' in text
    )
    assert (
        'dra_operations_duration_seconds_bucket{is_error="false",operation_name="PrepareResources",le="1"} 1'
        in text
    )
    assert 'le="0.5"} 0' in text
