"""A fake driver behind a proxy, and stubs that dial the proxy like a kubelet (shared by the
proxy's integration tests)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from drasim._proto.dra.v1 import api_pb2_grpc as dra_v1_grpc
from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim._proto.pluginregistration.v1 import api_pb2_grpc as reg_grpc
from drasim.apiversions import DRA_SERVICES, HEALTH_V1ALPHA1
from drasim.journal import Journal
from drasim.proxy import Proxy, ProxyConfig
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


@pytest.fixture
def make_node() -> Callable[..., Any]:
    """``make_node(splice=...)``: a node as a context manager (for tests that need two)."""
    return contextlib.contextmanager(_node)


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


@pytest.fixture
def short_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="drasim-px-", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)
