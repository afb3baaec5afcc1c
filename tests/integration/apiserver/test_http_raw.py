"""HttpApiServer on the wire (http.client): discovery, Status errors, limits, watch-list, faults."""

from __future__ import annotations

import http.client
import json
import socket
import sys

import pytest

from drasim.apiserver.http import HttpApiServer
from drasim.apiserver.store import ObjectStore
from drasim.faults import ApiFault

RS = "/apis/resource.k8s.io/v1/resourceslices"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"


class AuthedConnection(http.client.HTTPConnection):
    """An HTTP connection that sends the server's bearer token with every request."""

    def __init__(self, server):
        super().__init__(server.host, server.port, timeout=10)
        self.token = server.token

    def putrequest(self, method, url, *args, **kwargs):
        super().putrequest(method, url, *args, **kwargs)
        self.putheader("Authorization", f"Bearer {self.token}")


def connect(server):
    return AuthedConnection(server)


def request(server, method, path, body=None, *, headers=None, conn=None):
    own = conn is None
    conn = conn or connect(server)
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    hdrs = {"Content-Type": "application/json", "User-Agent": "raw-test/1.0", **(headers or {})}
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    raw = resp.read()
    if own:
        conn.close()
    ctype = resp.getheader("Content-Type", "")
    streamed = resp.getheader("Transfer-Encoding") == "chunked"
    parsed = json.loads(raw) if ctype.startswith("application/json") and raw and not streamed else raw
    return resp, parsed


def assert_status(body, code, reason):
    assert body["kind"] == "Status"
    assert body["apiVersion"] == "v1"
    assert body["status"] == "Failure"
    assert body["code"] == code
    assert body["reason"] == reason
    assert body["message"]
    return body


def slice_body(name="s1", node="node-1", driver="gpu.example.com"):
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        },
    }


def read_events(resp, count):
    events = []
    while len(events) < count:
        line = resp.readline()
        if not line:
            break
        if line.strip():
            events.append(json.loads(line))
    return events


# ----------------------------------------------------------------- basics
def test_binds_to_loopback_on_a_random_port(server):
    assert server.host == "127.0.0.1"
    assert server.port > 0
    assert server.url == f"http://127.0.0.1:{server.port}"
    text = server.kubeconfig_path.read_text()
    assert f"server: http://127.0.0.1:{server.port}" in text
    assert "current-context: drasim" in text


def test_two_servers_get_different_ports():
    with HttpApiServer(ObjectStore()) as a, HttpApiServer(ObjectStore()) as b:
        assert a.port != b.port
    assert not a.running


def test_discovery_documents(server):
    resp, body = request(server, "GET", "/api")
    assert body["kind"] == "APIVersions"
    assert body["versions"] == ["v1"]
    _, groups = request(server, "GET", "/apis")
    (group,) = groups["groups"]
    assert group["name"] == "resource.k8s.io"
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta2"]
    assert group["preferredVersion"]["version"] == "v1"
    _, one = request(server, "GET", "/apis/resource.k8s.io")
    assert one["kind"] == "APIGroup"
    _, resources = request(server, "GET", "/apis/resource.k8s.io/v1")
    by_name = {r["name"]: r for r in resources["resources"]}
    assert by_name["resourceclaims"]["namespaced"] is True
    assert by_name["resourceslices"]["namespaced"] is False
    assert by_name["resourceclaims/status"]["verbs"] == ["get", "patch", "update"]
    assert "watch" in by_name["deviceclasses"]["verbs"]
    _, core = request(server, "GET", "/api/v1")
    assert {"pods", "nodes", "events", "namespaces", "pods/status"} <= {r["name"] for r in core["resources"]}
    _, version = request(server, "GET", "/version")
    assert (version["major"], version["minor"]) == ("1", "34")
    resp, text = request(server, "GET", "/healthz")
    assert (resp.status, text) == (200, b"ok")
    resp, body = request(server, "GET", "/openapi/v2")
    assert resp.status == 404


def test_unserved_version_is_404_like_a_real_server(server):
    for path in (
        "/apis/resource.k8s.io/v1beta1",
        "/apis/resource.k8s.io/v1beta1/namespaces/default/resourceclaims/gpu",
        "/apis/resource.k8s.io/v1beta1/resourceslices",
        "/apis/resource.k8s.io/v1/widgets",
        "/apis/example.com/v1/things",
    ):
        resp, body = request(server, "GET", path)
        assert resp.status == 404, path
        assert_status(body, 404, "NotFound")
        assert resp.getheader("Content-Type") == "application/json"


