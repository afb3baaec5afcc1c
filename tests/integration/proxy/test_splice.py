"""The proxy's splice (drasim/proxy/splice.py) end to end: the same journal as the grpcio path,
faults added later, a driver killed mid-call, garbage from either side, a half-closed connection."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import grpc
import hpack
import pytest

from drasim._proto.dra.v1 import api_pb2 as dra_v1
from drasim._proto.dra.v1beta1 import api_pb2 as dra_v1beta1
from drasim._proto.dra.v1beta1 import api_pb2_grpc as dra_v1beta1_grpc
from drasim._proto.drahealth.v1alpha1 import api_pb2 as health_pb
from drasim._proto.drahealth.v1alpha1 import api_pb2_grpc as health_grpc
from drasim.faults import PluginFault
from drasim.journal import Journal
from drasim.proxy import Proxy, ProxyConfig, h2
from drasim.proxy.splice import Splicer

Node = Any  # tests/integration/proxy/conftest.py
OPTIONS = [("grpc.use_local_subchannel_pool", 1)]


def _prepare(stub: Any, *names: str, timeout: float = 5) -> Any:
    claims = [dra_v1.Claim(namespace="default", name=n, uid=f"uid-{n}") for n in names]
    return stub.NodePrepareResources(dra_v1.NodePrepareResourcesRequest(claims=claims), timeout=timeout)


_wait = sys.modules["drasim_test_proxy_waiting"].until  # loaded by tests/conftest.py


# ----------------------------------------------------------------------------- the splice
def _normalized(journal: Journal, root: Path) -> list[dict[str, Any]]:
    out = []
    for event in journal.events("rpc"):
        body = {k: v for k, v in event.items() if k not in ("seq", "t", "duration")}
        text = re.sub(
            r"dra-[0-9a-f]{8}\.sock", "dra-<hash>.sock", json.dumps(body).replace(str(root), "<root>")
        )
        text = re.sub(r'"last_updated_time": "[0-9]+"', '"last_updated_time": "<time>"', text)
        out.append(json.loads(text))
    return out


def _same_calls(node: Node) -> None:
    """Calls of every kind the proxy journals, in one order."""
    endpoint = node.register()
    stub = node.v1(endpoint)
    _prepare(stub, "a")
    _prepare(stub, "a", "b")
    stub.NodeUnprepareResources(
        dra_v1.NodeUnprepareResourcesRequest(
            claims=[dra_v1.Claim(namespace="default", name="a", uid="uid-a")]
        ),
        timeout=5,
    )
    beta = dra_v1beta1_grpc.DRAPluginStub(node._channel(endpoint))
    beta.NodePrepareResources(
        dra_v1beta1.NodePrepareResourcesRequest(
            claims=[dra_v1beta1.Claim(namespace="default", name="b", uid="uid-b")]
        ),
        timeout=5,
    )
    # The driver's own error, with a message gRPC percent-encodes on the wire.
    node.driver.add_faults(
        [
            PluginFault(
                rpc="NodePrepareResources",
                code="RESOURCE_EXHAUSTED",
                message="no room: 100% full, é",
                times=1,
            )
        ]
    )
    with pytest.raises(grpc.RpcError):
        _prepare(stub, "a")
    # A method the proxy does not read, which the driver does not serve.
    other = node._channel(endpoint).unary_unary(
        "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeNothing",
        request_serializer=None,
        response_deserializer=None,
    )
    with pytest.raises(grpc.RpcError):
        other(b"", timeout=5)
    health = health_grpc.DRAResourceHealthStub(node._channel(endpoint))
    stream = health.NodeWatchResources(health_pb.NodeWatchResourcesRequest(), timeout=10)
    next(stream)
    node.driver.set_health("gpu-0", "UNHEALTHY", pool="node-1", message="hot")
    next(stream)
    stream.cancel()


def test_the_splice_and_the_grpcio_path_journal_the_same(make_node: Any) -> None:
    journals = []
    for splice in (True, False):
        with make_node(splice=splice) as n:
            _same_calls(n)
            [endpoint] = n.proxy._endpoints.values()
            assert isinstance(endpoint, Splicer) == splice
            journals.append(_normalized(n.journal, n.tmp))
    spliced, forwarded = journals
    assert [e["method"].rsplit("/", 1)[1] for e in spliced] == [
        "GetInfo",
        "NodePrepareResources",
        "NodePrepareResources",
        "NodeUnprepareResources",
        "NodePrepareResources",
        "NodePrepareResources",
        "NodeNothing",
        "NodeWatchResources",
        "NodeWatchResources",
    ]
    assert spliced[5]["code"] == "ResourceExhausted"
    assert spliced[5]["error"] == "no room: 100% full, é"
    assert spliced == forwarded


def test_a_fault_added_to_a_splicing_proxy_still_applies(node: Node) -> None:
    endpoint = node.register()
    stub = node.v1(endpoint)
    _prepare(stub, "a")
    node.proxy.add_faults(
        [PluginFault(rpc="NodePrepareResources", code="UNAVAILABLE", message="scripted", times=1)]
    )
    [forwarder] = node.proxy._endpoints.values()
    assert not isinstance(forwarder, Splicer)
    with pytest.raises(grpc.RpcError) as err:  # a new call on the same channel meets the rule
        _wait_for_code(lambda: _prepare(stub, "a"), "scripted")
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    _prepare(stub, "a")
    if node.proxy.config.splice:
        assert any("moved to the grpcio path" in e["description"] for e in node.journal.events("fault"))


def _wait_for_code(call: Any, details: str) -> None:
    """Call until the call fails with ``details`` (a reset connection may fail one call first)."""
    for _ in range(3):
        try:
            call()
        except grpc.RpcError as err:
            if err.details() == details:
                raise
        else:
            return


class _Bare:
    """A proxy with only a DRA socket, in front of ``upstream``."""

    def __init__(self, root: Path, upstream: Path) -> None:
        self.journal = Journal()
        self.proxy = Proxy(
            ProxyConfig(
                registry_dir=root / "registry",
                driver_registry_dir=root / "driver-registry",
                socket_dir=root / "proxy",
                recorder=self.journal,
            )
        ).start()
        self.endpoint = self.proxy.endpoint_for(upstream)
        assert isinstance(self.endpoint, Splicer)

    def call(self, timeout: float = 5) -> grpc.Future:
        channel = grpc.insecure_channel(f"unix:{self.endpoint.listen}", options=OPTIONS)
        call = channel.unary_unary(PREPARE_V1, request_serializer=None, response_deserializer=None)
        request = dra_v1.NodePrepareResourcesRequest(
            claims=[dra_v1.Claim(namespace="default", name="a", uid="uid-a")]
        )
        return call.future(request.SerializeToString(), timeout=timeout)


PREPARE_V1 = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"

_HANGING_DRIVER = """
import sys, threading
from concurrent import futures
import grpc
class Handler(grpc.GenericRpcHandler):
    def service(self, details):
        def handle(request, context):
            print("called", flush=True)
            threading.Event().wait()
        return grpc.unary_unary_rpc_method_handler(handle)
