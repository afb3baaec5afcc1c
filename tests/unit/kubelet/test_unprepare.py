"""UnprepareResources, PodMightNeedToUnprepareResources and the reconcile pass."""

from __future__ import annotations

import pytest

from drasim.errors import KubeletError, RpcError
from drasim.kubelet.features import FeatureGates
from drasim.kubelet.manager import OPERATIONS_DURATION
from drasim.values import UnprepareResult


def unprepare_error(harness, pod) -> str:
    with pytest.raises(KubeletError) as info:
        harness.manager.unprepare_resources(pod)
    return str(info.value)


def test_unknown_driver(harness, kit) -> None:
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True, driver="unknown-driver"))
    assert unprepare_error(harness, kit.pod()) == (
        "unprepare dynamic resources: DRA driver unknown-driver is not registered"
    )
    assert harness.unprepare_count() == 0
    assert harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM) is not None
    assert (
        harness.metrics.histogram_count(
            OPERATIONS_DURATION, operation_name="UnprepareResources", is_error="true"
        )
        == 1
    )


def test_claim_referenced_by_other_pods(harness, kit) -> None:
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID, "another-pod-uid"], prepared=True))
    harness.manager.unprepare_resources(kit.pod())
    assert harness.unprepare_count() == 0
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info.pod_uids == {"another-pod-uid"}
    assert info.prepared
    # The dropped reference is persisted by the final checkpoint write of the call.
    assert harness.checkpoint.entry(kit.NAMESPACE, kit.CLAIM).pod_uids == {"another-pod-uid"}
    assert (
        harness.metrics.histogram_count(
            OPERATIONS_DURATION, operation_name="UnprepareResources", is_error="false"
        )
        == 1
    )


def test_rpc_timeout(harness, kit) -> None:
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True))
    harness.driver.unprepare_script = RpcError("DeadlineExceeded", "context deadline exceeded")
    assert unprepare_error(harness, kit.pod()) == (
        "unprepare dynamic resources: NodeUnprepareResources: rpc error: code = DeadlineExceeded "
        "desc = context deadline exceeded"
    )
    assert harness.unprepare_count() == 1
    assert harness.manager.pod_might_need_to_unprepare_resources(kit.POD_UID)


def test_empty_response(harness, kit) -> None:
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True))
    harness.driver.unprepare_script = lambda claims: {}
    assert unprepare_error(harness, kit.pod()) == (
        "unprepare dynamic resources: NodeUnprepareResources skipped 1 ResourceClaims"
    )
    assert harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM) is not None


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            lambda claims: {"bogus": UnprepareResult()},
            "NodeUnprepareResources returned result for unknown claim UID bogus",
        ),
        (
            lambda claims: {claims[0].uid: UnprepareResult(error="busy")},
            "NodeUnprepareResources failed for ResourceClaim test-claim: busy",
        ),
    ],
)
def test_reply_validation(harness, kit, reply, expected) -> None:
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True))
    harness.driver.unprepare_script = reply
    assert unprepare_error(harness, kit.pod()) == f"unprepare dynamic resources: {expected}"
    assert harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM) is not None


def test_unprepare_extended_resource_claim(kit) -> None:
    harness = kit.Harness(gates=FeatureGates(dra_extended_resource=True))
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True, request_names=(kit.EXT_REQUEST,)))
    extended = {"resourceClaimName": kit.CLAIM, "requestMappings": []}
    harness.manager.unprepare_resources(kit.pod(claims=(), extended=extended))
    assert harness.unprepare_count() == 1
    assert harness.manager.claim_infos() == []


def test_unprepare_prepared_claim(harness, kit) -> None:
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True))
    harness.manager.unprepare_resources(kit.pod())
    [call] = harness.driver.unprepare_calls
    assert [(c.namespace, c.uid, c.name) for c in call] == [(kit.NAMESPACE, kit.CLAIM_UID, kit.CLAIM)]
    assert harness.manager.claim_infos() == []
    assert harness.checkpoint.entries == []
    assert not harness.manager.pod_might_need_to_unprepare_resources(kit.POD_UID)


def test_unprepare_uses_cache_when_claim_statuses_missing(harness, kit) -> None:
    """Issue #139772: the pod status lost its generated claim names."""
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True))
    harness.manager.unprepare_resources(kit.pod(template=True))
    assert harness.unprepare_count() == 1
    assert harness.manager.claim_infos() == []


