"""Claim-name resolution, ownership and reservation checks, and object parsing."""

from __future__ import annotations

import pytest

from drasim.errors import ConfigError, KubeletError
from drasim.kubelet.objects import (
    MalformedObjectError,
    PodResourceClaim,
    claim_view,
    is_dra_extended_resource_name,
    pod_view,
    quantity_is_zero,
)
from drasim.kubelet.resourceclaim import (
    ApiUnsupportedError,
    ClaimNotCreatedError,
    claim_name,
    is_for_pod,
    is_reserved_for_pod,
)


def test_name_from_resource_claim_name(kit) -> None:
    pod = pod_view(kit.pod())
    assert claim_name(pod, pod.resource_claims[0]) == (kit.CLAIM, False)


def test_name_from_template_status(kit) -> None:
    pod = pod_view(kit.pod(template=True, statuses=[{"name": kit.CLAIM, "resourceClaimName": "gen-1"}]))
    assert claim_name(pod, pod.resource_claims[0]) == ("gen-1", True)


def test_name_from_template_intentionally_not_created(kit) -> None:
    pod = pod_view(kit.pod(template=True, statuses=[{"name": kit.CLAIM, "resourceClaimName": None}]))
    assert claim_name(pod, pod.resource_claims[0]) == (None, True)


def test_name_from_template_without_status(kit) -> None:
    pod = pod_view(kit.pod(template=True, statuses=[{"name": "other", "resourceClaimName": "x"}]))
    with pytest.raises(ClaimNotCreatedError) as info:
        claim_name(pod, pod.resource_claims[0])
    assert str(info.value) == 'pod "test-namespace/test-pod": ResourceClaim not created yet'


def test_name_with_no_supported_field(kit) -> None:
    pod = pod_view(kit.pod())
    with pytest.raises(ApiUnsupportedError) as info:
        claim_name(pod, PodResourceClaim(name="weird"))
    assert str(info.value) == (
        'pod "test-namespace/test-pod", spec.resourceClaim "weird": none of the supported fields are set'
    )


def owner(uid, kind="Pod", api_version="v1", name="x", controller=True):
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": controller}


@pytest.mark.parametrize(
    ("claim_kwargs", "ok"),
    [
        ({"owner": owner("test-pod-uid")}, True),
        ({"owner": owner("test-pod-uid", controller=False)}, False),
        ({"owner": owner("someone-else")}, False),
        ({}, False),
        ({"owner": owner("test-pod-uid"), "namespace": "elsewhere"}, False),
    ],
)
def test_is_for_pod(kit, claim_kwargs, ok) -> None:
    pod = pod_view(kit.pod())
    claim = claim_view(kit.claim(**claim_kwargs))
    if ok:
        is_for_pod(pod, claim, pod_group_enabled=False)
        return
    with pytest.raises(KubeletError) as info:
        is_for_pod(pod, claim, pod_group_enabled=False)
    assert str(info.value) == (
        f"ResourceClaim {claim.namespace}/test-claim was not created for Pod test-namespace/test-pod "
        "(Pod is not owner)"
    )


def test_is_for_pod_group(kit) -> None:
    pod = pod_view(kit.pod(pod_group=kit.POD_GROUP))
    group_owner = owner(
        "pg-uid", kind="PodGroup", api_version="scheduling.k8s.io/v1alpha2", name=kit.POD_GROUP
    )
    claim = claim_view(kit.claim(owner=group_owner))
    is_for_pod(pod, claim, pod_group_enabled=True)
    with pytest.raises(KubeletError, match=r"\(Pod is not owner\)"):
        is_for_pod(pod, claim, pod_group_enabled=False)
    wrong = claim_view(kit.claim(owner=group_owner | {"name": "other-group"}))
    with pytest.raises(KubeletError) as info:
        is_for_pod(pod, wrong, pod_group_enabled=True)
    assert str(info.value) == (
        "ResourceClaim test-namespace/test-claim was not created for Pod test-namespace/test-pod or "
        "PodGroup test-namespace/test-podgroup (neither Pod nor PodGroup is the owner)"
    )