server = grpc.server(futures.ThreadPoolExecutor(4), handlers=[Handler()])
server.add_insecure_port("unix:" + sys.argv[1])
server.start()
print("ready", flush=True)
threading.Event().wait()
"""


def test_a_driver_killed_mid_call_ends_the_call_unavailable(short_root: Path) -> None:
    socket_path = short_root / "driver.sock"
    child = subprocess.Popen(
        [sys.executable, "-c", _HANGING_DRIVER, str(socket_path)], stdout=subprocess.PIPE, text=True
    )
    bare = None
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        bare = _Bare(short_root, socket_path)
        future = bare.call(timeout=30)
        assert child.stdout.readline().strip() == "called"
        child.kill()
        err = future.exception(timeout=10)
        assert isinstance(err, grpc.RpcError)
        assert err.code() == grpc.StatusCode.UNAVAILABLE
        [event] = bare.journal.events("rpc")
        assert event["code"] == "Unavailable"
        assert event["method"] == PREPARE_V1
        assert "the driver's connection ended during the call" in event["error"]
        assert event["request"] == {"claims": [{"namespace": "default", "name": "a", "uid": "uid-a"}]}
    finally:
        child.kill()
        child.wait(10)
        if bare is not None:
            bare.proxy.stop()


def _raw_server(path: Path, answer: bytes) -> tuple[socket.socket, list[int]]:
    """A "driver" that answers each connection's first bytes with ``answer``; the list counts
    the connections that got it."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    answered: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # the test closed the listener
            with conn, contextlib.suppress(OSError):
                if conn.recv(1024):  # not the proxy's probe, which sends nothing
                    conn.sendall(answer)
                    answered.append(1)
                    conn.recv(1024)  # until the proxy closes the connection

    threading.Thread(target=serve, daemon=True).start()
    return listener, answered


