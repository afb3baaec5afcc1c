"""The HTTP API server: loopback only, bounded bodies, garbage answered with a Status.

Requests are written byte for byte over a raw TCP socket so that malformed HTTP
reaches the server unchanged. Every exchange is bounded by a socket timeout: a
server that hangs fails the test instead of stalling the suite.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from drasim.apiserver.http import DEFAULT_MAX_BODY, HttpApiServer

TIMEOUT = 5.0
TOKEN = "hardening-test-token"
PODS = "/api/v1/namespaces/default/pods"
POD = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}).encode()


@dataclass
class Reply:
    code: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def is_status(self) -> bool:
        try:
            body = self.json()
        except ValueError:
            return False
        return (
            isinstance(body, dict)
            and body.get("kind") == "Status"
            and body.get("status") == "Failure"
            and body.get("code") == self.code
            and self.headers.get("content-type", "").startswith("application/json")
        )


def exchange(server: HttpApiServer, raw: bytes, *, half_close: bool = False) -> Reply:
    """Send ``raw`` and read one response (Content-Length framed, or up to EOF; code 0 = no status line)."""
    with socket.create_connection((server.host, server.port), timeout=TIMEOUT) as conn:
        conn.sendall(raw)
        if half_close:
            conn.shutdown(socket.SHUT_WR)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        if not re.match(rb"HTTP/1\.[01] \d{3}", data):
            # No status line: an HTTP/0.9 style bare body (what plain http.server sends for garbage).
            while chunk := conn.recv(65536):
                data += chunk
            return Reply(0, {}, data)
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        match = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
        assert match is not None
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = headers.get("content-length")
        while length is None or len(body) < int(length):
            chunk = conn.recv(65536)
            if not chunk:
                break
            body += chunk
        return Reply(int(match.group(1)), headers, body)


def request(method: str, path: str, body: bytes = b"", **headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: localhost"]
    if "Authorization" not in headers:
        lines.append(f"Authorization: Bearer {TOKEN}")
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    if body and "Content_Length" not in headers and "Transfer_Encoding" not in headers:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@pytest.fixture
def server() -> Iterator[HttpApiServer]:
    with HttpApiServer(max_body_bytes=4096, token=TOKEN) as srv:
        yield srv


def assert_still_serving(server: HttpApiServer) -> None:
    reply = exchange(server, request("GET", "/api/v1/namespaces/default/pods", Connection="close"))
    assert reply.code == 200
    assert reply.json()["kind"] == "PodList"


# ------------------------------------------------------------------ loopback


def test_binds_to_loopback_by_default() -> None:
    with HttpApiServer() as srv:
        assert srv.host == "127.0.0.1"
        assert srv.url.startswith("http://127.0.0.1:")
        assert srv.kubeconfig()["clusters"][0]["cluster"]["server"] == f"{srv.url}/{srv.token}"


def _non_loopback_address() -> str | None:
    """This machine's outward IPv4 address, if it has one (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: routing lookup only
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_not_reachable_on_another_interface() -> None:
    address = _non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with HttpApiServer() as srv, pytest.raises(ConnectionRefusedError):
        socket.create_connection((address, srv.port), timeout=TIMEOUT).close()


# ------------------------------------------------------------- body limits


def test_default_limit_is_upstreams_3_mib() -> None:
    assert DEFAULT_MAX_BODY == 3 * 1024 * 1024


def test_oversized_content_length_is_413_without_reading_the_body(server: HttpApiServer) -> None:
    # The body is never sent: the server must answer from the header alone.
    raw = request("POST", PODS, Content_Type="application/json", Content_Length="10000000")
    reply = exchange(server, raw)
    assert reply.code == 413
    assert reply.is_status()
    assert reply.json()["reason"] == "RequestEntityTooLarge"
    assert reply.headers.get("connection") == "close"
    assert_still_serving(server)


def test_oversized_chunked_body_is_413(server: HttpApiServer) -> None:
    chunk = b"x" * 3000
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(3)) + b"0\r\n\r\n"
    raw = request("POST", PODS, body, Content_Type="application/json", Transfer_Encoding="chunked")
    reply = exchange(server, raw)
    assert reply.code == 413
    assert reply.is_status()
    assert_still_serving(server)


def test_body_at_the_limit_is_accepted(server: HttpApiServer) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "annotations": {"a": ""}}}
    pod["metadata"]["annotations"]["a"] = "x" * (4096 - len(json.dumps(pod)))
    body = json.dumps(pod).encode()
    assert len(body) == 4096
    reply = exchange(server, request("POST", PODS, body, Content_Type="application/json"))
    assert reply.code == 201, reply.body


