"""MemoryCluster specifics beyond the shared Cluster contract."""

from __future__ import annotations

import pytest

from drasim.apiserver import MemoryCluster, ObjectStore
from drasim.apiserver.kinds import RESOURCE_GROUP
from drasim.errors import ApiError


def claim(api_version="resource.k8s.io/v1"):
    return {"apiVersion": api_version, "kind": "ResourceClaim", "metadata": {"name": "gpu"}, "spec": {}}


def test_claim_version_follows_the_emulated_kubelet():
    store = ObjectStore(served={RESOURCE_GROUP: ["v1beta1"]})
    MemoryCluster(store).create(claim("resource.k8s.io/v1beta1"))
    assert MemoryCluster(store, claim_version="v1beta1").get_resource_claim("default", "gpu")["metadata"][
        "name"
    ]
    with pytest.raises(ApiError) as err:
        MemoryCluster(store).get_resource_claim("default", "gpu")  # a 1.34 kubelet asks for v1
    assert err.value.code == 404


def test_namespaced_objects_default_to_the_default_namespace():
    cluster = MemoryCluster()
    created = cluster.create(claim())
    assert created["metadata"]["namespace"] == "default"
    assert (
        cluster.get("resource.k8s.io/v1", "ResourceClaim", "gpu")["metadata"]["uid"]
        == created["metadata"]["uid"]
    )


def test_status_update_on_a_kind_without_status_is_404():
    cluster = MemoryCluster()
    created = cluster.create(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"}, "spec": {}}
    )
    with pytest.raises(ApiError) as err:
        cluster.update_status(created)
    assert err.value.code == 404


def test_unknown_kind_and_patch_type_are_clear_errors():
    cluster = MemoryCluster()
    with pytest.raises(ApiError) as err:
        cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    assert err.value.message == 'no matches for kind "ConfigMap" in version "v1" on this server'
    with pytest.raises(ApiError) as err:
        cluster.create({"kind": "Pod", "metadata": {"name": "x"}})
    assert err.value.code == 400
    cluster.create(claim())
    with pytest.raises(ApiError) as err:
        cluster.patch("resource.k8s.io/v1", "ResourceClaim", "gpu", {}, "default", patch_type="apply")
    assert "unknown patch type 'apply'" in err.value.message


def test_watch_with_watch_list_options():
    cluster = MemoryCluster()
    cluster.create(claim())
    watch = cluster.watch(
        "resource.k8s.io/v1", "ResourceClaim", "default", send_initial_events=True, allow_bookmarks=True
    )
    first, second = watch.next(timeout=5), watch.next(timeout=5)
    watch.stop()
    assert (first.type, second.type) == ("ADDED", "BOOKMARK")
