"""The Cluster contract, run against MemoryCluster and KubeClientCluster (over HttpApiServer).

The same assertions against both faces prove the in-process and HTTP paths agree.
"""

from __future__ import annotations

import pytest

from drasim.apiserver import Cluster, MemoryCluster
from drasim.apiserver.kubeclient import KubeClientCluster
from drasim.errors import ApiError
from drasim.interfaces import ClaimReader

RV1 = "resource.k8s.io/v1"


@pytest.fixture(params=["memory", "kubeclient"])
def cluster(request, server):
    if request.param == "memory":
        return MemoryCluster(server.store)
    return KubeClientCluster(server.kubeconfig_path)


def claim(name="gpu", namespace="default", **extra):
    return {
        "apiVersion": RV1,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
        **extra,
    }


ALLOCATED = {
    "allocation": {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": "g0"}]}}
}


def test_satisfies_the_ports(cluster):
    assert isinstance(cluster, ClaimReader)
    assert isinstance(cluster, Cluster)


def test_claim_reader_get_and_404(cluster):
    with pytest.raises(ApiError) as err:
        cluster.get_resource_claim("default", "gpu")
    assert (err.value.code, err.value.reason) == (404, "NotFound")
    assert str(err.value) == 'resourceclaims.resource.k8s.io "gpu" not found'
    cluster.create(claim(status=ALLOCATED))
    got = cluster.get_resource_claim("default", "gpu")
    assert got["status"] == ALLOCATED
    assert got["apiVersion"] == RV1


def test_create_update_conflict_and_status(cluster):
    created = cluster.create(claim())
    assert "status" not in created
    updated = cluster.update({**created, "metadata": {**created["metadata"], "labels": {"a": "b"}}})
    assert updated["metadata"]["labels"] == {"a": "b"}
    with pytest.raises(ApiError) as err:
        cluster.update({**created, "metadata": {**created["metadata"], "labels": {"c": "d"}}})
    assert err.value.code == 409
    with_status = cluster.update_status({**updated, "status": ALLOCATED, "spec": {}})
    assert with_status["status"] == ALLOCATED
    assert with_status["spec"] == created["spec"]


def test_apply_creates_then_merges(cluster):
    first = cluster.apply(claim(status=ALLOCATED))
    assert first["status"] == ALLOCATED
    second = cluster.apply(
        {**claim(), "metadata": {"name": "gpu", "namespace": "default", "labels": {"x": "1"}}}
    )
    assert second["metadata"]["labels"] == {"x": "1"}
    assert second["metadata"]["uid"] == first["metadata"]["uid"]
    assert second["status"] == ALLOCATED


@pytest.mark.parametrize(
    ("patch_type", "patch"),
    [
        ("merge", {"metadata": {"labels": {"p": "q"}}}),
        ("json", [{"op": "add", "path": "/metadata/labels", "value": {"p": "q"}}]),
        ("strategic", {"metadata": {"labels": {"p": "q"}}}),
    ],
)
def test_patch_types(cluster, patch_type, patch):
    cluster.create(claim())
    patched = cluster.patch(RV1, "ResourceClaim", "gpu", patch, "default", patch_type=patch_type)
    assert patched["metadata"]["labels"] == {"p": "q"}


def test_patch_status_subresource(cluster):
    cluster.create(claim())
    patched = cluster.patch(
        RV1, "ResourceClaim", "gpu", {"status": ALLOCATED}, "default", subresource="status"
    )
    assert patched["status"] == ALLOCATED


def test_list_selectors_delete_and_delete_collection(cluster):
    for node in ("n1", "n2"):
        cluster.create(
            {
                "apiVersion": RV1,
                "kind": "ResourceSlice",
                "metadata": {"name": f"{node}-gpu", "labels": {"node": node}},
                "spec": {"nodeName": node, "driver": "gpu.example.com", "pool": {"name": node}},
            }
        )
    names = [
        s["metadata"]["name"] for s in cluster.list(RV1, "ResourceSlice", field_selector="spec.nodeName=n2")
    ]
    assert names == ["n2-gpu"]
    assert len(cluster.list(RV1, "ResourceSlice", label_selector="node")) == 2
    victim = cluster.get(RV1, "ResourceSlice", "n1-gpu")
    with pytest.raises(ApiError) as err:
        cluster.delete(RV1, "ResourceSlice", "n1-gpu", uid="wrong")
    assert err.value.code == 409
    cluster.delete(RV1, "ResourceSlice", "n1-gpu", uid=victim["metadata"]["uid"])
    deleted = cluster.delete_collection(RV1, "ResourceSlice", field_selector="spec.driver=gpu.example.com")
    assert [d["metadata"]["name"] for d in deleted] == ["n2-gpu"]
    assert cluster.list(RV1, "ResourceSlice") == []


def test_watch_resumes_from_resource_version_in_order(cluster):
    first = cluster.create(claim("a"))
    cluster.create(claim("b"))
    cluster.delete(RV1, "ResourceClaim", "a", "default")
    watch = cluster.watch(
        RV1, "ResourceClaim", "default", resource_version=first["metadata"]["resourceVersion"]
    )
    try:
        events = [watch.next(timeout=5) for _ in range(2)]
        cluster.create(claim("c"))
        events.append(watch.next(timeout=5))
    finally:
        watch.stop()
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"),
        ("DELETED", "a"),
        ("ADDED", "c"),
    ]
    rvs = [int(e.resource_version) for e in events]
    assert rvs == sorted(rvs)


def test_reset_forgets_objects(cluster, server):
    cluster.create(claim())
    cluster.reset()
    assert MemoryCluster(server.store).list(RV1, "ResourceClaim") == []


def test_unserved_version_is_404(cluster):
    with pytest.raises(ApiError) as err:
        cluster.get("resource.k8s.io/v1beta1", "ResourceClaim", "gpu")
    assert err.value.code == 404


def test_served_beta_version_reads_the_same_object(cluster):
    cluster.create(claim())
    beta = cluster.get("resource.k8s.io/v1beta2", "ResourceClaim", "gpu", "default")
    assert beta["apiVersion"] == "resource.k8s.io/v1beta2"