def test_oversized_admin_fault_body_is_413(server: HttpApiServer) -> None:
    reply = exchange(server, request("POST", "/drasim/faults", b"{" + b" " * 5000 + b"}"))
    assert reply.code == 413
    assert reply.is_status()


# --------------------------------------------------------- garbage answered

GARBAGE_WITH_STATUS = {
    "invalid-json": request("POST", PODS, b"{{{", Content_Type="application/json"),
    "not-utf8": request("POST", PODS, b"\xff\xfe\xfd", Content_Type="application/json"),
    "json-not-object": request("POST", PODS, b"[1, 2]", Content_Type="application/json"),
    "python-literal": request("POST", PODS, b"{'a': __import__('os')}", Content_Type="application/json"),
    "yaml-tag": request(
        "POST", PODS, b"!!python/object/apply:os.system [id]", Content_Type="application/yaml"
    ),
    "bad-protobuf": request(
        "POST", PODS, b"k8s\x00\x0a\xff\xff", Content_Type="application/vnd.kubernetes.protobuf"
    ),
    "bad-patch": request("PATCH", PODS + "/p", b"not json", Content_Type="application/merge-patch+json"),
    "bad-patch-type": request("PATCH", PODS + "/p", b"{}", Content_Type="text/plain"),
    "bad-label-selector": request("GET", "/api/v1/pods?labelSelector=%28%28%28"),
    "bad-timeout": request("GET", "/api/v1/pods?watch=true&timeoutSeconds=xyz"),
    "unknown-path": request("GET", "/%%%/../\xff"),
    "unknown-resource": request("GET", "/apis/nope.example.com/v1/things"),
    "method-not-allowed": request("PUT", PODS, POD, Content_Type="application/json"),
    "not-acceptable": request("GET", PODS, Accept="text/html"),
    "negative-content-length": request("POST", PODS, Content_Type="application/json", Content_Length="-5")
    + b"{}",
    "bad-chunk-size": request("POST", PODS, Content_Type="application/json", Transfer_Encoding="chunked")
    + b"zz\r\n",
    # within the 4096-byte limit, deeper than the json module's recursion limit
    "deeply-nested-json": request("POST", PODS, b"[" * 2000 + b"]" * 2000, Content_Type="application/json"),
    "non-numeric-content-length": request("POST", PODS, Content_Type="application/json", Content_Length="abc")
    + b"{}",
}


@pytest.mark.parametrize("raw", GARBAGE_WITH_STATUS.values(), ids=GARBAGE_WITH_STATUS.keys())
def test_bad_requests_get_a_4xx_status(server: HttpApiServer, raw: bytes) -> None:
    reply = exchange(server, raw)
    assert 400 <= reply.code < 500, (reply.code, reply.body[:300])
    assert reply.is_status(), reply.body[:300]
    assert b"Traceback" not in reply.body
    assert_still_serving(server)


@dataclass(frozen=True)
class Expected:
    """The Status a piece of protocol garbage must get (reason "" where upstream has none)."""

    code: int
    reason: str
    message: str  # a fragment of the Status message


PROTOCOL_GARBAGE = {
    "binary-request-line": (
        b"\x00\x01\x02garbage\r\n\r\n",
        Expected(400, "BadRequest", "Bad request syntax"),
    ),
    "unknown-http-version": (b"GET / HTTP/9.9\r\n\r\n", Expected(505, "", "Invalid HTTP version (9.9)")),
    "malformed-http-version": (b"GET / HTTP/1.x\r\n\r\n", Expected(400, "BadRequest", "HTTP/1.x")),
    "http-version-below-1": (
        b"GET / HTTP/0.8\r\n\r\n",
        Expected(505, "", "unsupported HTTP version HTTP/0.8"),
    ),
    "explicit-http-0.9": (b"GET / HTTP/0.9\r\n\r\n", Expected(505, "", "unsupported HTTP version HTTP/0.9")),
    "http-0.9-request": (b"GET /api\r\n\r\n", Expected(400, "BadRequest", "malformed HTTP request")),
    "http-0.9-post": (b"POST /api\r\n\r\n", Expected(400, "BadRequest", "Bad HTTP/0.9 request type")),
    "method-not-a-token": (request("G(T", "/api"), Expected(400, "BadRequest", "invalid method 'G(T'")),
    # An unknown method is an unsupported verb like any other: 405 on a resource path, as upstream.
    "unknown-method": (
        request("BREW", PODS),
        Expected(405, "MethodNotAllowed", "does not allow this method"),
    ),
    "unknown-method-on-object": (
        request("BREW", PODS + "/p"),
        Expected(405, "MethodNotAllowed", "does not allow this method"),
    ),
    "unknown-method-unknown-path": (request("BREW", "/nope"), Expected(404, "NotFound", "could not find")),
    "unknown-method-with-body": (
        request("BREW", PODS, POD, Content_Type="application/json"),
        Expected(405, "MethodNotAllowed", "does not allow this method"),
    ),
    "request-line-too-long": (request("GET", "/" + "a" * 70_000), Expected(414, "", "Request-URI Too Long")),
    "header-line-too-long": (request("GET", "/api", X_Long="a" * 70_000), Expected(431, "", "Line too long")),
    "too-many-headers": (
        request("GET", "/api", **{f"X_{i}": "y" for i in range(101)}),
        Expected(431, "", "Too many headers"),
    ),
}


