"""Replay of what a kubeletplugin-based driver (client-go) sends, checking every response (issue 8).

Start-up: watch-list on its ResourceSlices (field selector on driver and node), LIST
fallback, GET its Node for the owner UID, POST the slice with generateName and a
Node ownerReference, PUT it, DELETE it. Prepare: one GET of the claim. Bodies are
sent as JSON and, when drasim.apiserver.k8spb is present, as Kubernetes protobuf
exactly as client-go does (it cannot be switched to JSON).
"""

from __future__ import annotations

import http.client
import importlib.util
import json
from urllib.parse import quote

import pytest

from drasim.apiserver import MemoryCluster
from drasim.apiserver.http import HttpApiServer
from drasim.apiserver.kinds import RESOURCE_GROUP
from drasim.apiserver.store import ObjectStore

DRIVER = "gpu.example.com"
NODE = "node-1"
USER_AGENT = "dra-example-kubeletplugin/v0.0.0 (linux/amd64) kubernetes/$Format"
ACCEPT = "application/vnd.kubernetes.protobuf,application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"
HAVE_K8SPB = importlib.util.find_spec("drasim.apiserver.k8spb") is not None

ENCODINGS = [
    "json",
    pytest.param(
        "protobuf", marks=pytest.mark.skipif(not HAVE_K8SPB, reason="drasim.apiserver.k8spb is not there yet")
    ),
]


class ClientGo:
    """Speaks like client-go: its headers, alphabetically ordered query strings, protobuf or JSON bodies."""

    def __init__(self, server, encoding: str, version: str = "v1") -> None:
        self.server = server
        self.encoding = encoding
        self.version = version
        self.conn = http.client.HTTPConnection(server.host, server.port, timeout=10)

    def base(self, version=None):
        return f"/apis/resource.k8s.io/{version or self.version}"

    def body(self, obj):
        if self.encoding == "protobuf":
            from drasim.apiserver.k8spb import encode_object

            return encode_object(obj, go_zero_fields=True), PROTOBUF
        return json.dumps(obj).encode(), "application/json"

    def send(self, method, path, obj=None, conn=None):
        conn = conn or self.conn
        headers = {"Accept": ACCEPT, "User-Agent": USER_AGENT, **self.server.auth_header}
        data = None
        if obj is not None:
            data, headers["Content-Type"] = self.body(obj)
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        if resp.getheader("Transfer-Encoding") == "chunked" and method == "GET" and "watch=true" in path:
            return resp, None
        raw = resp.read()
        assert resp.getheader("Content-Type") == "application/json", raw[:200]
        return resp, json.loads(raw)


def selector():
    return quote(f"spec.driver={DRIVER},spec.nodeName={NODE}", safe="")


def slice_obj(node_uid, version="v1"):
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceSlice",
        "metadata": {
            "generateName": f"{NODE}-{DRIVER}-",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": NODE, "uid": node_uid, "controller": True}
            ],
        },
        "spec": {
            "driver": DRIVER,
            "nodeName": NODE,
            "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": "gpu-0", "attributes": {"model": {"string": "LATEST-GPU-MODEL"}}},
                {"name": "gpu-1", "capacity": {"memory": {"value": "80Gi"}}},
            ],
        },
    }


def next_event(resp):
    while True:
        line = resp.readline()
        assert line, "watch ended early"
        if line.strip():
            return json.loads(line)


@pytest.fixture
def world():
    store = ObjectStore(served={RESOURCE_GROUP: ["v1", "v1beta2", "v1beta1"]})
    cluster = MemoryCluster(store)
    node = cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})
    with HttpApiServer(store) as server:
        yield server, cluster, node