def test_is_reserved_for_pod(kit) -> None:
    pod = pod_view(kit.pod(pod_group=kit.POD_GROUP))
    assert is_reserved_for_pod(pod, claim_view(kit.claim()), pod_group_enabled=False)
    assert not is_reserved_for_pod(
        pod, claim_view(kit.claim(reserved_for=("other",))), pod_group_enabled=True
    )
    group = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": kit.POD_GROUP}
    claim = claim_view(kit.claim(reserved_for=(group,)))
    assert is_reserved_for_pod(pod, claim, pod_group_enabled=True)
    assert not is_reserved_for_pod(pod, claim, pod_group_enabled=False)
    other_kind = claim_view(kit.claim(reserved_for=(group | {"resource": "pods"},)))
    assert not is_reserved_for_pod(pod, other_kind, pod_group_enabled=True)
    lonely = pod_view(kit.pod())
    assert not is_reserved_for_pod(lonely, claim, pod_group_enabled=True)


def test_claim_view_reads_drivers_and_allocation(kit) -> None:
    view = claim_view(kit.claim(driver=["a", "b", "a"]))
    assert view.allocated
    assert view.result_drivers == ("a", "b", "a")
    assert view.uid == "test-claim-uid"
    assert not claim_view(kit.claim(allocated=False)).allocated


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda p: p["spec"].__setitem__("resourceClaims", {"name": "x"}),
            "pod test-namespace/test-pod: spec.resourceClaims: expected a list, got dict {'name': 'x'}",
        ),
        (
            lambda p: p["spec"]["resourceClaims"][0].__setitem__("resourceClaimName", 7),
            "pod test-namespace/test-pod: spec.resourceClaims[0].resourceClaimName: "
            "expected a string, got int 7",
        ),
        (
            lambda p: p["spec"]["containers"][0]["resources"].__setitem__("claims", ["x"]),
            "pod test-namespace/test-pod: spec.containers[0]: resources.claims[0]: "
            "expected an object, got str 'x'",
        ),
        (
            lambda p: p["metadata"].__setitem__("uid", None) or p["metadata"].__setitem__("name", 3),
            "pod test-namespace/3: metadata.name: expected a string, got int 3",
        ),
    ],
)
def test_malformed_pod_gets_a_specific_error(kit, mutate, message) -> None:
    pod = kit.pod()
    mutate(pod)
    with pytest.raises(MalformedObjectError) as info:
        pod_view(pod)
    assert str(info.value) == message
    assert isinstance(info.value, ConfigError)


def test_malformed_pod_fails_prepare_cleanly(harness, kit) -> None:
    pod = kit.pod()
    pod["status"] = "Running"
    with pytest.raises(KubeletError) as info:
        harness.manager.prepare_resources(pod)
    assert str(info.value) == (
        "prepare dynamic resources: pod test-namespace/test-pod: status: "
        "expected an object, got str 'Running'"
    )


def test_malformed_claim(kit) -> None:
    claim = kit.claim()
    claim["metadata"]["ownerReferences"] = [{"uid": "x", "controller": "yes"}]
    with pytest.raises(
        MalformedObjectError, match=r"metadata.ownerReferences\[0\].controller: expected a boolean"
    ):
        claim_view(claim)


@pytest.mark.parametrize(
    ("value", "zero"),
    [
        ("0", True),
        ("0m", True),
        ("0.0Gi", True),
        (0, True),
        ("1", False),
        ("500m", False),
        ("1e3", False),
        (2, False),
    ],
)
def test_quantity_is_zero(value, zero) -> None:
    assert quantity_is_zero(value) is zero


def test_bad_quantity() -> None:
    with pytest.raises(MalformedObjectError, match="expected a Kubernetes quantity"):
        quantity_is_zero("lots")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("example.com/gpu", True),
        ("deviceclass.resource.kubernetes.io/gpu-class", True),
        ("cpu", False),
        ("kubernetes.io/something", False),
        ("requests.example.com/gpu", False),
        ("Example.com/gpu", False),
        ("example.com/-gpu", False),
    ],
)
def test_is_dra_extended_resource_name(name, expected) -> None:
    assert is_dra_extended_resource_name(name) is expected
