"""Store watches: order, resume from a resourceVersion, bounded history (410), selectors, watch-list."""

from __future__ import annotations

import pytest

from drasim.apiserver.kinds import RESOURCE_GROUP
from drasim.apiserver.store import ObjectStore
from drasim.apiserver.watch import INITIAL_EVENTS_END
from drasim.errors import ApiError

V1 = "v1"


@pytest.fixture
def store():
    return ObjectStore(history=50)


@pytest.fixture
def rs(store):
    return store.registry.resource(RESOURCE_GROUP, V1, "resourceslices")


def slice_obj(name, node="node-1", driver="gpu.example.com"):
    return {"metadata": {"name": name}, "spec": {"nodeName": node, "driver": driver}}


def drain(watch, count):
    events = []
    for _ in range(count):
        event = watch.next(timeout=5)
        assert event is not None, f"expected {count} events, got {events}"
        events.append(event)
    return events


def test_live_events_arrive_in_order_with_their_types(store, rs):
    watch = store.watch(rs, V1, resource_version=str(store.resource_version))
    created = store.create(rs, V1, slice_obj("a"))
    store.update(rs, V1, {**created, "spec": {"nodeName": "node-1", "driver": "gpu.example.com", "x": 1}})
    store.delete(rs, V1, "", "a")
    events = drain(watch, 3)
    assert [e.type for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    rvs = [int(e.resource_version) for e in events]
    assert rvs == sorted(rvs)
    assert len(set(rvs)) == 3
    assert watch.next(timeout=0.01) is None
    watch.stop()


def test_resume_from_resource_version_replays_everything_after_it(store, rs):
    first = store.create(rs, V1, slice_obj("a"))
    mark = first["metadata"]["resourceVersion"]
    for name in "bcdef":
        store.create(rs, V1, slice_obj(name))
    store.delete(rs, V1, "", "c")
    with store.watch(rs, V1, resource_version=mark) as watch:
        events = drain(watch, 6)
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"),
        ("ADDED", "c"),
        ("ADDED", "d"),
        ("ADDED", "e"),
        ("ADDED", "f"),
        ("DELETED", "c"),
    ]
    assert all(int(e.resource_version) > int(mark) for e in events)


def test_resume_from_an_evicted_resource_version_is_410_expired():
    store = ObjectStore(history=3)
    rs = store.registry.resource(RESOURCE_GROUP, V1, "resourceslices")
    start = store.resource_version
    for name in "abcde":
        store.create(rs, V1, slice_obj(name))
    with pytest.raises(ApiError) as err:
        store.watch(rs, V1, resource_version=str(start))
    assert (err.value.code, err.value.reason) == (410, "Expired")
    assert err.value.message.startswith(f"too old resource version: {start} (")
    # the newest entries are still resumable
    recent = store.watch(rs, V1, resource_version=str(store.resource_version - 2))
    assert [e.object["metadata"]["name"] for e in drain(recent, 2)] == ["d", "e"]


def test_unset_resource_version_sends_current_state_then_changes(store, rs):
    store.create(rs, V1, slice_obj("a"))
    watch = store.watch(rs, V1)
    store.create(rs, V1, slice_obj("b"))
    assert [(e.type, e.object["metadata"]["name"]) for e in drain(watch, 2)] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
    ]


def test_field_selector_turns_transitions_into_added_and_deleted(store, rs):
    watch = store.watch(rs, V1, field_selector="spec.nodeName=node-1", send_initial_events=False)
    obj = store.create(rs, V1, slice_obj("a", node="node-2"))
    moved = store.update(rs, V1, {**obj, "spec": {"nodeName": "node-1", "driver": "d"}})
    store.update(rs, V1, {**moved, "spec": {"nodeName": "node-1", "driver": "e"}})
    store.update(rs, V1, {**moved, "metadata": {"name": "a"}, "spec": {"nodeName": "node-3", "driver": "e"}})
    assert [e.type for e in drain(watch, 3)] == ["ADDED", "MODIFIED", "DELETED"]
    assert watch.next(timeout=0.01) is None


def test_watch_list_ends_initial_events_with_annotated_bookmark(store, rs):
    store.create(rs, V1, slice_obj("a"))
    store.create(rs, V1, slice_obj("b", driver="other"))
    watch = store.watch(
        rs, V1, field_selector="spec.driver=gpu.example.com", send_initial_events=True, allow_bookmarks=True
    )
    added, mark = drain(watch, 2)
    assert (added.type, added.object["metadata"]["name"]) == ("ADDED", "a")
    assert mark.type == "BOOKMARK"
    assert mark.object["metadata"]["annotations"] == {INITIAL_EVENTS_END: "true"}
    assert mark.object["metadata"]["resourceVersion"] == str(store.resource_version)
    assert mark.object["apiVersion"] == "resource.k8s.io/v1"


