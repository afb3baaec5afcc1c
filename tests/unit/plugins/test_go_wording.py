"""Client-side gRPC errors read as grpc-go (the kubelet's client) words them."""

from __future__ import annotations

import socket
from pathlib import Path

import grpc
import pytest

from drasim.plugins.client import go_details, rpc_error_from


@pytest.mark.parametrize(
    ("core", "go"),
    [
        (
            "failed to connect to all addresses; last error: FAILED_PRECONDITION: unix:/run/p/dra.sock: "
            "connect failed: addr: unix:/run/p/dra.sock error: Connection refused",
            'connection error: desc = "transport: Error while dialing: dial unix /run/p/dra.sock: '
            'connect: connection refused"',
        ),
        (
            "failed to connect to all addresses; last error: UNKNOWN: unix:/run/p/dra.sock: "
            "connect failed: addr: unix:/run/p/dra.sock error: No such file or directory",
            'connection error: desc = "transport: Error while dialing: dial unix /run/p/dra.sock: '
            'connect: no such file or directory"',
        ),
        ("Deadline Exceeded", "context deadline exceeded"),
        ("some driver error", "some driver error"),
    ],
)
def test_grpcio_wording_becomes_grpc_go_wording(core: str, go: str) -> None:
    assert go_details(core) == go


def test_a_refused_unix_socket_reads_as_upstream_reports_it(tmp_path: Path) -> None:
    """A socket file nobody listens on: what the kubelet's pod error says on a real node."""
    path = tmp_path / "dra.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays: connecting to it is refused
    with grpc.insecure_channel(f"unix:{path}") as channel:
        call = channel.unary_unary("/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources")
        with pytest.raises(grpc.RpcError) as info:
            call(b"", timeout=5)
    error = rpc_error_from(info.value)
    assert error.code == "Unavailable"
    dialing = f"dial unix {path}: connect: connection refused"
    expected = f'connection error: desc = "transport: Error while dialing: {dialing}"'
    assert error.details == expected, error.details
