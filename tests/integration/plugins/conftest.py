"""Small DRA plugins for the plugin-layer tests: real gRPC servers on real Unix sockets.

They are written here on purpose, independent of fake_plugins/, so that these tests
exercise only drasim.plugins.
"""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from drasim._proto.dra.v1 import api_pb2 as v1
from drasim._proto.dra.v1 import api_pb2_grpc as v1_grpc
from drasim._proto.dra.v1beta1 import api_pb2 as v1beta1
from drasim._proto.dra.v1beta1 import api_pb2_grpc as v1beta1_grpc
from drasim._proto.drahealth.v1 import api_pb2 as h1
from drasim._proto.drahealth.v1 import api_pb2_grpc as h1_grpc
from drasim._proto.drahealth.v1alpha1 import api_pb2 as h1a1
from drasim._proto.drahealth.v1alpha1 import api_pb2_grpc as h1a1_grpc
from drasim._proto.pluginregistration.v1 import api_pb2 as reg
from drasim._proto.pluginregistration.v1 import api_pb2_grpc as reg_grpc
from drasim.clock import ScaledClock


class RecordingEvents:
    """A thread-safe Recorder keeping (kind, fields) tuples, stamped with monotonic time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[tuple[str, dict[str, Any]]] = []

    def record(self, kind: str, **fields: Any) -> None:
        with self._lock:
            self.events.append((kind, {**fields, "_t": time.monotonic()}))

    def of(self, kind: str, **match: Any) -> list[dict[str, Any]]:
        with self._lock:
            return [f for k, f in self.events if k == kind and all(f.get(a) == b for a, b in match.items())]


def default_prepare(pb: Any, claim: Any, share: bool) -> Any:
    device = pb.Device(
        pool_name="pool-a",
        device_name=f"dev-{claim.uid}",
        request_names=["req"],
        cdi_device_ids=[f"example.com/gpu={claim.uid}"],
    )
    if share:
        device.share_id = f"share-{claim.uid}"
    return pb.NodePrepareResourceResponse(devices=[device])


class _DraServicer:
    def __init__(self, plugin: FakeDraPlugin, pb: Any) -> None:
        self.plugin = plugin
        self.pb = pb

    def NodePrepareResources(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        self.plugin.note("NodePrepareResources", request)
        if self.plugin.hang is not None:
            self.plugin.hang.wait(10)
        if self.plugin.prepare_hook is not None:
            return self.plugin.prepare_hook(self.pb, request)
        share = self.pb is v1
        return self.pb.NodePrepareResourcesResponse(
            claims={c.uid: default_prepare(self.pb, c, share) for c in request.claims}
        )

    def NodeUnprepareResources(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        self.plugin.note("NodeUnprepareResources", request)
        return self.pb.NodeUnprepareResourcesResponse(
            claims={c.uid: self.pb.NodeUnprepareResourceResponse() for c in request.claims}
        )


class _RegistrationServicer(reg_grpc.RegistrationServicer):
    def __init__(self, plugin: FakeDraPlugin) -> None:
        self.plugin = plugin

    def GetInfo(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        self.plugin.get_info_calls += 1
        return reg.PluginInfo(
            type=self.plugin.plugin_type,
            name=self.plugin.name,
            endpoint=self.plugin.advertised_endpoint,
            supported_versions=list(self.plugin.services),
        )

    def NotifyRegistrationStatus(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        self.plugin.statuses.put((request.plugin_registered, request.error))
        if not request.plugin_registered:
            # like the stock helper (kubeletplugin/registrationserver.go): answer with an error
            context.abort(grpc.StatusCode.UNKNOWN, f"failed registration process: {request.error}")
        return reg.RegistrationStatusResponse()


class _HealthServicer:
    def __init__(self, plugin: FakeDraPlugin, pb: Any) -> None:
        self.plugin = plugin
        self.pb = pb

    def NodeWatchResources(self, request: Any, context: Any) -> Iterator[Any]:  # noqa: N802 - gRPC method name
        self.plugin.health_opens.put(self.pb)
        if self.plugin.health_unimplemented:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "no health here")
        while context.is_active():
            try:
                item = self.plugin.health_items.get(timeout=0.05)
            except queue.Empty:
                continue
            if item is None:  # end this stream
                return
            yield self.pb.NodeWatchResourcesResponse(devices=[self.pb.DeviceHealth(**d) for d in item])


class FakeDraPlugin:
    """A DRA plugin serving registration, DRA (v1 and/or v1beta1) and optionally health."""

    def __init__(
        self,
        registry_dir: Path,
        plugin_dir: Path,
        *,
        name: str = "gpu.example.com",
        services: tuple[str, ...] = ("v1.DRAPlugin", "v1beta1.DRAPlugin"),
        plugin_type: str = "DRAPlugin",
        serve: tuple[str, ...] = ("v1", "v1beta1"),
        health: tuple[str, ...] = (),
        reg_name: str | None = None,
        dra_name: str = "dra.sock",
        common_socket: bool = False,
    ) -> None:
        self.name = name
        self.services = services
        self.plugin_type = plugin_type
        self.serve = serve
        self.health = health
        self.reg_path = str(registry_dir / (reg_name or f"{name}-reg.sock"))
        self.dra_path = self.reg_path if common_socket else str(plugin_dir / dra_name)
        self.advertised_endpoint = "" if common_socket else self.dra_path
        self.common_socket = common_socket
        self.statuses: queue.Queue[tuple[bool, str]] = queue.Queue()
        self.calls: list[tuple[str, Any]] = []
        self.called = threading.Event()
        self.get_info_calls = 0
        self.prepare_hook: Callable[[Any, Any], Any] | None = None
        self.hang: threading.Event | None = None
        self.health_unimplemented = False
        self.health_items: queue.Queue[list[dict[str, Any]] | None] = queue.Queue()
        self.health_opens: queue.Queue[Any] = queue.Queue()
        self._servers: list[grpc.Server] = []

    def note(self, method: str, request: Any) -> None:
        self.calls.append((method, request))
        self.called.set()

    def _server(self) -> grpc.Server:
        return grpc.server(futures.ThreadPoolExecutor(max_workers=8))

    def start_dra(self) -> None:
        """Serve the DRA (and health) services on the DRA socket."""
        server = self._server()
        self._add_dra(server)
        server.add_insecure_port("unix:" + self.dra_path)
        server.start()
        self._servers.append(server)

    def _add_dra(self, server: grpc.Server) -> None:
        if "v1" in self.serve:
            v1_grpc.add_DRAPluginServicer_to_server(_DraServicer(self, v1), server)
        if "v1beta1" in self.serve:
            v1beta1_grpc.add_DRAPluginServicer_to_server(_DraServicer(self, v1beta1), server)
        if "v1" in self.health:
            h1_grpc.add_DRAResourceHealthServicer_to_server(_HealthServicer(self, h1), server)
        if "v1alpha1" in self.health:
            h1a1_grpc.add_DRAResourceHealthServicer_to_server(_HealthServicer(self, h1a1), server)

    def stop_dra(self) -> None:
        """Stop only the DRA server (the first one started) and remove its socket."""
        server = self._servers.pop(0)
        server.stop(None).wait(5)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.dra_path)

    def start_registration(self) -> None:
        """Serve the registration service on the registration socket."""
        server = self._server()
        reg_grpc.add_RegistrationServicer_to_server(_RegistrationServicer(self), server)
        if self.common_socket:
            self._add_dra(server)
        server.add_insecure_port("unix:" + self.reg_path)
        server.start()
        self._servers.append(server)

    def start(self) -> FakeDraPlugin:
        """DRA socket first, registration second (like kubeletplugin.Start)."""
        if not self.common_socket:
            self.start_dra()
        self.start_registration()
        return self

    def stop(self, *, remove_sockets: bool = True) -> None:
        for server in self._servers:
            server.stop(None).wait(5)
        self._servers.clear()
        if remove_sockets:
            for path in {self.reg_path, self.dra_path}:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)

    def next_status(self, timeout: float = 5.0) -> tuple[bool, str]:
        return self.statuses.get(timeout=timeout)


class CountingProxy:
    """Forwards a Unix socket to another one and counts accepted connections."""

    def __init__(self, listen_path: str, target_path: str) -> None:
        self.listen_path = listen_path
        self.target_path = target_path
        self.accepted = 0
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(listen_path)
        self._sock.listen(16)
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.accepted += 1
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.target_path)
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._stop = True
        self._sock.close()


@pytest.fixture
def events() -> RecordingEvents:
    return RecordingEvents()


@pytest.fixture
def clock() -> ScaledClock:
    """Kubelet timers at 1/4: GetInfo 0.25 s, Notify 1.25 s, reconcile 0.25 s, backoff from 0.125 s.

    Not shorter: CI machines are shared and a 0.1 s GetInfo deadline can expire under load.
    """
    return ScaledClock(0.25)


@pytest.fixture
def dirs(short_socket_dir: Path) -> tuple[Path, Path]:
    registry = short_socket_dir / "reg"
    plugins = short_socket_dir / "p"
    registry.mkdir()
    plugins.mkdir()
    return registry, plugins


@pytest.fixture
def make_plugin(dirs: tuple[Path, Path]) -> Iterator[Callable[..., FakeDraPlugin]]:
    created: list[FakeDraPlugin] = []

    def make(**kwargs: Any) -> FakeDraPlugin:
        plugin = FakeDraPlugin(dirs[0], dirs[1], **kwargs)
        created.append(plugin)
        return plugin

    yield make
    for plugin in created:
        plugin.stop()


@pytest.fixture
def counting_proxy() -> Iterator[Callable[[str, str], CountingProxy]]:
    proxies: list[CountingProxy] = []

    def make(listen_path: str, target_path: str) -> CountingProxy:
        proxy = CountingProxy(listen_path, target_path)
        proxies.append(proxy)
        return proxy

    yield make
    for proxy in proxies:
        proxy.close()