def test_watch_is_per_namespace(store):
    rc = store.registry.resource(RESOURCE_GROUP, V1, "resourceclaims")
    watch = store.watch(rc, V1, "ns1", send_initial_events=False)
    store.create(rc, V1, {"metadata": {"name": "x", "namespace": "ns2"}})
    store.create(rc, V1, {"metadata": {"name": "y", "namespace": "ns1"}})
    (event,) = drain(watch, 1)
    assert event.object["metadata"]["name"] == "y"


def test_drop_after_ends_the_stream(store, rs):
    watch = store.watch(rs, V1, send_initial_events=False, drop_after=1)
    store.create(rs, V1, slice_obj("a"))
    store.create(rs, V1, slice_obj("b"))
    assert [e.object["metadata"]["name"] for e in watch] == ["a"]
    assert watch.dropped


def test_reset_ends_watches_and_old_versions_expire(store, rs):
    mark = str(store.resource_version)
    watch = store.watch(rs, V1, send_initial_events=False)
    store.reset()
    assert watch.next(timeout=5) is None
    assert watch.stopped
    with pytest.raises(ApiError) as err:
        store.watch(rs, V1, resource_version=mark)
    assert err.value.code == 410


def test_bad_resource_version_is_400(store, rs):
    with pytest.raises(ApiError) as err:
        store.watch(rs, V1, resource_version="abc")
    assert err.value.code == 400


def test_concurrent_writers_every_watcher_sees_every_event_in_order(store, rs):
    import threading

    watchers = [store.watch(rs, V1, send_initial_events=False) for _ in range(3)]

    def writer(prefix):
        for i in range(30):
            obj = store.create(rs, V1, slice_obj(f"{prefix}-{i}"))
            store.delete(rs, V1, "", obj["metadata"]["name"])

    threads = [threading.Thread(target=writer, args=(p,)) for p in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for watch in watchers:
        events = drain(watch, 240)
        rvs = [int(e.resource_version) for e in events]
        assert rvs == sorted(rvs)
        assert len(set(rvs)) == 240
        watch.stop()


class _Response:
    """A kubernetes-client watch response: chunks of newline-separated JSON, then the end."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.released = False

    def stream(self, amt=None, decode_content=True):
        yield from self.chunks

    def release_conn(self):
        self.released = True


def _kube_watch(chunks):
    from drasim.apiserver.kubewatch import KubeWatch

    return KubeWatch(_Response(chunks))


@pytest.mark.parametrize("kind", ["store", "kubeclient"])
def test_both_watch_streams_iterate_until_the_end_and_keep_reporting_it(store, rs, kind):
    """Watch (the store's) and KubeWatch (the kubernetes client's) share one consumer side."""
    if kind == "store":
        watch = store.watch(rs, V1, resource_version=str(store.resource_version))
        store.create(rs, V1, slice_obj("a"))
        store.create(rs, V1, slice_obj("b"))
        watch.stop()
    else:
        line = b'{"type": "ADDED", "object": {"metadata": {"name": "%s"}}}\n'
        watch = _kube_watch([line % b"a", (line % b"b")[:10], (line % b"b")[10:]])
    assert [(e.type, e.object["metadata"]["name"]) for e in watch] == [("ADDED", "a"), ("ADDED", "b")]
    assert watch.next(timeout=0.01) is None
    assert watch.next(timeout=0.01) is None


def test_a_watch_used_with_with_is_stopped_and_next_times_out_while_open(store, rs):
    with store.watch(rs, V1, resource_version=str(store.resource_version)) as watch:
        assert watch.next(timeout=0.01) is None
        assert not watch.stopped
    assert watch.stopped
    response = _Response([])
    from drasim.apiserver.kubewatch import KubeWatch

    with KubeWatch(response) as kube_watch:
        pass
    assert kube_watch.stopped
    assert response.released


def test_an_object_that_stops_matching_is_deleted_with_its_last_matching_content(store, rs):
    """As upstream's watch cache: DELETED carries the previous (matching) object at the new RV."""
    created = store.create(rs, V1, slice_obj("a"))
    watch = store.watch(
        rs, V1, resource_version=created["metadata"]["resourceVersion"], field_selector="spec.nodeName=node-1"
    )
    moved = store.update(rs, V1, {**created, "spec": {"nodeName": "node-2", "driver": "gpu.example.com"}})
    (event,) = drain(watch, 1)
    assert event.type == "DELETED"
    assert event.object["spec"]["nodeName"] == "node-1"
    assert event.object["metadata"]["resourceVersion"] == moved["metadata"]["resourceVersion"]
    watch.stop()
