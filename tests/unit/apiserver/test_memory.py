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


class Calls:
    def __init__(self):
        self.events = []

    def record(self, kind, **fields):
        self.events.append((kind, {k: v for k, v in fields.items() if k != "duration"}))


def test_shared_reads_serve_one_copy_per_stored_version():
    calls = Calls()
    store = ObjectStore(recorder=calls)
    writer = MemoryCluster(store)
    kubelet = MemoryCluster(store, client="kubelet", shared_reads=True)
    writer.create(claim())
    first = kubelet.get_resource_claim("default", "gpu")
    assert kubelet.get_resource_claim("default", "gpu") is first
    # the shared copy equals what a plain read serves, and is not the stored object
    assert first == writer.get_resource_claim("default", "gpu")
    assert first is not store._existing(
        store.registry.by_kind("resource.k8s.io/v1", "ResourceClaim")[0], "default", "gpu"
    )
    # a write stores a new version: the next shared read serves it
    changed = dict(first, spec={"devices": {"requests": []}})
    writer.update(changed)
    second = kubelet.get_resource_claim("default", "gpu")
    assert second is not first
    assert second["spec"] == {"devices": {"requests": []}}
    assert second["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]
    # after a delete it is a 404 again, and every read was journaled like a plain one
    writer.delete("resource.k8s.io/v1", "ResourceClaim", "gpu", "default")
    with pytest.raises(ApiError) as err:
        kubelet.get_resource_claim("default", "gpu")
    assert err.value.code == 404
    gets = [fields for kind, fields in calls.events if kind == "api" and fields["verb"] == "get"]
    assert [(g["client"], g["code"]) for g in gets] == [
        ("kubelet", 200),
        ("kubelet", 200),
        ("in-process", 200),
        ("kubelet", 200),
        ("kubelet", 404),
    ]
    assert {g["name"] for g in gets} == {"gpu"}
    assert {g["namespace"] for g in gets} == {"default"}


def test_shared_reads_follow_the_claim_version():
    store = ObjectStore(served={RESOURCE_GROUP: ["v1beta1", "v1"]})
    MemoryCluster(store).create(claim())
    kubelet = MemoryCluster(store, claim_version="v1beta1", shared_reads=True)
    assert kubelet.get_resource_claim("default", "gpu")["apiVersion"] == "resource.k8s.io/v1beta1"
    kubelet.claim_version = "v1"
    assert kubelet.get_resource_claim("default", "gpu")["apiVersion"] == "resource.k8s.io/v1"


@pytest.mark.parametrize("name", [float("nan"), float("inf"), b"raw", ["x"]])
def test_a_malformed_name_is_journaled_as_json(name) -> None:
    """API calls are journaled through the unchecked fast path only when name and namespace
    are strings; a malformed object's name goes through the checked path (valid JSON lines)."""
    import contextlib
    import json

    from drasim.journal import Journal

    journal = Journal()
    cluster = MemoryCluster(ObjectStore(recorder=journal))
    obj = claim()
    obj["metadata"]["name"] = name
    with contextlib.suppress(ApiError):  # refused or not, the call is journaled
        cluster.create(obj)
    (event,) = journal.events("api")
    assert event["name"] is not name  # a JSON copy, not the caller's object
    for line in journal.to_jsonl().splitlines():
        json.loads(line, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    cluster.create(claim())
    assert journal.events("api")[-1]["name"] == "gpu"