def test_served_beta_version_rewrites_api_version(server):
    request(server, "POST", RS, slice_body())
    resp, body = request(server, "GET", "/apis/resource.k8s.io/v1beta2/resourceslices/s1")
    assert resp.status == 200
    assert body["apiVersion"] == "resource.k8s.io/v1beta2"


# --------------------------------------------------------------- errors
def test_status_objects_for_errors(server):
    resp, body = request(server, "GET", f"{CLAIMS}/missing")
    details = assert_status(body, 404, "NotFound")["details"]
    assert details == {"name": "missing", "group": "resource.k8s.io", "kind": "resourceclaims"}
    assert body["message"] == 'resourceclaims.resource.k8s.io "missing" not found'

    resp, body = request(server, "POST", RS, b"{not json")
    assert resp.status == 400
    assert_status(body, 400, "BadRequest")

    resp, body = request(server, "POST", f"{RS}/named", slice_body())
    assert_status(body, 405, "MethodNotAllowed")

    request(server, "POST", RS, slice_body())
    resp, body = request(server, "PUT", f"{RS}/other", slice_body())
    assert "does not match the name on the URL" in assert_status(body, 400, "BadRequest")["message"]

    resp, body = request(server, "POST", RS, {**slice_body(), "kind": "DeviceClass"})
    assert_status(body, 400, "BadRequest")

    resp, body = request(server, "POST", RS, b"a: b", headers={"Content-Type": "application/yaml"})
    assert_status(body, 415, "UnsupportedMediaType")

    resp, body = request(
        server, "PATCH", f"{RS}/s1", {}, headers={"Content-Type": "application/apply-patch+yaml"}
    )
    assert_status(body, 415, "UnsupportedMediaType")


def test_accept_negotiation_answers_json(server):
    resp, body = request(
        server, "GET", RS, headers={"Accept": "application/vnd.kubernetes.protobuf,application/json"}
    )
    assert resp.status == 200
    assert resp.getheader("Content-Type") == "application/json"
    assert body["kind"] == "ResourceSliceList"
    resp, body = request(server, "GET", RS, headers={"Accept": "application/vnd.kubernetes.protobuf"})
    assert_status(body, 406, "NotAcceptable")


def test_oversized_body_is_413_and_the_connection_closes(server):
    big = b"{" + b" " * (3 * 1024 * 1024 + 1) + b"}"
    conn = connect(server)
    conn.putrequest("POST", RS)
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(len(big)))
    conn.endheaders()
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    assert resp.status == 413
    assert_status(body, 413, "RequestEntityTooLarge")
    assert resp.getheader("Connection") == "close"
    _, listing = request(server, "GET", RS)
    assert listing["items"] == []


def test_keep_alive_serves_many_requests_on_one_connection(server):
    conn = connect(server)
    for i in range(5):
        resp, body = request(server, "POST", RS, slice_body(f"s{i}"), conn=conn)
        assert resp.status == 201
    resp, body = request(server, "GET", RS, conn=conn)
    assert len(body["items"]) == 5
    conn.close()


# ------------------------------------------------------------- create echo
def test_post_echoes_the_created_object_faithfully(server):
    sent = slice_body()
    sent["metadata"] = {
        "generateName": "node-1-gpu.example.com-",
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "node-uid", "controller": True}
        ],
    }
    resp, created = request(server, "POST", RS, sent)
    assert resp.status == 201
    assert created["spec"] == sent["spec"]
    assert created["metadata"]["ownerReferences"] == sent["metadata"]["ownerReferences"]
    assert created["metadata"]["name"].startswith("node-1-gpu.example.com-")
    _, fetched = request(server, "GET", f"{RS}/{created['metadata']['name']}")
    assert fetched == created


