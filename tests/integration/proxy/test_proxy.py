"""The proxy in front of an in-process fake driver, called over real sockets with raw stubs."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from drasim._proto.dra.v1 import api_pb2 as dra_v1
from drasim._proto.dra.v1beta1 import api_pb2 as dra_v1beta1
from drasim._proto.dra.v1beta1 import api_pb2_grpc as dra_v1beta1_grpc
from drasim._proto.drahealth.v1alpha1 import api_pb2 as health_pb
from drasim._proto.drahealth.v1alpha1 import api_pb2_grpc as health_grpc
from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim._proto.pluginregistration.v1 import api_pb2_grpc as reg_grpc
from drasim.faults import UNKNOWN_UID, PluginFault
from drasim.journal.kinds import KIND_FIELDS
from drasim.proxy import Proxy, ProxyConfig
from drasim.proxy.splice import Splicer

Node = Any  # tests/integration/proxy/conftest.py
DRIVER = "gpu.example.com"
OPTIONS = [("grpc.use_local_subchannel_pool", 1)]


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


_wait = sys.modules["drasim_test_proxy_waiting"].until  # loaded by tests/conftest.py


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