@pytest.mark.parametrize(("raw", "expected"), PROTOCOL_GARBAGE.values(), ids=PROTOCOL_GARBAGE.keys())
def test_protocol_garbage_gets_a_status(server: HttpApiServer, raw: bytes, expected: Expected) -> None:
    """Never http.server's HTML page or an HTTP/0.9 bare body: an HTTP/1.1 JSON Status."""
    reply = exchange(server, raw, half_close=True)
    assert reply.code == expected.code, (reply.code, reply.body[:300])
    assert reply.headers.get("content-type") == "application/json"
    assert int(reply.headers["content-length"]) == len(reply.body)
    body = reply.json()
    want = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": body["message"],
        "reason": expected.reason,
        "code": expected.code,
    }
    if not expected.reason:
        del want["reason"]  # upstream's StatusReasonUnknown is "", and Reason is omitempty
    assert body == want
    assert expected.message in body["message"]
    assert_still_serving(server)


@pytest.mark.parametrize(
    "name",
    [n for n in PROTOCOL_GARBAGE if not n.startswith("unknown-method") or n.endswith("with-body")],
)
def test_protocol_garbage_closes_the_connection(server: HttpApiServer, name: str) -> None:
    """What http.server cannot parse (or leaves unread) ends the connection, and the answer says so."""
    raw, expected = PROTOCOL_GARBAGE[name]
    reply = exchange(server, raw)
    assert reply.code == expected.code
    assert reply.headers.get("connection") == "close"


def test_unknown_method_keeps_the_connection_open(server: HttpApiServer) -> None:
    """Like any other 405 without a body, an unknown method leaves a keep-alive connection usable."""
    with socket.create_connection((server.host, server.port), timeout=TIMEOUT) as conn:
        conn.sendall(request("BREW", PODS) + request("GET", PODS))
        data = b""
        while data.count(b"HTTP/1.1 ") < 2 or not data.endswith(b"}"):
            chunk = conn.recv(65536)
            assert chunk, data
            data += chunk
    assert data.startswith(b"HTTP/1.1 405 ")
    assert b"HTTP/1.1 200 " in data
    assert b'"kind":"PodList"' in data


def test_head_gets_status_headers_without_a_body(server: HttpApiServer) -> None:
    reply = exchange(server, request("HEAD", PODS, Connection="close"))
    assert reply.code == 405
    assert reply.headers.get("content-type") == "application/json"
    assert int(reply.headers["content-length"]) > 0
    assert reply.body == b""  # read up to EOF: the server closed without sending a body
    assert_still_serving(server)


def test_head_with_protocol_garbage_gets_no_body(server: HttpApiServer) -> None:
    reply = exchange(server, request("HEAD", "/api", X_Long="a" * 70_000), half_close=True)
    assert reply.code == 431
    assert reply.headers.get("connection") == "close"
    assert int(reply.headers["content-length"]) > 0
    assert reply.body == b""


def test_a_stalled_client_does_not_block_others(server: HttpApiServer) -> None:
    """A client that promises a body and never sends it ties up only its own connection."""
    with socket.create_connection((server.host, server.port), timeout=TIMEOUT) as stalled:
        stalled.sendall(request("POST", PODS, Content_Type="application/json", Content_Length="100"))
        for _ in range(3):
            assert_still_serving(server)


def test_stop_returns_while_a_client_is_stalled() -> None:
    srv = HttpApiServer(token=TOKEN).start()
    with socket.create_connection((srv.host, srv.port), timeout=TIMEOUT) as stalled:
        stalled.sendall(request("POST", PODS, Content_Type="application/json", Content_Length="100"))
        assert exchange(srv, request("GET", "/healthz")).code == 200
        srv.stop()
        stalled.settimeout(TIMEOUT)
        assert stalled.recv(1024) == b""  # the server closed the stalled connection
