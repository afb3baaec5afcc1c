"""The proxy in front of an in-process fake driver, called over real sockets with raw stubs."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import hpack
import pytest

from drasim._proto.dra.v1 import api_pb2 as dra_v1
from drasim._proto.dra.v1 import api_pb2_grpc as dra_v1_grpc
from drasim._proto.dra.v1beta1 import api_pb2 as dra_v1beta1
from drasim._proto.dra.v1beta1 import api_pb2_grpc as dra_v1beta1_grpc
from drasim._proto.drahealth.v1alpha1 import api_pb2 as health_pb
from drasim._proto.drahealth.v1alpha1 import api_pb2_grpc as health_grpc
from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim._proto.pluginregistration.v1 import api_pb2_grpc as reg_grpc
from drasim.apiversions import DRA_SERVICES, HEALTH_V1ALPHA1
from drasim.faults import UNKNOWN_UID, PluginFault
from drasim.journal import Journal
from drasim.journal.kinds import KIND_FIELDS
from drasim.proxy import Proxy, ProxyConfig, h2
from drasim.proxy.splice import Splicer
from fake_plugins import FakeDriver, FakeDriverConfig

DRIVER = "gpu.example.com"
OPTIONS = [("grpc.use_local_subchannel_pool", 1)]


def _claim(name: str, uid: str, device: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": uid},
        "spec": {"devices": {"requests": [{"name": "gpu"}]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": device}]
                }
            }
        },
    }


CLAIMS = {("default", "a"): _claim("a", "uid-a", "gpu-0"), ("default", "b"): _claim("b", "uid-b", "gpu-1")}


class Node:
    """A fake driver behind a proxy, and stubs that dial the proxy like a kubelet."""

    def __init__(self, tmp: Path, journal: Journal, *, splice: bool = True) -> None:
        self.tmp = tmp
        self.journal = journal
        self.driver = FakeDriver(
            FakeDriverConfig(
                driver_name=DRIVER,
                registry_dir=str(tmp / "driver-registry"),
                plugin_dir=str(tmp / "plugins" / DRIVER),
                cdi_dir=str(tmp / "cdi"),
                state_dir=str(tmp / "state"),
                services=[*DRA_SERVICES, HEALTH_V1ALPHA1],
                advertise=["v1.DRAPlugin", "v1beta1.DRAPlugin", HEALTH_V1ALPHA1],
            ),
            claim_source=lambda ns, name: CLAIMS[(ns, name)],
        )
        self.proxy = Proxy(
            ProxyConfig(
                registry_dir=tmp / "registry",
                driver_registry_dir=tmp / "driver-registry",
                socket_dir=tmp / "proxy",
                recorder=journal,
                side="kubelet",
                splice=splice,
            )
        )
        self.channels: list[grpc.Channel] = []

    def registration(self) -> Any:
        self.proxy.sync()
        [socket] = self.proxy.registration_sockets()
        return reg_grpc.RegistrationStub(self._channel(socket))

    def register(self) -> str:
        info = self.registration().GetInfo(reg_pb.InfoRequest(), timeout=5)
        return str(info.endpoint)

    def _channel(self, path: Path | str) -> grpc.Channel:
        channel = grpc.insecure_channel(f"unix:{path}", options=OPTIONS)
        self.channels.append(channel)
        return channel

    def v1(self, endpoint: str) -> Any:
        return dra_v1_grpc.DRAPluginStub(self._channel(endpoint))

    def close(self) -> None:
        for channel in self.channels:
            channel.close()
        self.proxy.stop()
        self.driver.release_hangs()
        self.driver.stop()


@pytest.fixture(params=["splice", "grpcio"])
def node(request: pytest.FixtureRequest) -> Iterator[Node]:
    """A node whose proxy serves DRA sockets with the splice (a fault rule added later moves
    them to the grpcio path), or always with the grpcio path."""
    yield from _node(splice=request.param == "splice")


@pytest.fixture
def spliced_node() -> Iterator[Node]:
    """A node whose proxy serves its DRA socket with the splice."""
    yield from _node(splice=True)


def _node(*, splice: bool) -> Iterator[Node]:
    # A short directory: pytest's tmp_path under xdist is too long for unix socket paths.
    root = Path(tempfile.mkdtemp(prefix="drasim-px-", dir="/tmp"))
    journal = Journal()
    n = Node(root, journal, splice=splice)
    n.driver.start()
    n.proxy.start()
    try:
        yield n
    finally:
        n.close()
        shutil.rmtree(root, ignore_errors=True)


def _prepare(stub: Any, *names: str, timeout: float = 5) -> Any:
    claims = [dra_v1.Claim(namespace="default", name=n, uid=f"uid-{n}") for n in names]
    return stub.NodePrepareResources(dra_v1.NodePrepareResourcesRequest(claims=claims), timeout=timeout)


def test_registers_in_the_drivers_place_with_its_own_endpoint(node: Node) -> None:
    endpoint = node.register()
    assert endpoint.startswith(str(node.tmp / "proxy"))
    assert endpoint != node.driver.endpoint
    assert [p.name for p in node.proxy.registration_sockets()] == [Path(node.driver.registration_socket).name]
    reply = _prepare(node.v1(endpoint), "a")
    assert list(reply.claims["uid-a"].devices[0].cdi_device_ids)  # the driver prepared it
    assert node.driver.calls_to("NodePrepareResources")  # through the driver's own socket


def test_journals_calls_as_the_kubelet_client_does(node: Node) -> None:
    endpoint = node.register()
    _prepare(node.v1(endpoint), "a")
    [call] = node.journal.rpc_calls("NodePrepareResources", side="kubelet")
    assert call.driver == DRIVER
    assert call.code == "OK"
    assert call.claim_keys == ["default/a"]
    assert call.method == "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
    entry = call.claim_results["uid-a"]
    assert entry["error"] == ""
    assert entry["devices"][0]["device_name"] == "gpu-0"
    [info] = node.journal.rpc_calls("GetInfo", side="kubelet")
    assert info.response["endpoint"] == endpoint
    for event in (call.event, info.event):  # every field drasim's kubelet client journals
        assert set(KIND_FIELDS["rpc"]) <= set(event)


def test_notify_registration_status_is_passed_through(node: Node) -> None:
    node.register()
    node.registration().NotifyRegistrationStatus(reg_pb.RegistrationStatus(plugin_registered=True), timeout=5)
    assert node.driver.registration_status == (True, "")
    [call] = node.journal.rpc_calls("NotifyRegistrationStatus", side="kubelet")
    assert call.request == {"plugin_registered": True}
    assert call.code == "OK"


def test_v1beta1_is_forwarded_too(node: Node) -> None:
    endpoint = node.register()
    stub = dra_v1beta1_grpc.DRAPluginStub(node._channel(endpoint))
    claims = [dra_v1beta1.Claim(namespace="default", name="a", uid="uid-a")]
    reply = stub.NodeUnprepareResources(dra_v1beta1.NodeUnprepareResourcesRequest(claims=claims), timeout=5)
    assert reply.claims["uid-a"].error == ""
    [call] = node.journal.rpc_calls("NodeUnprepareResources", side="kubelet")
    assert call.method.startswith("/k8s.io.kubelet.pkg.apis.dra.v1beta1.")


def test_status_code_fault_answers_without_forwarding(node: Node) -> None:
    endpoint = node.register()
    node.proxy.add_faults(
        [PluginFault(rpc="NodePrepareResources", code="UNAVAILABLE", message="boom", times=1)]
    )
    with pytest.raises(grpc.RpcError) as err:
        _prepare(node.v1(endpoint), "a")
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    assert err.value.details() == "boom"
    assert not node.driver.calls_to("NodePrepareResources")
    _prepare(node.v1(endpoint), "a")  # times: 1
    codes = [c.code for c in node.journal.rpc_calls("NodePrepareResources", side="kubelet")]
    assert codes == ["Unavailable", "OK"]


def test_reply_faults_rewrite_the_drivers_reply(node: Node) -> None:
    endpoint = node.register()
    node.proxy.add_faults(
        [PluginFault(rpc="NodePrepareResources", claim="default/a", error="no such GPU", unknown_uid=True)]
    )
    reply = _prepare(node.v1(endpoint), "a", "b")
    assert reply.claims["uid-a"].error == "no such GPU"
    assert not reply.claims["uid-a"].devices
    assert reply.claims["uid-b"].devices
    assert UNKNOWN_UID in reply.claims
    assert len(node.driver.calls_to("NodePrepareResources")) == 1  # the driver did its work
    [call] = node.journal.rpc_calls("NodePrepareResources", side="kubelet")
    assert call.claim_errors == {"uid-a": "no such GPU"}


def test_missing_and_nil_entries(node: Node) -> None:
    endpoint = node.register()
    node.proxy.add_faults(
        [PluginFault(rpc="NodePrepareResources", claim="default/a", missing_claim=True, times=1)]
    )
    node.proxy.add_faults(
        [PluginFault(rpc="NodePrepareResources", claim="default/b", nil_entry=True, times=1)]
    )
    reply = _prepare(node.v1(endpoint), "a", "b")
    assert "uid-a" not in reply.claims
    assert "uid-b" in reply.claims
    reply = _prepare(node.v1(endpoint), "b")
    assert not reply.claims["uid-b"].devices
    assert reply.claims["uid-b"].error == ""


def test_hang_ends_when_the_caller_gives_up_and_is_not_forwarded(node: Node) -> None:
    endpoint = node.register()
    node.proxy.add_faults([PluginFault(rpc="NodePrepareResources", hang=True, times=1)])
    with pytest.raises(grpc.RpcError) as err:
        _prepare(node.v1(endpoint), "a", timeout=0.3)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    event = node.journal.wait_for(5, kind="rpc", side="kubelet", code="Canceled")
    assert event is not None
    assert not node.driver.calls_to("NodePrepareResources")
    assert node.proxy.held_calls() == 0


def test_block_holds_until_released_then_forwards(node: Node) -> None:
    endpoint = node.register()
    node.proxy.add_faults([PluginFault(rpc="NodePrepareResources", block=True, times=1)])
    stub = node.v1(endpoint)
    future = stub.NodePrepareResources.future(
        dra_v1.NodePrepareResourcesRequest(claims=[dra_v1.Claim(namespace="default", name="a", uid="uid-a")]),
        timeout=0.3,
    )
    with pytest.raises(grpc.RpcError):
        future.result()  # the caller gave up; the call stays held
    assert node.proxy.rules.wait_held(1, timeout=5)
    assert not node.driver.calls_to("NodePrepareResources")
    mark = node.journal.mark()
    node.proxy.release()
    assert node.journal.wait_for(10, kind="rpc", since_seq=mark, side="kubelet") is not None
    assert len(node.driver.calls_to("NodePrepareResources")) == 1  # forwarded once released


def test_crash_kills_the_driver_before_forwarding(node: Node) -> None:
    killed: list[str] = []
    node.proxy.config.kill_driver = lambda: (killed.append("kill"), node.driver.kill())  # type: ignore[func-returns-value]
    endpoint = node.register()
    node.proxy.add_faults([PluginFault(rpc="NodePrepareResources", crash="before", times=1)])
    with pytest.raises(grpc.RpcError) as err:
        _prepare(node.v1(endpoint), "a")
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    assert killed == ["kill"]
    assert not node.driver.running
    assert not node.driver.calls_to("NodePrepareResources")


def test_the_proxys_dra_socket_follows_the_drivers_connection(node: Node) -> None:
    endpoint = node.register()
    _prepare(node.v1(endpoint), "a")
    [forwarder] = node.proxy._endpoints.values()
    stub = node.v1(endpoint)
    _prepare(stub, "a")
    node.driver.stop()
    if isinstance(forwarder, Splicer):  # the kubelet's connection ended with the driver's
        with pytest.raises(grpc.RpcError) as err:
            _prepare(stub, "a", timeout=2)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    else:  # the grpcio path stops serving until its channel to the driver is ready again
        assert _wait(lambda: not forwarder.serving)
    node.driver.start()
    endpoint = node.register()  # the kubelet registers the new socket
    assert forwarder.serving
    _prepare(node.v1(endpoint), "a")


def test_connections_can_be_reset_and_refused(node: Node) -> None:
    endpoint = node.register()
    stub = node.v1(endpoint)
    _prepare(stub, "a")
    node.proxy.reset_connections()
    _prepare(node.v1(endpoint), "a")  # a new connection is accepted at once
    node.proxy.refuse()
    with pytest.raises(grpc.RpcError) as err:
        _prepare(node.v1(endpoint), "a", timeout=2)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    node.register()  # a registration does not open a refusing socket
    with pytest.raises(grpc.RpcError):
        _prepare(node.v1(endpoint), "a", timeout=2)
    node.proxy.refuse(False)
    _prepare(node.v1(endpoint), "a")
    assert node.driver.running


def test_health_stream_is_forwarded_and_journaled(node: Node) -> None:
    endpoint = node.register()
    stub = health_grpc.DRAResourceHealthStub(node._channel(endpoint))
    stream = stub.NodeWatchResources(health_pb.NodeWatchResourcesRequest(), timeout=10)
    first = next(stream)
    assert first.devices
    node.driver.set_health("gpu-0", "UNHEALTHY", pool="node-1", message="hot")
    second = next(stream)
    assert any(d.health == health_pb.UNHEALTHY for d in second.devices)
    stream.cancel()
    calls = node.journal.rpc_calls("NodeWatchResources", side="kubelet")
    assert [bool(c.event.get("stream")) for c in calls] == [False, True]


def test_a_driver_registration_socket_removed_removes_the_proxys(node: Node) -> None:
    node.register()
    node.driver.stop()
    node.proxy.sync()
    assert node.proxy.registration_sockets() == []
    assert not any((node.tmp / "registry").iterdir())


def _wait(predicate: Any, timeout: float = 5.0) -> bool:
    import threading

    done = threading.Event()
    deadline = 0.0
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        done.wait(0.01)
    return bool(predicate())


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


def test_the_splice_and_the_grpcio_path_journal_the_same() -> None:
    journals = []
    for splice in (True, False):
        root = Path(tempfile.mkdtemp(prefix="drasim-px-", dir="/tmp"))
        journal = Journal()
        n = Node(root, journal, splice=splice)
        n.driver.start()
        n.proxy.start()
        try:
            _same_calls(n)
            [endpoint] = n.proxy._endpoints.values()
            assert isinstance(endpoint, Splicer) == splice
        finally:
            n.close()
            shutil.rmtree(root, ignore_errors=True)
        journals.append(_normalized(journal, root))
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


@pytest.fixture
def short_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="drasim-px-", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


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


# ----------------------------------------------------------------------------- a driver restarted slowly
class _Registration(grpc.GenericRpcHandler):  # type: ignore[type-arg]
    """A driver's registration service: GetInfo only."""

    def service(self, details: grpc.HandlerCallDetails) -> Any:
        if not str(details.method).endswith("/GetInfo"):
            return None
        info = reg_pb.PluginInfo(
            type="DRAPlugin", name="slow.example.com", supported_versions=["v1.DRAPlugin"]
        )
        return grpc.unary_unary_rpc_method_handler(
            lambda _request, _context: info.SerializeToString(),
            request_deserializer=None,
            response_serializer=None,
        )