def seed_claim(cluster, uid_holder):
    claim = cluster.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
            "status": {
                "allocation": {
                    "devices": {
                        "results": [{"request": "gpu", "driver": DRIVER, "pool": NODE, "device": "gpu-0"}]
                    }
                },
                "reservedFor": [{"resource": "pods", "name": "pod-a", "uid": "pod-a-uid"}],
            },
        }
    )
    uid_holder.append(claim["metadata"]["uid"])
    return claim


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_driver_startup_publish_and_prepare_flow(world, encoding):
    server, cluster, node = world
    go = ClientGo(server, encoding)
    watch_conn = http.client.HTTPConnection(server.host, server.port, timeout=10)

    # (1) watch-list on the driver's own slices
    watch_path = (
        f"{go.base()}/resourceslices?allowWatchBookmarks=true&fieldSelector={selector()}"
        "&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"
    )
    watch, _ = go.send("GET", watch_path, conn=watch_conn)
    assert watch.status == 200
    assert watch.getheader("Content-Type") == "application/json"
    first = next_event(watch)
    assert first["type"] == "BOOKMARK"
    assert first["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}

    # (2) the LIST fallback
    resp, listed = go.send(
        "GET", f"{go.base()}/resourceslices?fieldSelector={selector()}&limit=500&resourceVersion=0"
    )
    assert resp.status == 200
    assert listed["kind"] == "ResourceSliceList"
    assert listed["items"] == []
    assert int(listed["metadata"]["resourceVersion"]) >= int(first["object"]["metadata"]["resourceVersion"])

    # (3) GET the Node for the owner UID
    resp, got_node = go.send("GET", f"/api/v1/nodes/{NODE}")
    assert resp.status == 200
    assert got_node["metadata"]["uid"] == node["metadata"]["uid"]

    # (4) POST the slice: the echo must be faithful or the driver recreates it every 30 s
    sent = slice_obj(got_node["metadata"]["uid"])
    resp, created = go.send("POST", f"{go.base()}/resourceslices", sent)
    assert resp.status == 201, created
    assert created["spec"] == sent["spec"]
    assert created["metadata"]["ownerReferences"] == sent["metadata"]["ownerReferences"]
    assert created["metadata"]["name"].startswith(f"{NODE}-{DRIVER}-")
    assert created["metadata"]["uid"]
    assert created["metadata"]["resourceVersion"]
    added = next_event(watch)
    assert added["type"] == "ADDED"
    assert added["object"] == created
    name = created["metadata"]["name"]

    # (5) PUT an update (new pool generation, one more device)
    update = json.loads(json.dumps(created))
    update["spec"]["pool"]["generation"] = 2
    update["spec"]["devices"].append({"name": "gpu-2"})
    resp, updated = go.send("PUT", f"{go.base()}/resourceslices/{name}", update)
    assert resp.status == 200, updated
    assert updated["spec"] == update["spec"]
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    assert updated["metadata"]["generation"] == 2
    modified = next_event(watch)
    assert (modified["type"], modified["object"]) == ("MODIFIED", updated)

    # a second PUT with the old resourceVersion conflicts
    resp, conflict = go.send("PUT", f"{go.base()}/resourceslices/{name}", update)
    assert resp.status == 409
    assert conflict["reason"] == "Conflict"

    # (6) NodePrepareResources: exactly one GET of the claim
    uid = []
    seed_claim(cluster, uid)
    resp, claim = go.send("GET", f"{go.base()}/namespaces/default/resourceclaims/gpu")
    assert resp.status == 200
    assert claim["metadata"]["uid"] == uid[0]
    assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"

    # (7) DELETE the slice with a UID precondition
    options = {
        "apiVersion": "v1" if encoding == "json" else "meta.k8s.io/v1",
        "kind": "DeleteOptions",
        "preconditions": {"uid": created["metadata"]["uid"]},
    }
    resp, deleted = go.send("DELETE", f"{go.base()}/resourceslices/{name}", options)
    assert resp.status == 200, deleted
    assert deleted["metadata"]["uid"] == created["metadata"]["uid"]
    gone = next_event(watch)
    assert gone["type"] == "DELETED"
    assert gone["object"]["metadata"]["name"] == name
    resp, _ = go.send("GET", f"{go.base()}/resourceslices/{name}")
    assert resp.status == 404
    watch_conn.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_delete_with_a_stale_uid_precondition_is_refused(world, encoding):
    server, _, node = world
    go = ClientGo(server, encoding)
    _, created = go.send("POST", f"{go.base()}/resourceslices", slice_obj(node["metadata"]["uid"]))
    options = {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "preconditions": {"uid": "stale-uid"}}
    resp, status = go.send("DELETE", f"{go.base()}/resourceslices/{created['metadata']['name']}", options)
    assert resp.status == 409
    # kube-apiserver 1.37's words (rest.BeforeDelete), as tests/controlplane compares them.
    assert status["message"].startswith('Operation cannot be fulfilled on ResourceSlice.resource.k8s.io "')
    assert "the UID in the precondition (stale-uid) does not match the UID in record (" in status["message"]
    assert status["details"]["kind"] == "ResourceSlice"


def test_claim_reads_fall_back_from_v1_to_v1beta2_when_v1_is_not_served():
    store = ObjectStore(served={RESOURCE_GROUP: ["v1beta2", "v1beta1"]})
    MemoryCluster(store, claim_version="v1beta2").create(
        {
            "apiVersion": "resource.k8s.io/v1beta2",
            "kind": "ResourceClaim",
            "metadata": {"name": "gpu"},
            "spec": {},
        }
    )
    with HttpApiServer(store) as server:
        go = ClientGo(server, "json")
        resp, status = go.send("GET", f"{go.base('v1')}/namespaces/default/resourceclaims/gpu")
        assert resp.status == 404
        assert status["reason"] == "NotFound"
        resp, claim = go.send("GET", f"{go.base('v1beta2')}/namespaces/default/resourceclaims/gpu")
        assert resp.status == 200
        assert claim["apiVersion"] == "resource.k8s.io/v1beta2"


def test_unallocated_and_replaced_claims_are_visible_to_the_driver(world):
    server, cluster, _ = world
    go = ClientGo(server, "json")
    first = cluster.create(
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "gpu"}, "spec": {}}
    )
    _, claim = go.send("GET", f"{go.base()}/namespaces/default/resourceclaims/gpu")
    assert "allocation" not in claim.get("status", {})  # the driver rejects it: "not allocated"
    cluster.delete("resource.k8s.io/v1", "ResourceClaim", "gpu", "default")
    cluster.create(
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "gpu"}, "spec": {}}
    )
    _, again = go.send("GET", f"{go.base()}/namespaces/default/resourceclaims/gpu")
    assert again["metadata"]["uid"] != first["metadata"]["uid"]  # the driver says "got replaced"