# ------------------------------------------------------------------- watch
def test_watch_list_ends_initial_events_with_bookmark(server):
    request(server, "POST", RS, slice_body("mine"))
    request(server, "POST", RS, slice_body("other-node", node="node-2"))
    conn = connect(server)
    path = (
        f"{RS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
        "&fieldSelector=spec.driver%3Dgpu.example.com%2Cspec.nodeName%3Dnode-1&timeoutSeconds=10"
    )
    conn.request("GET", path, headers={"Accept": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.getheader("Transfer-Encoding") == "chunked"
    assert resp.getheader("Content-Type") == "application/json"
    added, bookmark = read_events(resp, 2)
    assert added["type"] == "ADDED"
    assert added["object"]["metadata"]["name"] == "mine"
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["kind"] == "ResourceSlice"
    assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    request(server, "POST", RS, slice_body("later"))
    (later,) = read_events(resp, 1)
    assert (later["type"], later["object"]["metadata"]["name"]) == ("ADDED", "later")
    assert int(later["object"]["metadata"]["resourceVersion"]) > int(
        bookmark["object"]["metadata"]["resourceVersion"]
    )
    conn.close()


def test_watch_list_without_not_older_than_is_422(server):
    _resp, body = request(server, "GET", f"{RS}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true")
    assert_status(body, 422, "Invalid")


def test_watch_with_too_old_resource_version_sends_410_error_event():
    store = ObjectStore(history=2)
    with HttpApiServer(store) as server:
        for i in range(4):
            request(server, "POST", RS, slice_body(f"s{i}"))
        resp, raw = request(server, "GET", f"{RS}?watch=1&resourceVersion=1")
        assert resp.status == 200
        (event,) = [json.loads(line) for line in raw.splitlines() if line.strip()]
        assert event["type"] == "ERROR"
        assert_status(event["object"], 410, "Expired")
        assert event["object"]["message"].startswith("too old resource version: 1 (")


def test_watch_times_out_and_ends_the_stream(server):
    resp, raw = request(
        server, "GET", f"{RS}?watch=true&timeoutSeconds=0.2&resourceVersion={server.store.resource_version}"
    )
    assert resp.status == 200
    assert raw == b""


def test_watch_on_the_legacy_path_with_a_name(server):
    request(server, "POST", RS, slice_body("a"))
    request(server, "POST", RS, slice_body("b"))
    _resp, raw = request(server, "GET", "/apis/resource.k8s.io/v1/watch/resourceslices/b?timeoutSeconds=0.3")
    names = [json.loads(line)["object"]["metadata"]["name"] for line in raw.splitlines()]
    assert names == ["b"]


def test_stopping_the_server_ends_open_watches():
    with HttpApiServer(ObjectStore()) as server:
        conn = connect(server)
        conn.request("GET", f"{RS}?watch=true&resourceVersion=0")
        resp = conn.getresponse()
        assert resp.status == 200
        server.stop()
        assert resp.read() == b""  # the chunked stream was terminated
        conn.close()


# ------------------------------------------------------------------ faults
def test_injected_errors_are_status_objects_with_retry_after(server):
    server.store.faults.add(ApiFault(resource="resourceslices", verb="list", code=429, times=1))
    server.store.faults.add(ApiFault(resource="resourceslices", verb="list", code=503, times=1))
    resp, body = request(server, "GET", RS)
    assert_status(body, 429, "TooManyRequests")
    assert resp.getheader("Retry-After") == "1"
    assert body["details"]["retryAfterSeconds"] == 1
    resp, body = request(server, "GET", RS)
    assert_status(body, 503, "ServiceUnavailable")
    resp, body = request(server, "GET", RS)
    assert resp.status == 200


def test_dropped_watch_closes_the_stream_after_n_events(server):
    for i in range(3):
        request(server, "POST", RS, slice_body(f"s{i}"))
    server.store.faults.add(ApiFault(verb="watch", drop_watches=True, after_events=2, times=1))
    resp, raw = request(server, "GET", f"{RS}?watch=true")
    assert [json.loads(line)["type"] for line in raw.splitlines()] == ["ADDED", "ADDED"]
    assert resp.getheader("Transfer-Encoding") == "chunked"


def test_latency_fault_delays_the_answer(server):
    server.store.faults.add(ApiFault(verb="get", resource="nodes", delay=0.05, times=1))
    request(server, "GET", "/api/v1/nodes/n1")
    (entry,) = [e for e in server.store.recorder.api() if e["resource"] == "nodes"]
    assert entry["duration"] >= 0.05
    assert entry["code"] == 404


def test_faults_and_reset_over_the_admin_endpoints(server):
    request(server, "POST", RS, slice_body())
    resp, _ = request(server, "POST", "/drasim/faults", {"verb": "get", "code": 500, "always": True})
    assert resp.status == 201
    resp, body = request(server, "GET", f"{RS}/s1")
    assert_status(body, 500, "InternalError")
    resp, body = request(server, "POST", "/drasim/faults", {"verb": "nope", "code": 500})
    assert "fault verb: 'nope' is not a verb" in assert_status(body, 400, "BadRequest")["message"]
    request(server, "DELETE", "/drasim/faults")
    resp, _ = request(server, "GET", f"{RS}/s1")
    assert resp.status == 200
    request(server, "POST", "/drasim/reset")
    resp, _ = request(server, "GET", f"{RS}/s1")
    assert resp.status == 404


def test_journal_names_the_client_by_user_agent(server):
    request(
        server,
        "POST",
        RS,
        slice_body(),
        headers={"User-Agent": "my-driver/v1.0 (linux/amd64) kubernetes/abc"},
    )
    (entry,) = server.store.recorder.api()
    assert entry == {
        **entry,
        "verb": "create",
        "resource": "resourceslices",
        "name": "s1",
        "code": 201,
        "client": "my-driver/v1.0 (linux/amd64) kubernetes/abc",
    }


# ---------------------------------------------------------------- protobuf
def test_protobuf_body_without_k8spb_is_415(server, monkeypatch):
    monkeypatch.setitem(sys.modules, "drasim.apiserver.k8spb", None)
    _resp, body = request(
        server,
        "POST",
        RS,
        b"k8s\x00\x0a\x00",
        headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    assert "protobuf" in assert_status(body, 415, "UnsupportedMediaType")["message"]


def test_namespaced_resources_need_a_namespace_for_single_objects_and_writes(server):
    _, body = request(server, "GET", "/apis/resource.k8s.io/v1/resourceclaims/gpu")
    assert_status(body, 404, "NotFound")
    _, body = request(server, "POST", "/apis/resource.k8s.io/v1/resourceclaims", {"metadata": {"name": "x"}})
    assert_status(body, 405, "MethodNotAllowed")
    _resp, body = request(server, "GET", "/apis/resource.k8s.io/v1/resourceclaims")
    assert body["kind"] == "ResourceClaimList"


def test_dry_run_is_refused_rather_than_applied(server):
    _resp, body = request(server, "POST", f"{RS}?dryRun=All", slice_body())
    assert "dryRun" in assert_status(body, 400, "BadRequest")["message"]
    _, listing = request(server, "GET", RS)
    assert listing["items"] == []


def test_an_error_before_the_body_is_read_closes_the_connection(server):
    conn = connect(server)
    resp, body = request(
        server, "POST", RS, slice_body(), headers={"Accept": "application/vnd.kubernetes.protobuf"}, conn=conn
    )
    assert_status(body, 406, "NotAcceptable")
    assert resp.getheader("Connection") == "close"
    conn.close()
    resp, body = request(server, "POST", RS, slice_body())  # a fresh connection works
    assert resp.status == 201


def test_chunked_request_bodies_are_accepted(server):
    conn = connect(server)
    body = json.dumps(slice_body()).encode()
    conn.request(
        "POST",
        RS,
        body=iter([body[:10], body[10:]]),
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        encode_chunked=True,
    )
    resp = conn.getresponse()
    created = json.loads(resp.read())
    conn.close()
    assert resp.status == 201
    assert created["metadata"]["name"] == "s1"


def _raw_exchange(server, raw: bytes) -> tuple[int, dict]:
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(body)


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: -5\r\n\r\n{}",
        b"Content-Length: abc\r\n\r\n{}",
        b"Transfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
    ids=["negative-length", "non-numeric-length", "bad-chunk-size"],
)
def test_malformed_framing_is_400(server, framing):
    auth = f"Authorization: Bearer {server.token}\r\n".encode()
    head = b"POST " + RS.encode() + b" HTTP/1.1\r\nHost: x\r\n" + auth
    raw = head + b"Content-Type: application/json\r\n" + framing
    code, body = _raw_exchange(server, raw)
    assert code == 400
    assert_status(body, 400, "BadRequest")


@pytest.mark.parametrize("depth", [101, 100_000])
def test_deeply_nested_json_is_400(server, depth):
    nested = b'{"metadata":{"name":"x"},"spec":' + b"[" * depth + b"]" * depth + b"}"
    resp, body = request(server, "POST", RS, nested)
    assert resp.status == 400
    assert_status(body, 400, "BadRequest")