def _relay(listener: socket.socket, target: Path) -> None:
    """Accept on ``listener`` and copy each connection's bytes to and from ``target``."""

    def pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(str(target))
            threading.Thread(target=pump, args=(conn, upstream), daemon=True).start()
            threading.Thread(target=pump, args=(upstream, conn), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()


def test_get_info_waits_for_a_driver_restarted_slowly(short_root: Path) -> None:
    """The driver's registration socket exists before it serves on it: the kubelet's GetInfo
    through the proxy waits for it (within the kubelet's deadline) instead of failing at once."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[_Registration()])
    server.add_insecure_port(f"unix:{short_root / 'real.sock'}")
    server.start()
    (short_root / "driver-registry").mkdir()
    # Bound, not listening yet: a connection is refused, as while the driver starts.
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow.bind(str(short_root / "driver-registry" / "slow.example.com-reg.sock"))
    proxy = Proxy(
        ProxyConfig(
            registry_dir=short_root / "registry",
            driver_registry_dir=short_root / "driver-registry",
            socket_dir=short_root / "proxy",
        )
    ).start()
    try:
        [socket_path] = proxy.registration_sockets()
        [(_, registration)] = proxy._registrations.values()
        with grpc.insecure_channel(f"unix:{socket_path}", options=OPTIONS) as channel:
            reply = reg_grpc.RegistrationStub(channel).GetInfo.future(reg_pb.InfoRequest(), timeout=10)
            # The proxy tried the driver and was refused; then the driver serves.
            assert _wait(lambda: registration._state == grpc.ChannelConnectivity.TRANSIENT_FAILURE)
            assert not reply.done()
            slow.listen(4)
            _relay(slow, short_root / "real.sock")
            assert reply.result(timeout=10).name == "slow.example.com"
    finally:
        proxy.stop()
        slow.close()
        server.stop(None)


def test_every_spliced_call_is_journaled_before_the_kubelet_has_its_reply(spliced_node: Node) -> None:
    """The driver may answer before the thread that passed the request on has read it."""
    node = spliced_node
    stub = node.v1(node.register())
    for i in range(300):
        _prepare(stub, "a")
        assert len(node.journal.rpc_calls("NodePrepareResources", side="kubelet")) == i + 1
