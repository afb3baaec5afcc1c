"""The store under hostile or buggy writes: validation, watcher isolation, patch bounds, queue bounds.

Each case here answered 500, hung, or stored an unreadable object before issue #29.
"""

from __future__ import annotations

import json

import pytest

from drasim.apiserver import validation
from drasim.apiserver.kinds import RESOURCE_GROUP
from drasim.apiserver.patch import MAX_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS, MAX_PATCHED_BYTES
from drasim.apiserver.port import JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH
from drasim.apiserver.store import ObjectStore
from drasim.errors import ApiError

V1 = "v1"


@pytest.fixture
def store() -> ObjectStore:
    return ObjectStore(seed=1)


def rt(store, resource, group=RESOURCE_GROUP):
    return store.registry.resource(group, V1, resource)


def core(store, resource):
    return store.registry.resource("", V1, resource)


def claim(name="gpu", **meta):
    return {"metadata": {"name": name, "namespace": "default", **meta}, "spec": {"devices": {}}}


def code_of(call) -> int:
    with pytest.raises(ApiError) as err:
        call()
    return err.value.code


# ------------------------------------------------------------- the #1 report
def test_a_merge_patch_cannot_store_labels_that_are_not_a_map_of_strings(store):
    rc = rt(store, "resourceclaims")
    store.create(rc, V1, claim("a"))
    with store.watch(rc, V1, "default", label_selector="x") as selected, store.watch(rc, V1) as other:
        for labels in (5, ["x"], {"x": 5}, {"x": None, "y": {"z": "1"}}):
            patch = {"metadata": {"labels": labels}}
            assert (
                code_of(lambda p=patch: store.patch(rc, V1, "default", "a", body=p, content_type=MERGE_PATCH))
                == 422
            )
        # LIST and WATCH with a label selector keep working, and later writes are ordinary
        assert store.list(rc, V1, "default", label_selector="x")[0] == []
        store.patch(
            rc, V1, "default", "a", body={"metadata": {"labels": {"x": "1"}}}, content_type=MERGE_PATCH
        )
        store.delete(rc, V1, "default", "a")
        assert [e.type for e in _drain(selected)] == ["ADDED", "DELETED"]
        assert [e.type for e in _drain(other)] == ["ADDED", "MODIFIED", "DELETED"]


def _drain(watch):
    events = []
    while (event := watch.next(timeout=0)) is not None:
        events.append(event)
    return events


def test_one_failing_watcher_loses_no_event_for_the_others_and_fails_no_write(store):
    rc = rt(store, "resourceclaims")
    watches = [store.watch(rc, V1) for _ in range(3)]
    broken = watches[1]

    def explode(_obj):
        raise RuntimeError("a watcher that cannot render")

    broken._render = explode
    created = store.create(rc, V1, claim("a"))  # committed and answered although a watcher failed
    store.patch(rc, V1, "default", "a", body={"metadata": {"labels": {"x": "1"}}}, content_type=MERGE_PATCH)
    store.delete(rc, V1, "default", "a")
    assert created["metadata"]["name"] == "a"
    for watch in (watches[0], watches[2]):
        assert [e.type for e in _drain(watch)] == ["ADDED", "MODIFIED", "DELETED"]
    assert broken.stopped
    assert broken.dropped  # its client lists again, as after a dropped watch
    assert broken.next(timeout=0) is None


# ------------------------------------------------------------------ names
INVALID_NAMES = [
    ("nodes", "a/b"),
    ("nodes", "A"),
    ("nodes", "-a"),
    ("nodes", "a_b"),
    ("nodes", "a" * 254),
    ("nodes", ".."),
    ("nodes", "a%2Fb"),
    ("namespaces", "a.b"),
    ("namespaces", "a" * 64),
    ("pods", "Pod"),
    ("pods", "a b"),
    ("events", ".."),
    ("events", "a/b"),
    ("events", "a%b"),
    ("resourceclaims", "UPPER"),
    ("resourceslices", "a..b"),
    ("deviceclasses", "gpu/x"),
    ("resourceclaimtemplates", "t!"),
]


CORE = ("nodes", "namespaces", "pods", "events")