def test_fallback_to_pod_spec_errors_when_names_unresolvable(harness, kit) -> None:
    assert unprepare_error(harness, kit.pod(template=True)) == (
        'unprepare dynamic resources: pod "test-namespace/test-pod": ResourceClaim not created yet'
    )


def test_unprepare_nil_value(harness, kit) -> None:
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True))
    harness.driver.unprepare_script = lambda claims: {kit.CLAIM_UID: None}
    harness.manager.unprepare_resources(kit.pod())
    assert harness.manager.claim_infos() == []


def test_uncached_claim_is_skipped(harness, kit) -> None:
    harness.manager.unprepare_resources(kit.pod())
    assert harness.unprepare_count() == 0
    assert harness.checkpoint.entries == []


def test_unprepared_claim_is_unprepared_anyway(harness, kit) -> None:
    """Prepared is not checked: a claim restored from the checkpoint is unprepared too."""
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=False))
    harness.manager.unprepare_resources(kit.pod())
    assert harness.unprepare_count() == 1


def test_sole_other_user_claim_from_pod_spec_is_unprepared(harness, kit) -> None:
    """Upstream quirk: a fallback name whose claim has ONE other pod is unprepared for it."""
    harness.add_info(kit.claim_info(pod_uids=["other-pod"], prepared=True))
    harness.manager.unprepare_resources(kit.pod())
    assert harness.unprepare_count() == 1
    assert harness.manager.claim_infos() == []


def test_failed_batch_keeps_everything(harness, kit) -> None:
    other = harness.drivers.register(kit.FakeDriverClient("other.example.com"))
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True))
    harness.add_info(
        kit.claim_info("b-uid", [kit.POD_UID], prepared=True, name="b", driver="other.example.com")
    )
    other.unprepare_script = RpcError("Unavailable", "connection refused")
    unprepare_error(harness, kit.pod(claims=[kit.CLAIM, "b"]))
    assert {s.claim_name for s in harness.manager.claim_infos()} == {kit.CLAIM, "b"}
    assert harness.manager.pod_might_need_to_unprepare_resources(kit.POD_UID)
    other.unprepare_script = None
    harness.manager.unprepare_resources(kit.pod(claims=[kit.CLAIM, "b"]))
    assert harness.manager.claim_infos() == []
    assert harness.driver.unprepare_calls[0] == harness.driver.unprepare_calls[1]


def test_pod_might_need_to_unprepare(harness, kit) -> None:
    assert not harness.manager.pod_might_need_to_unprepare_resources(kit.POD_UID)
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID]))
    assert harness.manager.pod_might_need_to_unprepare_resources(kit.POD_UID)


def test_reconcile_unprepares_inactive_pods(harness, kit) -> None:
    harness.add_info(kit.claim_info(pod_uids=["active"], prepared=True, name="kept", uid="kept-uid"))
    harness.add_info(kit.claim_info(pod_uids=["gone"], prepared=True, name="a", uid="a-uid"))
    harness.add_info(kit.claim_info(pod_uids=["gone", "active"], prepared=True, name="shared", uid="s-uid"))
    outcome = harness.manager.reconcile(["active"])
    assert outcome == {"gone": None}
    assert [[c.name for c in call] for call in harness.driver.unprepare_calls] == [["a"]]
    states = {s.claim_name: s.pod_uids for s in harness.manager.claim_infos()}
    assert states == {"kept": {"active"}, "shared": {"active"}}
    assert {e.claim_name: e.pod_uids for e in harness.checkpoint.entries} == states
    events = [f for kind, f in harness.recorder.events if f.get("operation") == "ReconcileUnprepare"]
    assert events == [
        {
            "operation": "ReconcileUnprepare",
            "pod_uid": "gone",
            "namespace": kit.NAMESPACE,
            "claims": ["a", "shared"],
            "error": None,
            "duration": 0.75,
        }
    ]
    # No operations metric: upstream's loop calls unprepareResources directly.
    assert harness.metrics.series(OPERATIONS_DURATION) == {}


def test_reconcile_records_errors_and_retries(harness, kit) -> None:
    harness.add_info(kit.claim_info(pod_uids=["gone"], prepared=True))
    harness.driver.unprepare_script = RpcError("Unavailable", "down")
    assert harness.manager.reconcile([]) == {
        "gone": "NodeUnprepareResources: rpc error: code = Unavailable desc = down"
    }
    assert harness.manager.claim_infos() != []
    harness.driver.unprepare_script = None
    assert harness.manager.reconcile([]) == {"gone": None}
    assert harness.manager.claim_infos() == []
    assert harness.manager.reconcile([]) == {}