def test_garbage_from_the_driver_is_a_journal_error_and_ends_the_call(short_root: Path) -> None:
    socket_path = short_root / "driver.sock"
    listener, answered = _raw_server(socket_path, b"HTTP/1.1 400 Bad Request\r\n\r\n")
    bare = _Bare(short_root, socket_path)
    try:
        err = bare.call().exception(timeout=10)
        assert isinstance(err, grpc.RpcError)
        assert err.code() == grpc.StatusCode.UNAVAILABLE
        assert answered
        fault = bare.journal.events("fault")[0]
        assert "the driver sent bytes that are not HTTP/2" in fault["description"]
        assert "first frame is not SETTINGS" in fault["description"]
    finally:
        bare.proxy.stop()
        listener.close()


def _read_until_closed(sock: socket.socket, timeout: float = 10) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_garbage_from_the_kubelet_is_a_journal_error_and_ends_the_connection(spliced_node: Node) -> None:
    node = spliced_node
    endpoint = node.register()
    _prepare(node.v1(endpoint), "a")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
        raw.connect(endpoint)
        raw.sendall(b"GET / HTTP/1.1\r\nHost: drasim\r\n\r\n")
        _read_until_closed(raw)
    assert _wait(lambda: node.journal.events("fault"))
    [fault] = node.journal.events("fault")
    assert (
        "the kubelet sent bytes that are not HTTP/2 (not an HTTP/2 connection preface)"
        in fault["description"]
    )
    _prepare(node.v1(endpoint), "a")  # other connections go on


def test_a_half_closed_connection_is_journaled_and_ends(spliced_node: Node) -> None:
    node = spliced_node
    endpoint = node.register()
    encoder = hpack.Encoder()
    fields = [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", PREPARE_V1),
        (":authority", "localhost"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ]
    request = dra_v1.NodePrepareResourcesRequest(
        claims=[dra_v1.Claim(namespace="default", name="a", uid="uid-a")]
    ).SerializeToString()
    body = b"\x00" + len(request).to_bytes(4, "big") + request
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
        raw.connect(endpoint)
        raw.sendall(
            h2.PREFACE
            + _frame(h2.SETTINGS, 0, 0, b"")
            + _frame(h2.HEADERS, h2.END_HEADERS, 1, encoder.encode(fields))
            + _frame(h2.DATA, h2.END_STREAM, 1, body)
        )
        raw.shutdown(socket.SHUT_WR)
        _read_until_closed(raw)
    assert _wait(lambda: node.journal.rpc_calls("NodePrepareResources", side="kubelet"))
    [call] = node.journal.rpc_calls("NodePrepareResources", side="kubelet")
    # The half-close reaches the driver, whose gRPC server may still answer, or (grpcio reads
    # the end of its input as the connection's end) end the call: "Unavailable: Socket closed".
    assert (call.event["code"], call.event["error"]) in (("OK", None), ("Unavailable", "Socket closed"))


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def test_every_spliced_call_is_journaled_before_the_kubelet_has_its_reply(spliced_node: Node) -> None:
    """The driver may answer before the thread that passed the request on has read it."""
    node = spliced_node
    stub = node.v1(node.register())
    for i in range(300):
        _prepare(stub, "a")
        assert len(node.journal.rpc_calls("NodePrepareResources", side="kubelet")) == i + 1


def test_a_reply_read_after_it_was_passed_on_holds_the_journals_readers(
    spliced_node: Node, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The splice passes the driver's reply on before it reads it; whoever reads the journal
    after the kubelet has the reply waits for the call's event (Journal.hold)."""
    node = spliced_node
    stub = node.v1(node.register())
    go = threading.Event()
    journal_end = Splicer.journal_end

    def late_journal_end(self: Splicer, call: h2.Call) -> None:
        assert go.wait(10), "the test never let the proxy journal the call"
        journal_end(self, call)

    monkeypatch.setattr(Splicer, "journal_end", late_journal_end)
    _prepare(stub, "a")  # the kubelet has the reply; the proxy has not journaled it yet
    seen: list[int] = []
    reader = threading.Thread(
        target=lambda: seen.append(len(node.journal.rpc_calls("NodePrepareResources", side="kubelet")))
    )
    reader.start()
    # The reader reads at once (a journal without the hold) or waits for the event.
    _wait(lambda: not reader.is_alive() or node.journal._waiters > 0)
    go.set()
    reader.join(10)
    assert seen == [1]
