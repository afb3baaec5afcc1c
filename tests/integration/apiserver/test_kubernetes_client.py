"""The real kubernetes Python client against HttpApiServer: every kind, every verb, typed APIs."""

from __future__ import annotations

import json
import threading

import pytest

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, watch  # noqa: E402
from kubernetes.client import ApiException  # noqa: E402

NS = "default"


def status_of(err: ApiException) -> dict:
    body = json.loads(err.body)
    assert body["kind"] == "Status"
    assert body["apiVersion"] == "v1"
    assert body["status"] == "Failure"
    return body


@pytest.fixture
def core(kube_api):
    return client.CoreV1Api(kube_api)


@pytest.fixture
def resource(kube_api):
    return client.ResourceV1Api(kube_api)


def pod(name="p", node="node-1", **extra):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "x"}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]},
        **extra,
    }


def claim_body(**meta):
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
        },
    }


def slice_body(node="node-1", driver="gpu.example.com", **meta):
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"generateName": f"{node}-{driver}-", **meta},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}],
        },
    }


# ------------------------------------------------------------------ core kinds
def test_pods_crud_and_field_selector(core):
    created = core.create_namespaced_pod(NS, pod())
    assert created.metadata.uid
    assert created.status.phase == "Pending"
    core.create_namespaced_pod(NS, pod("q", node="node-2"))
    on_node_1 = core.list_namespaced_pod(NS, field_selector="spec.nodeName=node-1")
    assert [p.metadata.name for p in on_node_1.items] == ["p"]
    assert len(core.list_pod_for_all_namespaces(label_selector="app=x").items) == 2
    created.metadata.labels["extra"] = "1"
    replaced = core.replace_namespaced_pod("p", NS, created)
    assert replaced.metadata.labels["extra"] == "1"
    status = core.patch_namespaced_pod_status("p", NS, {"status": {"phase": "Running"}})
    assert status.status.phase == "Running"
    assert core.read_namespaced_pod_status("p", NS).status.phase == "Running"
    core.delete_namespaced_pod("p", NS)
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod("p", NS)
    assert err.value.status == 404
    assert status_of(err.value)["details"] == {"name": "p", "kind": "pods"}


def test_nodes_and_namespaces_are_cluster_scoped(core):
    node = core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}})
    assert node.metadata.namespace is None
    patched = core.patch_node("node-1", {"spec": {"unschedulable": True}})
    assert patched.spec.unschedulable is True
    assert [n.metadata.name for n in core.list_node(field_selector="spec.unschedulable=true").items] == [
        "node-1"
    ]
    core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    assert {n.metadata.name for n in core.list_namespace().items} >= {"default", "kube-system", "team-a"}
    assert core.read_namespace("team-a").status.phase == "Active"
    core.delete_node("node-1")
    core.delete_namespace("team-a")
    assert core.list_node().items == []


def test_events(core):
    body = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": "claim-"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": NS},
        "reason": "FailedPrepareDynamicResources",
        "message": "boom",
        "type": "Warning",
    }
    core.create_namespaced_event(NS, body)
    core.create_namespaced_event(NS, {**body, "reason": "Other"})
    found = core.list_namespaced_event(NS, field_selector="reason=FailedPrepareDynamicResources")
    assert [e.message for e in found.items] == ["boom"]
    core.delete_collection_namespaced_event(NS)
    assert core.list_namespaced_event(NS).items == []


# ------------------------------------------------------------- resource kinds
def test_resource_claims_crud_conflict_and_status(resource):
    created = resource.create_namespaced_resource_claim(NS, claim_body(generateName="gpu-"))
    name = created.metadata.name
    assert name.startswith("gpu-")
    assert len(name) == len("gpu-") + 5
    fetched = resource.read_namespaced_resource_claim(name, NS)
    assert fetched.metadata.uid == created.metadata.uid
    assert fetched.spec.devices.requests[0].exactly.device_class_name == "gpu.example.com"

    stale_rv = created.metadata.resource_version
    created.metadata.labels = {"a": "b"}
    updated = resource.replace_namespaced_resource_claim(name, NS, created)
    assert int(updated.metadata.resource_version) > int(stale_rv)
    created.metadata.labels = {"c": "d"}
    with pytest.raises(ApiException) as err:
        resource.replace_namespaced_resource_claim(name, NS, created)
    assert err.value.status == 409
    assert status_of(err.value)["reason"] == "Conflict"

    allocation = {
        "devices": {
            "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]
        }
    }
    status_body = {
        "status": {"allocation": allocation, "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}
    }
    with_status = resource.patch_namespaced_resource_claim_status(name, NS, status_body)
    assert with_status.status.allocation.devices.results[0].device == "gpu-0"
    assert with_status.status.reserved_for[0].uid == "u1"
    # the main resource ignores .status
    ignored = resource.patch_namespaced_resource_claim(
        name, NS, {"status": None, "metadata": {"labels": {"z": "1"}}}
    )
    assert ignored.status.allocation is not None
    assert resource.read_namespaced_resource_claim_status(name, NS).status.reserved_for[0].name == "p"

    resource.delete_namespaced_resource_claim(name, NS)
    assert resource.list_namespaced_resource_claim(NS).items == []


def test_resource_claim_templates(resource):
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "tmpl"},
        "spec": {"spec": claim_body()["spec"]},
    }
    resource.create_namespaced_resource_claim_template(NS, body)
    got = resource.read_namespaced_resource_claim_template("tmpl", NS)
    assert got.spec.spec.devices.requests[0].name == "gpu"
    patched = resource.patch_namespaced_resource_claim_template(
        "tmpl", NS, {"metadata": {"labels": {"v": "2"}}}
    )
    assert patched.metadata.labels == {"v": "2"}
    assert len(resource.list_resource_claim_template_for_all_namespaces().items) == 1
    resource.delete_collection_namespaced_resource_claim_template(NS)
    assert resource.list_namespaced_resource_claim_template(NS).items == []


