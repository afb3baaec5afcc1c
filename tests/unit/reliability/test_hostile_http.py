"""A hostile-input corpus for the HTTP API server (issue #29).

Each case is one request with the status it must get. After every case the server still
serves, and a watch opened before the corpus has seen exactly one event per write the
server answered with success: no write is answered with an error yet committed, and no
event is lost. Connection-level cases (token, Origin, timeouts, connection bound) follow.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from drasim.apiserver.http import ApiHttpServer, HttpApiServer
from drasim.apiserver.kinds import RESOURCE_GROUP
from drasim.apiserver.store import ObjectStore

TIMEOUT = 5.0
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
NODES = "/api/v1/nodes"
MERGE = "application/merge-patch+json"
JSONPATCH = "application/json-patch+json"

CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "a"}, "spec": {}}


def _bomb(ops: int) -> list[dict[str, str]]:
    return [{"op": "copy", "from": "/spec/a", "path": "/spec/a/-"}] * ops


# (id, method, path, body, content type, expected status)
CORPUS: list[tuple[str, str, str, Any, str, int]] = [
    ("create", "POST", CLAIMS, CLAIM, "application/json", 201),
    ("labels-5", "PATCH", f"{CLAIMS}/a", {"metadata": {"labels": 5}}, MERGE, 422),
    ("list-after-labels", "GET", f"{CLAIMS}?labelSelector=x", None, "", 200),
    ("label-ok", "PATCH", f"{CLAIMS}/a", {"metadata": {"labels": {"x": "1"}}}, MERGE, 200),
    ("metadata-string-create", "POST", CLAIMS, {"metadata": "x"}, "application/json", 400),
    ("metadata-string-put", "PUT", f"{CLAIMS}/a", {"metadata": "x"}, "application/json", 400),
    ("metadata-string-status", "PUT", f"{CLAIMS}/a/status", {"metadata": "x"}, "application/json", 400),
    ("generate-name-list", "POST", CLAIMS, {"metadata": {"generateName": ["a"]}}, "application/json", 400),
    ("node-slash", "POST", NODES, {"metadata": {"name": "a/b"}}, "application/json", 422),
    ("node-upper", "POST", NODES, {"metadata": {"name": "Node"}}, "application/json", 422),
    ("node-dotdot", "POST", NODES, {"metadata": {"name": ".."}}, "application/json", 422),
    ("node-ok", "POST", NODES, {"metadata": {"name": "n1"}}, "application/json", 201),
    ("spec-copy", "PATCH", f"{CLAIMS}/a", {"spec": {"a": ["x" * 1000]}}, MERGE, 200),
    ("copy-bomb", "PATCH", f"{CLAIMS}/a", _bomb(22), JSONPATCH, 422),
    (
        "ops-bomb",
        "PATCH",
        f"{CLAIMS}/a",
        [{"op": "test", "path": "/spec", "value": 1}] * 10_001,
        JSONPATCH,
        413,
    ),
    ("patch-not-json", "PATCH", f"{CLAIMS}/a", b"{", MERGE, 400),
    (
        "patch-removes-metadata",
        "PATCH",
        f"{CLAIMS}/a",
        [{"op": "remove", "path": "/metadata"}],
        JSONPATCH,
        400,
    ),
    ("delete-preconditions-5", "DELETE", f"{CLAIMS}/a", {"preconditions": 5}, "application/json", 400),
    ("delete-uid-list", "DELETE", f"{CLAIMS}/a", {"preconditions": {"uid": ["x"]}}, "application/json", 400),
    ("delete-grace-string", "DELETE", f"{CLAIMS}/a", {"gracePeriodSeconds": "1"}, "application/json", 400),
    (
        "fault-latency-huge",
        "POST",
        "/drasim/faults",
        {"verb": "get", "latency": 1e308},
        "application/json",
        400,
    ),
    (
        "fault-latency-nan",
        "POST",
        "/drasim/faults",
        b'{"verb": "get", "latency": NaN}',
        "application/json",
        400,
    ),
    ("get-still-works", "GET", f"{CLAIMS}/a", None, "", 200),
    ("delete", "DELETE", f"{CLAIMS}/a", None, "", 200),
]


@pytest.fixture(scope="module")
def server() -> Iterator[HttpApiServer]:
    with HttpApiServer(ObjectStore()) as srv:
        yield srv


def send(server: HttpApiServer, method: str, path: str, body: Any = None, ctype: str = "", **headers: str):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=TIMEOUT)
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    hdrs = {**server.auth_header, **headers}
    if ctype:
        hdrs["Content-Type"] = ctype
    try:
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    return resp.status, (json.loads(raw) if raw and raw[:1] in b"{[" else raw)


def test_the_corpus_gets_its_statuses_while_the_server_keeps_serving_and_loses_no_event(server):
    store = server.store
    claims = store.registry.resource(RESOURCE_GROUP, "v1", "resourceclaims")
    with (
        store.watch(claims, "v1", "default") as watch,
        store.watch(claims, "v1", "default", label_selector="x") as sel,
    ):
        writes = 0
        for case, method, path, body, ctype, expected in CORPUS:
            before = store.resource_version
            code, reply = send(server, method, path, body, ctype)
            assert code == expected, (case, reply)
            if code >= 400:
                assert reply["kind"] == "Status", case
                assert reply["code"] == code, case
                assert store.resource_version == before, f"{case}: answered {code} but committed"
            elif method != "GET" and path.startswith(CLAIMS) and store.resource_version != before:
                writes += 1
            assert send(server, "GET", "/healthz")[0] == 200, case
        seen = []
        while (event := watch.next(timeout=0)) is not None:
            seen.append(event.type)
        assert len(seen) == writes
        assert seen == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]
        selected = []
        while (event := sel.next(timeout=0)) is not None:
            selected.append(event.type)
        assert selected == ["ADDED", "MODIFIED", "DELETED"]  # the labelled claim, then its change and delete


# -------------------------------------------------------------- token and Origin
@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}, {"Authorization": ""}],
    ids=["none", "wrong", "basic", "empty"],
)
def test_requests_without_the_token_are_401(server, headers):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=TIMEOUT)
    for method, path, body in [
        ("GET", CLAIMS, None),
        ("GET", "/healthz", None),
        ("POST", "/drasim/reset", b""),
        ("POST", "/drasim/faults", b'{"verb": "get", "code": 500}'),
    ]:
        conn.request(method, path, body=body, headers={**headers, "Content-Type": "text/plain"})
        resp = conn.getresponse()
        reply = json.loads(resp.read())
        assert resp.status == 401
        assert reply["reason"] == "Unauthorized"
    conn.close()
    assert server.store.faults.faults == []


def test_a_browser_page_cannot_reset_or_add_faults_even_with_the_token(server):
    server.store.create(
        server.store.registry.resource("", "v1", "nodes"), "v1", {"metadata": {"name": "keep"}}
    )
    origin = {"Origin": "http://evil.example"}
    code, reply = send(server, "POST", "/drasim/reset", b"x=1", "application/x-www-form-urlencoded", **origin)
    assert code == 403
    assert reply["reason"] == "Forbidden"
    code, _ = send(server, "POST", "/drasim/faults", b'{"verb":"get","code":500}', "text/plain", **origin)
    assert code == 403
    assert send(server, "GET", f"{NODES}/keep")[0] == 200  # not wiped, no fault added


def test_the_token_as_a_path_prefix_authenticates(server):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=TIMEOUT)
    conn.request("GET", f"/{server.token}/api/v1/namespaces")
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    assert resp.status == 200
    assert {item["metadata"]["name"] for item in body["items"]} >= {"default"}


def test_the_kubeconfig_holds_the_token_and_each_server_has_its_own(tmp_path):
    with HttpApiServer() as a, HttpApiServer() as b:
        assert a.token != b.token
        assert len(a.token) >= 32
        config = a.kubeconfig()
        assert config["users"][0]["user"]["token"] == a.token
        assert config["clusters"][0]["cluster"]["server"] == f"{a.url}/{a.token}"
        path = a.write_kubeconfig(tmp_path / "kc")
        assert path.stat().st_mode & 0o077 == 0  # private: it holds the token


def test_a_token_that_cannot_be_a_path_segment_is_refused():
    with pytest.raises(ValueError, match="token"):
        HttpApiServer(token="short")
    with pytest.raises(ValueError, match="token"):
        HttpApiServer(token="has/a/slash/in/it/xxxxxxxx")


# ------------------------------------------------------------ connections
def test_the_listen_backlog_is_large():
    assert ApiHttpServer.request_queue_size >= 1024


def healthz_reply(conn: socket.socket) -> bytes:
    """The whole answer to a /healthz request, however the reads split it."""
    reply = b""
    while not reply.endswith(b"\r\n\r\nok"):
        chunk = conn.recv(4096)
        assert chunk, reply
        reply += chunk
    return reply


def test_slow_headers_are_cut_off_at_the_header_deadline():
    with (
        HttpApiServer(header_timeout=0.3) as srv,
        socket.create_connection((srv.host, srv.port), timeout=TIMEOUT) as s,
    ):
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        s.settimeout(TIMEOUT)
        assert s.recv(1024) == b""  # closed by the server, well before TIMEOUT


def test_an_idle_connection_is_closed_at_the_idle_timeout():
    with (
        HttpApiServer(idle_timeout=0.3) as srv,
        socket.create_connection((srv.host, srv.port), timeout=TIMEOUT) as s,
    ):
        s.sendall(f"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {srv.token}\r\n\r\n".encode())
        assert healthz_reply(s).startswith(b"HTTP/1.1 200")
        assert s.recv(1024) == b""  # keep-alive ended by the server after the idle timeout


def test_connections_above_the_bound_get_429_and_no_thread():
    with HttpApiServer(max_connections=2) as srv:
        held = []
        for _ in range(2):
            s = socket.create_connection((srv.host, srv.port), timeout=TIMEOUT)
            s.sendall(
                f"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {srv.token}\r\n\r\n".encode()
            )
            assert healthz_reply(s).startswith(b"HTTP/1.1 200")  # accepted and served: the connection is open
            held.append(s)
        with socket.create_connection((srv.host, srv.port), timeout=TIMEOUT) as extra:
            data = b""
            while chunk := extra.recv(4096):
                data += chunk
        assert data.startswith(b"HTTP/1.1 429")
        assert b'"reason":"TooManyRequests"' in data
        for s in held:
            s.close()


def test_the_access_log_leaves_the_token_out(server, caplog):
    with caplog.at_level("DEBUG", logger="drasim.apiserver.handler"):
        conn = http.client.HTTPConnection(server.host, server.port, timeout=TIMEOUT)
        conn.request("GET", f"/{server.token}/healthz")
        assert conn.getresponse().read() == b"ok"
        conn.close()
    assert "/<token>/healthz" in caplog.text
    assert server.token not in caplog.text


def _read_stream(conn: socket.socket) -> bytes:
    """Everything a chunked watch stream sends, up to its terminating chunk (or the connection's end)."""
    data = b""
    while not data.endswith(b"\r\n0\r\n\r\n"):
        chunk = conn.recv(1 << 20)
        if not chunk:
            break
        data += chunk
    return data


def test_a_watcher_that_stops_reading_is_dropped_and_the_others_get_every_event():
    """Over HTTP: the stalled client's socket buffers fill, then its queue (4 events), then its
    watch ends; a reading watcher on the same resource misses nothing."""
    store = ObjectStore(watch_queue=4)
    nodes = store.registry.resource("", "v1", "nodes")
    big = "x" * 100_000  # 60 events of 100 kB: more than the 4 MiB a socket may buffer
    with HttpApiServer(store) as srv, store.watch(nodes, "v1") as reader:
        stalled = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)  # no receive-side autotuning
        stalled.settimeout(TIMEOUT)
        stalled.connect((srv.host, srv.port))
        request = f"GET {NODES}?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {srv.token}\r\n\r\n"
        stalled.sendall(request.encode())
        assert stalled.recv(15).startswith(b"HTTP/1.1 200")  # the watch is open; now stop reading
        seen = []
        for i in range(60):
            store.create(nodes, "v1", {"metadata": {"name": f"n{i}", "annotations": {"big": big}}})
            seen.append(reader.next(timeout=TIMEOUT))  # this watcher keeps up
        assert not reader.dropped
        assert [e.object["metadata"]["name"] for e in seen if e is not None] == [f"n{i}" for i in range(60)]
        stream = _read_stream(stalled)
        stalled.close()
        delivered = stream.count(b'"type":"ADDED"')
        assert 0 < delivered < 60  # what fit in the buffers and the queue, then the end
        assert stream.endswith(b"\r\n0\r\n\r\n")
        assert send(srv, "GET", NODES)[0] == 200
