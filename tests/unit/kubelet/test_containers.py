"""GetResources and GetContainerClaimInfos: upstream's test tables, re-expressed."""

from __future__ import annotations

import pytest

from drasim.errors import KubeletError
from drasim.kubelet.features import FeatureGates
from drasim.state import Device, DriverState


@pytest.fixture
def gated(kit):
    return kit.Harness(gates=FeatureGates(dra_extended_resource=True))


def extended_pod(kit, requests=None, container=None):
    extended = {
        "resourceClaimName": kit.CLAIM,
        "requestMappings": [
            {
                "containerName": container or kit.CONTAINER,
                "resourceName": "example.com/gpu",
                "requestName": kit.EXT_REQUEST,
            }
        ],
    }
    return kit.pod(claims=(), extended=extended, requests=requests or {"example.com/gpu": "1"})


def test_claim_info_with_devices(gated, kit) -> None:
    gated.add_info(kit.claim_info())
    assert gated.manager.get_resources(kit.pod(), kit.CONTAINER) == [kit.CDI_ID]


def test_container_given_as_dict(gated, kit) -> None:
    gated.add_info(kit.claim_info())
    container = {"name": "x", "resources": {"claims": [{"name": kit.CLAIM}]}}
    assert gated.manager.get_resources(kit.pod(), container) == [kit.CDI_ID]


def test_nil_claim_info(gated, kit) -> None:
    with pytest.raises(KubeletError) as info:
        gated.manager.get_resources(kit.pod(), kit.CONTAINER)
    assert str(info.value) == (
        "internal error: unable to get claim info for ResourceClaim test-claim in namespace test-namespace"
    )


def test_extended_resource_claim_info(gated, kit) -> None:
    gated.add_info(kit.claim_info(request_names=(kit.EXT_REQUEST,)))
    assert gated.manager.get_resources(extended_pod(kit), kit.CONTAINER) == [kit.CDI_ID]


@pytest.mark.parametrize(
    ("requests", "container"),
    [
        ({"example.com/gpu": "0"}, None),  # zero quantity
        ({"example.com/gpu": "1"}, "other-container"),  # mapping for another container
        ({"cpu": "1"}, None),  # not an extended resource
    ],
)
def test_extended_resource_not_requested(gated, kit, requests, container) -> None:
    gated.add_info(kit.claim_info(request_names=(kit.EXT_REQUEST,)))
    assert gated.manager.get_resources(extended_pod(kit, requests, container), kit.CONTAINER) == []


def test_extended_resource_needs_gate(harness, kit) -> None:
    harness.add_info(kit.claim_info(request_names=(kit.EXT_REQUEST,)))
    assert harness.manager.get_resources(extended_pod(kit), kit.CONTAINER) == []


def test_same_claim_referenced_by_multiple_requests(gated, kit) -> None:
    gated.add_info(kit.claim_info(request_names=(kit.REQUEST, kit.REQUEST2)))
    pod = kit.pod(
        container_claims=[
            {"name": kit.CLAIM, "request": kit.REQUEST},
            {"name": kit.CLAIM, "request": kit.REQUEST2},
        ]
    )
    assert gated.manager.get_resources(pod, kit.CONTAINER) == [kit.CDI_ID, kit.CDI_ID]


def test_request_filtering(harness, kit) -> None:
    info = kit.claim_info()
    devices = [
        Device("p", "d1", request_names=("a",), cdi_device_ids=("x/y=d1",)),
        Device("p", "d2", request_names=("b",), cdi_device_ids=("x/y=d2a", "x/y=d2b")),
        Device("p", "d3", request_names=None, cdi_device_ids=("x/y=d3",)),
        Device("p", "d4", request_names=("a", "b"), cdi_device_ids=None),
    ]
    info.driver_state = {kit.DRIVER: DriverState(devices=devices)}
    harness.add_info(info)
    pod = kit.pod(container_claims=[{"name": kit.CLAIM, "request": "b"}])
    assert harness.manager.get_resources(pod, kit.CONTAINER) == ["x/y=d2a", "x/y=d2b", "x/y=d3"]
    whole = kit.pod(container_claims=[{"name": kit.CLAIM}])
    assert harness.manager.get_resources(whole, kit.CONTAINER) == ["x/y=d1", "x/y=d2a", "x/y=d2b", "x/y=d3"]


def test_unknown_container_name(harness, kit) -> None:
    with pytest.raises(KubeletError, match="has no container 'nope'"):
        harness.manager.get_resources(kit.pod(), "nope")


def test_template_claim_skipped_when_not_created(harness, kit) -> None:
    pod = kit.pod(template=True, statuses=[{"name": kit.CLAIM}])
    assert harness.manager.get_resources(pod, kit.CONTAINER) == []


def test_get_container_claim_infos(gated, kit) -> None:
    gated.add_info(kit.claim_info(prepared=True))
    [info] = gated.manager.get_container_claim_infos(kit.pod(), kit.CONTAINER)
    assert info.claim_name == kit.CLAIM
    assert info.prepared
    info.pod_uids.add("mutated")  # a deep copy: the cache is unaffected
    assert gated.manager.claim_info(kit.NAMESPACE, kit.CLAIM).pod_uids == set()


def test_get_extended_resource_claim_info(gated, kit) -> None:
    gated.add_info(kit.claim_info(request_names=(kit.EXT_REQUEST,)))
    assert len(gated.manager.get_container_claim_infos(extended_pod(kit), kit.CONTAINER)) == 1
    assert gated.manager.get_container_claim_infos(extended_pod(kit, container="other"), kit.CONTAINER) == []


def test_get_extended_resource_claim_info_missing(gated, kit) -> None:
    with pytest.raises(KubeletError) as info:
        gated.manager.get_container_claim_infos(extended_pod(kit), kit.CONTAINER)
    assert str(info.value) == "unable to get claim info for claim test-claim in namespace test-namespace"


def test_claim_info_not_found(gated, kit) -> None:
    gated.add_info(kit.claim_info(name="another-claim"))
    with pytest.raises(KubeletError, match=r"^unable to get information for ResourceClaim test-claim$"):
        gated.manager.get_container_claim_infos(kit.pod(), kit.CONTAINER)


def test_none_of_the_supported_fields_set(gated, kit) -> None:
    pod = kit.pod()
    pod["spec"]["resourceClaims"] = [{"name": kit.CLAIM}]
    with pytest.raises(KubeletError) as info:
        gated.manager.get_container_claim_infos(pod, kit.CONTAINER)
    assert str(info.value) == (
        'pod "test-namespace/test-pod", spec.resourceClaim "test-claim": none of the supported fields are set'
    )