def _manifest(rtype, name):
    md = {"name": name}
    if rtype.namespaced:
        md["namespace"] = "default"
    return (
        {"metadata": md, "spec": {"devices": []}} if rtype.resource == "resourceslices" else {"metadata": md}
    )


@pytest.mark.parametrize(("resource", "name"), INVALID_NAMES)
def test_names_kube_apiserver_refuses_are_422(store, resource, name):
    rtype = core(store, resource) if resource in CORE else rt(store, resource)
    with pytest.raises(ApiError) as err:
        store.create(rtype, V1, _manifest(rtype, name), "default")
    assert err.value.code == 422
    assert "metadata.name" in err.value.message


@pytest.mark.parametrize(
    ("resource", "name"),
    [
        ("nodes", "node-1.example.com"),
        ("namespaces", "team-a"),
        ("events", "pod.17a3b"),
        ("events", "Weird_Name"),
    ],
)
def test_names_kube_apiserver_accepts_are_stored(store, resource, name):
    rtype = core(store, resource)
    store.create(rtype, V1, _manifest(rtype, name), "default")
    assert store.get(rtype, V1, "default", name)["metadata"]["name"] == name


@pytest.mark.parametrize(
    ("meta", "field"),
    [
        ({"labels": {"bad key!": "v"}}, "metadata.labels"),
        ({"labels": {"k": "v" * 64}}, "metadata.labels"),
        ({"labels": {"example.com/k": "-v"}}, "metadata.labels"),
        ({"annotations": {"a/b/c": "v"}}, "metadata.annotations"),
        ({"annotations": {"big": "x" * (256 * 1024)}}, "metadata.annotations"),
        ({"finalizers": ["plain"]}, "metadata.finalizers[0]"),
        ({"finalizers": ["example.com/a b"]}, "metadata.finalizers[0]"),
        (
            {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p"}]},
            "metadata.ownerReferences[0].uid",
        ),
    ],
)
def test_metadata_kube_apiserver_refuses_is_422_with_the_field(store, meta, field):
    with pytest.raises(ApiError) as err:
        store.create(rt(store, "resourceclaims"), V1, claim("a", **meta))
    assert err.value.code == 422
    assert any(c["field"] == field for c in err.value.details["causes"]), err.value.details


def test_a_bad_namespace_in_the_request_is_422(store):
    with pytest.raises(ApiError) as err:
        store.create(rt(store, "resourceclaims"), V1, {"metadata": {"name": "a"}}, "Not_A_Label")
    assert err.value.code == 422
    assert "metadata.namespace" in err.value.message


# ------------------------------------------------------------------ shapes
@pytest.mark.parametrize(
    "body",
    [
        {"metadata": "x"},
        {"metadata": ["a"]},
        {"metadata": {"name": "a", "generateName": ["a"]}},
        {"metadata": {"generateName": ["a"]}},
        {"metadata": {"name": 5}},
        {"metadata": {"name": "a", "labels": 5}},
        {"metadata": {"name": "a", "annotations": {"k": 1}}},
        {"metadata": {"name": "a", "finalizers": "example.com/f"}},
        {"metadata": {"name": "a", "ownerReferences": [5]}},
        {"metadata": {"name": "a", "generation": "1"}},
        {"metadata": {"name": "a"}, "spec": "x"},
    ],
)
def test_wrong_shaped_bodies_are_400_on_create_and_update(store, body):
    rc = rt(store, "resourceclaims")
    store.create(rc, V1, claim("a"))
    assert code_of(lambda: store.create(rc, V1, body, "default")) == 400
    assert code_of(lambda: store.update(rc, V1, body, "default")) == 400
    assert code_of(lambda: store.update(rc, V1, body, "default", status=True)) == 400


def test_a_patch_that_leaves_the_wrong_shape_is_422(store):
    rc = rt(store, "resourceclaims")
    store.create(rc, V1, claim("a"))
    for ctype, body in [
        (MERGE_PATCH, {"metadata": {"annotations": [1]}}),
        (STRATEGIC_PATCH, {"metadata": {"finalizers": [5]}}),
        (JSON_PATCH, [{"op": "replace", "path": "/spec", "value": 3}]),
    ]:
        with pytest.raises(ApiError) as err:
            store.patch(rc, V1, "default", "a", body=body, content_type=ctype)
        assert err.value.code == 422
        assert err.value.details["causes"][0]["field"] == "patch"


def test_null_metadata_entries_are_unset_not_stored(store):
    created = store.create(rt(store, "resourceclaims"), V1, claim("a", labels=None, annotations=None))
    assert "labels" not in created["metadata"]
    assert "annotations" not in created["metadata"]


# ----------------------------------------------------------------- patches
def test_the_copy_bomb_is_refused_at_the_copy_limit_and_stores_nothing(store):
    rc = rt(store, "resourceclaims")
    store.create(rc, V1, {**claim("a"), "spec": {"a": ["x" * 100]}})
    before = store.resource_version
    bomb = [{"op": "copy", "from": "/spec/a", "path": "/spec/a/-"}] * 40  # doubling: 2**40 items unbounded
    with pytest.raises(ApiError) as err:
        store.patch(rc, V1, "default", "a", body=bomb, content_type=JSON_PATCH)
    assert err.value.code == 422
    assert f"above the limit of {MAX_COPY_BYTES}" in err.value.message
    assert store.resource_version == before
    assert store.get(rc, V1, "default", "a")["spec"] == {"a": ["x" * 100]}


def test_too_many_json_patch_operations_are_413(store):
    rc = rt(store, "resourceclaims")
    store.create(rc, V1, claim("a"))
    ops = [{"op": "test", "path": "/metadata/name", "value": "a"}] * (MAX_JSON_PATCH_OPERATIONS + 1)
    with pytest.raises(ApiError) as err:
        store.patch(rc, V1, "default", "a", body=ops, content_type=JSON_PATCH)
    assert err.value.code == 413
    store.patch(rc, V1, "default", "a", body=ops[:MAX_JSON_PATCH_OPERATIONS], content_type=JSON_PATCH)


def test_a_patched_object_above_the_size_limit_is_413_and_not_stored(store):
    rc = rt(store, "resourceclaims")
    store.create(rc, V1, claim("a"))
    half = "x" * (MAX_PATCHED_BYTES // 2)
    store.patch(rc, V1, "default", "a", body={"spec": {"one": half}}, content_type=MERGE_PATCH)
    before = store.resource_version
    with pytest.raises(ApiError) as err:
        store.patch(rc, V1, "default", "a", body={"spec": {"two": half}}, content_type=MERGE_PATCH)
    assert err.value.code == 413
    assert store.resource_version == before
    assert len(json.dumps(store.get(rc, V1, "default", "a"))) < MAX_PATCHED_BYTES


# ------------------------------------------------------------ watch queues
def test_a_watcher_that_stops_reading_is_dropped_once_its_queue_is_full():
    store = ObjectStore(watch_queue=5)
    rc = rt(store, "resourceclaims")
    for i in range(3):
        store.create(rc, V1, claim(f"pre{i}"))
    with store.watch(rc, V1) as stalled, store.watch(rc, V1) as reader:
        # the 3 initial ADDED events do not count against the bound
        for i in range(8):
            store.create(rc, V1, claim(f"c{i}"))
            assert reader.next(timeout=0) is not None  # a reader that keeps up is never dropped
        assert stalled.dropped
        names = [e.object["metadata"]["name"] for e in _drain(stalled)]
        assert names[3:] == ["c0", "c1", "c2", "c3", "c4"]  # what was queued is still delivered, then the end
    assert not reader.dropped


def test_the_watch_queue_bound_must_be_positive():
    with pytest.raises(ValueError, match="at least one event"):
        ObjectStore(watch_queue=0)


def test_validation_rules_match_upstream_examples():
    assert validation.dns_subdomain("my-name.example.com") == []
    assert validation.dns_label("my-name") == []
    assert validation.dns_label("a.b") == ["must not contain dots"]
    assert validation.qualified_name("example.com/MyName") == []
    assert validation.qualified_name("MyName") == []
    assert validation.qualified_name("/a")
    assert validation.label_value("") == []
    assert validation.label_value("my_value") == []
    assert validation.path_segment(".") == ["may not be '.'"]
