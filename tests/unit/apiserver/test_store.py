"""ObjectStore: identity, resourceVersions, generation, conflicts, preconditions, status, versions."""

from __future__ import annotations

import re
import threading

import pytest

from drasim.apiserver.kinds import RESOURCE_GROUP
from drasim.apiserver.store import ObjectStore
from drasim.errors import ApiError

V1 = "v1"


@pytest.fixture
def store():
    return ObjectStore(seed=1)


def rt(store, resource, group=RESOURCE_GROUP, version="v1"):
    return store.registry.resource(group, version, resource)


def claim(name="gpu", **extra):
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": {}}, **extra}


def test_create_sets_identity_and_serves_api_version(store):
    rc = rt(store, "resourceclaims")
    before = store.resource_version
    created = store.create(rc, V1, claim())
    md = created["metadata"]
    assert created["apiVersion"] == "resource.k8s.io/v1"
    assert created["kind"] == "ResourceClaim"
    assert re.fullmatch(r"[0-9a-f-]{36}", md["uid"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", md["creationTimestamp"])
    assert md["resourceVersion"] == str(before + 1)
    assert md["generation"] == 1
    assert store.get(rc, V1, "default", "gpu") == created


def test_generate_name_uses_five_kubernetes_alphabet_chars(store):
    rs = rt(store, "resourceslices")
    names = {
        store.create(rs, V1, {"metadata": {"generateName": "node-1-gpu-"}, "spec": {}})["metadata"]["name"]
        for _ in range(20)
    }
    assert len(names) == 20
    for name in names:
        assert re.fullmatch(r"node-1-gpu-[bcdfghjklmnpqrstvwxz2456789]{5}", name)


def test_create_without_name_is_422(store):
    with pytest.raises(ApiError) as err:
        store.create(rt(store, "deviceclasses"), V1, {"metadata": {}})
    assert err.value.code == 422
    assert "name or generateName is required" in err.value.message


def test_duplicate_create_is_409_already_exists(store):
    rc = rt(store, "resourceclaims")
    store.create(rc, V1, claim())
    with pytest.raises(ApiError) as err:
        store.create(rc, V1, claim())
    assert (err.value.code, err.value.reason) == (409, "AlreadyExists")
    assert err.value.message == 'resourceclaims.resource.k8s.io "gpu" already exists'


def test_namespace_mismatch_is_400(store):
    with pytest.raises(ApiError) as err:
        store.create(rt(store, "resourceclaims"), V1, claim(), "other")
    assert err.value.code == 400


def test_cluster_scoped_objects_drop_namespace(store):
    node = store.create(rt(store, "nodes", ""), V1, {"metadata": {"name": "n1", "namespace": "x"}})
    assert "namespace" not in node["metadata"]
    assert store.get(rt(store, "nodes", ""), V1, "", "n1")["metadata"]["name"] == "n1"


def test_namespaced_get_needs_namespace(store):
    with pytest.raises(ApiError) as err:
        store.get(rt(store, "resourceclaims"), V1, "", "gpu")
    assert err.value.code == 400


def test_resource_versions_increase_across_kinds_and_threads(store):
    rc, rs = rt(store, "resourceclaims"), rt(store, "resourceslices")
    seen: list[int] = []
    lock = threading.Lock()

    def writer(prefix: str) -> None:
        for i in range(25):
            obj = store.create(rc, V1, claim(f"{prefix}{i}"))
            s = store.create(rs, V1, {"metadata": {"name": f"{prefix}{i}"}, "spec": {}})
            with lock:
                seen.extend([int(obj["metadata"]["resourceVersion"]), int(s["metadata"]["resourceVersion"])])

    threads = [threading.Thread(target=writer, args=(p,)) for p in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 200
    assert max(seen) == store.resource_version


def test_update_with_stale_resource_version_is_409_conflict(store):
    rc = rt(store, "resourceclaims")
    first = store.create(rc, V1, claim())
    second = store.update(rc, V1, {**first, "spec": {"devices": {"requests": []}}})
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    assert second["metadata"]["generation"] == 2
    with pytest.raises(ApiError) as err:
        store.update(rc, V1, {**first, "spec": {"x": 1}})
    assert (err.value.code, err.value.reason) == (409, "Conflict")
    assert err.value.message == (
        'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "gpu": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )


def test_update_without_resource_version_is_unconditional(store):
    rc = rt(store, "resourceclaims")
    store.create(rc, V1, claim())
    updated = store.update(rc, V1, {"metadata": {"name": "gpu", "namespace": "default"}, "spec": {"a": 1}})
    assert updated["spec"] == {"a": 1}


def test_update_of_missing_object_is_404(store):
    with pytest.raises(ApiError) as err:
        store.update(rt(store, "resourceclaims"), V1, claim())
    assert err.value.code == 404
    assert err.value.message == 'resourceclaims.resource.k8s.io "gpu" not found'


def test_noop_update_keeps_resource_version(store):
    rc = rt(store, "resourceclaims")
    created = store.create(rc, V1, claim())
    again = store.update(rc, V1, created)
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert store.resource_version == int(created["metadata"]["resourceVersion"])


def test_update_keeps_immutable_metadata_and_label_change_keeps_generation(store):
    rc = rt(store, "resourceclaims")
    created = store.create(rc, V1, claim())
    body = {**created, "metadata": {**created["metadata"], "uid": "", "labels": {"a": "b"}}}
    body["metadata"]["creationTimestamp"] = "2000-01-01T00:00:00Z"
    updated = store.update(rc, V1, body)
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    assert updated["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]
    assert updated["metadata"]["labels"] == {"a": "b"}
    assert updated["metadata"]["generation"] == 1


def test_update_with_wrong_uid_is_409(store):
    rc = rt(store, "resourceclaims")
    created = store.create(rc, V1, claim())
    created["metadata"]["uid"] = "other"
    with pytest.raises(ApiError) as err:
        store.update(rc, V1, created)
    assert err.value.code == 409
    assert "Precondition failed: UID in precondition: other" in err.value.message


def test_status_subresource_separates_spec_and_status(store):
    rc = rt(store, "resourceclaims")
    created = store.create(rc, V1, claim(status={"allocation": {"x": 1}}))
    assert "status" not in created  # claims start unallocated, as upstream
    with_status = store.update(
        rc, V1, {**created, "spec": {"ignored": True}, "status": {"allocation": {"devices": {}}}}, status=True
    )
    assert with_status["spec"] == {"devices": {}}
    assert with_status["status"] == {"allocation": {"devices": {}}}
    assert with_status["metadata"]["generation"] == 1
    main = store.update(rc, V1, {**with_status, "spec": {"devices": {"a": 1}}, "status": {}})
    assert main["status"] == {"allocation": {"devices": {}}}
    assert main["spec"] == {"devices": {"a": 1}}
    assert main["metadata"]["generation"] == 2


def test_status_update_ignores_metadata_changes(store):
    rc = rt(store, "resourceclaims")
    created = store.create(rc, V1, claim())
    body = {**created, "metadata": {**created["metadata"], "labels": {"x": "y"}}, "status": {"a": 1}}
    updated = store.update(rc, V1, body, status=True)
    assert "labels" not in updated["metadata"]
    assert updated["status"] == {"a": 1}


def test_delete_preconditions(store):
    rc = rt(store, "resourceclaims")
    created = store.create(rc, V1, claim())
    with pytest.raises(ApiError) as err:
        store.delete(rc, V1, "default", "gpu", uid="nope")
    assert err.value.code == 409
    assert "the UID in the precondition (nope) does not match the UID in record (" in err.value.message
    with pytest.raises(ApiError) as err:
        store.delete(rc, V1, "default", "gpu", resource_version="1")
    assert "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (" in (
        err.value.message
    )
    deleted = store.delete(
        rc,
        V1,
        "default",
        "gpu",
        uid=created["metadata"]["uid"],
        resource_version=created["metadata"]["resourceVersion"],
    )
    assert deleted["metadata"]["uid"] == created["metadata"]["uid"]
    with pytest.raises(ApiError) as err:
        store.get(rc, V1, "default", "gpu")
    assert err.value.code == 404


def test_delete_with_finalizers_waits_for_their_removal(store):
    rc = rt(store, "resourceclaims")
    created = store.create(
        rc, V1, claim(metadata={"name": "gpu", "namespace": "default", "finalizers": ["example.com/f"]})
    )
    marked = store.delete(rc, V1, "default", "gpu")
    assert marked["metadata"]["deletionTimestamp"]
    assert store.get(rc, V1, "default", "gpu")["metadata"]["deletionTimestamp"]
    assert marked["metadata"]["uid"] == created["metadata"]["uid"]
    store.update(rc, V1, {**marked, "metadata": {**marked["metadata"], "finalizers": []}})
    with pytest.raises(ApiError):
        store.get(rc, V1, "default", "gpu")


def test_list_and_delete_collection_with_selectors(store):
    rs = rt(store, "resourceslices")
    for node in ("node-1", "node-2"):
        for driver in ("gpu.example.com", "nic.example.com"):
            store.create(
                rs,
                V1,
                {
                    "metadata": {"generateName": f"{node}-", "labels": {"node": node}},
                    "spec": {"nodeName": node, "driver": driver},
                },
            )
    items, rv = store.list(rs, V1, field_selector="spec.nodeName=node-1")
    assert len(items) == 2
    assert rv == store.resource_version
    items, _ = store.list(
        rs, V1, label_selector="node in (node-2)", field_selector="spec.driver=gpu.example.com"
    )
    assert [i["spec"] for i in items] == [{"nodeName": "node-2", "driver": "gpu.example.com"}]
    deleted = store.delete_collection(
        rs, V1, field_selector="spec.nodeName=node-1,spec.driver=nic.example.com"
    )
    assert [d["spec"]["driver"] for d in deleted] == ["nic.example.com"]
    assert len(store.list(rs, V1)[0]) == 3


def test_list_is_namespaced_and_sorted(store):
    rc = rt(store, "resourceclaims")
    store.create(rc, V1, {"metadata": {"name": "b", "namespace": "ns2"}})
    store.create(rc, V1, {"metadata": {"name": "a", "namespace": "ns2"}})
    store.create(rc, V1, {"metadata": {"name": "c", "namespace": "ns1"}})
    all_items, _ = store.list(rc, V1)
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in all_items] == [
        ("ns1", "c"),
        ("ns2", "a"),
        ("ns2", "b"),
    ]
    assert [i["metadata"]["name"] for i in store.list(rc, V1, "ns2")[0]] == ["a", "b"]


def test_objects_are_served_under_each_configured_version():
    store = ObjectStore(served={RESOURCE_GROUP: ["v1", "v1beta1"]})
    v1 = store.registry.resource(RESOURCE_GROUP, "v1", "resourceclaims")
    beta = store.registry.resource(RESOURCE_GROUP, "v1beta1", "resourceclaims")
    store.create(v1, "v1", claim())
    assert store.get(beta, "v1beta1", "default", "gpu")["apiVersion"] == "resource.k8s.io/v1beta1"
    with pytest.raises(ApiError) as err:
        store.registry.resource(RESOURCE_GROUP, "v1beta2", "resourceclaims")
    assert err.value.code == 404


def test_bad_served_version_configuration_is_rejected():
    with pytest.raises(ValueError, match="cannot serve"):
        ObjectStore(served={RESOURCE_GROUP: ["v2"]})


def test_default_namespaces_exist_and_reset_restores_them(store):
    ns = rt(store, "namespaces", "")
    assert [n["metadata"]["name"] for n in store.list(ns, V1)[0]] == ["default", "kube-system"]
    store.create(rt(store, "resourceclaims"), V1, claim())
    rv = store.resource_version
    store.reset()
    assert store.list(rt(store, "resourceclaims"), V1)[0] == []
    assert len(store.list(ns, V1)[0]) == 2
    assert store.resource_version > rv


def test_deleting_a_namespace_deletes_what_is_in_it(store):
    ns, rc, pods = rt(store, "namespaces", ""), rt(store, "resourceclaims"), rt(store, "pods", "")
    store.create(ns, V1, {"metadata": {"name": "team"}})
    store.create(rc, V1, {"metadata": {"name": "gpu", "namespace": "team"}, "spec": {"devices": {}}})
    store.create(pods, V1, {"metadata": {"name": "a", "namespace": "team"}, "spec": {}})
    store.create(rc, V1, claim())  # in default: stays
    watch = store.watch(rc, V1, "team")
    store.delete(ns, V1, "", "team")
    assert store.list(rc, V1, "team")[0] == []
    assert store.list(pods, V1, "team")[0] == []
    assert [c["metadata"]["name"] for c in store.list(rc, V1, "default")[0]] == ["gpu"]
    assert [e.type for e in (watch.next(timeout=1), watch.next(timeout=1))] == ["ADDED", "DELETED"]
    watch.stop()