def test_resource_slices_selectors_delete_preconditions_and_collection(resource):
    mine = resource.create_resource_slice(slice_body())
    resource.create_resource_slice(slice_body(node="node-2"))
    resource.create_resource_slice(slice_body(driver="nic.example.com"))
    selected = resource.list_resource_slice(field_selector="spec.driver=gpu.example.com,spec.nodeName=node-1")
    assert [s.metadata.name for s in selected.items] == [mine.metadata.name]
    with pytest.raises(ApiException) as err:
        resource.list_resource_slice(field_selector="spec.bogus=1")
    assert err.value.status == 400
    assert status_of(err.value)["message"] == "field label not supported: spec.bogus"

    mine.spec.devices.append(client.V1Device(name="gpu-1"))
    replaced = resource.replace_resource_slice(mine.metadata.name, mine)
    assert [d.name for d in replaced.spec.devices] == ["gpu-0", "gpu-1"]

    stale = client.V1DeleteOptions(
        preconditions=client.V1Preconditions(resource_version=mine.metadata.resource_version)
    )
    with pytest.raises(ApiException) as err:
        resource.delete_resource_slice(mine.metadata.name, body=stale)
    assert err.value.status == 409
    wrong_uid = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="not-the-uid"))
    with pytest.raises(ApiException):
        resource.delete_resource_slice(mine.metadata.name, body=wrong_uid)
    good = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=mine.metadata.uid))
    resource.delete_resource_slice(mine.metadata.name, body=good)

    resource.delete_collection_resource_slice(field_selector="spec.nodeName=node-2")
    left = resource.list_resource_slice()
    assert [s.spec.driver for s in left.items] == ["nic.example.com"]


def test_device_classes(resource):
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {},
    }
    resource.create_device_class(body)
    with pytest.raises(ApiException) as err:
        resource.create_device_class(body)
    assert err.value.status == 409
    assert status_of(err.value)["reason"] == "AlreadyExists"
    patched = resource.patch_device_class(
        "gpu.example.com", [{"op": "add", "path": "/metadata/labels", "value": {"tier": "a"}}]
    )
    assert patched.metadata.labels == {"tier": "a"}
    assert (
        resource.list_device_class(label_selector="tier in (a,b)").items[0].metadata.name == "gpu.example.com"
    )
    resource.delete_device_class("gpu.example.com")
    assert resource.list_device_class().items == []


def test_list_paging_with_limit_and_continue(resource):
    for _ in range(5):
        resource.create_resource_slice(slice_body())
    first = resource.list_resource_slice(limit=2)
    assert len(first.items) == 2
    assert first.metadata.remaining_item_count == 3
    names = [s.metadata.name for s in first.items]
    token = first.metadata._continue
    while token:
        page = resource.list_resource_slice(limit=2, _continue=token)
        names += [s.metadata.name for s in page.items]
        token = page.metadata._continue
    assert len(names) == len(set(names)) == 5
    # With a selector upstream does not count the rest (storage.PrepareContinueToken).
    filtered = resource.list_resource_slice(limit=2, label_selector="!nope")
    assert len(filtered.items) == 2
    assert filtered.metadata._continue
    assert filtered.metadata.remaining_item_count is None


def test_watch_streams_events_in_order_and_resumes(resource):
    start = resource.list_resource_slice().metadata.resource_version
    created = [resource.create_resource_slice(slice_body()) for _ in range(3)]
    resource.delete_resource_slice(created[0].metadata.name)
    w = watch.Watch()
    seen = []
    for event in w.stream(resource.list_resource_slice, resource_version=start, timeout_seconds=5):
        seen.append(
            (event["type"], event["object"].metadata.name, int(event["object"].metadata.resource_version))
        )
        if len(seen) == 4:
            w.stop()
    assert [s[0] for s in seen] == ["ADDED", "ADDED", "ADDED", "DELETED"]
    assert [s[1] for s in seen[:3]] == [c.metadata.name for c in created]
    assert [s[2] for s in seen] == sorted(s[2] for s in seen)


def test_watch_sees_writes_made_while_it_is_open(resource, server):
    w = watch.Watch()
    ready = threading.Event()
    seen = []

    def consume():
        for event in w.stream(
            resource.list_resource_slice, timeout_seconds=10, field_selector="spec.nodeName=node-9"
        ):
            seen.append(event["type"])
            ready.set()
            if len(seen) == 2:
                w.stop()

    thread = threading.Thread(target=consume)
    thread.start()
    resource.create_resource_slice(slice_body(node="node-1"))
    made = resource.create_resource_slice(slice_body(node="node-9"))
    assert ready.wait(10)
    resource.delete_resource_slice(made.metadata.name)
    thread.join(10)
    assert not thread.is_alive()
    assert seen == ["ADDED", "DELETED"]


def test_watch_from_an_expired_resource_version_raises_410(kube_api):
    from drasim.apiserver.http import HttpApiServer
    from drasim.apiserver.store import ObjectStore

    with HttpApiServer(ObjectStore(history=1)) as small:
        api = client.ApiClient(client.Configuration(host=small.client_url))
        resource = client.ResourceV1Api(api)
        for _ in range(3):
            resource.create_resource_slice(slice_body())
        w = watch.Watch()
        with pytest.raises(ApiException) as err:
            for _ in w.stream(resource.list_resource_slice, resource_version="1", timeout_seconds=5):
                pass
        assert err.value.status == 410
        api.close()
