"""GrpcDriverClient against real servers: conversion, timeouts, errors, metrics, journal, reuse."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drasim.clock import ScaledClock
from drasim.errors import RpcError
from drasim.metrics import Metrics
from drasim.plugins import GrpcDriverClient
from drasim.values import ClaimRef, Device, PrepareResult, UnprepareResult

DRIVER = "gpu.example.com"
CLAIMS = [ClaimRef("default", "uid-1", "claim-1"), ClaimRef("ns2", "uid-2", "claim-2")]
V1_PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
V1BETA1_UNPREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources"
METRIC = "dra_grpc_operations_duration_seconds"


@pytest.fixture
def clients(clock: ScaledClock, events: Any) -> Iterator[Any]:
    made: list[GrpcDriverClient] = []

    def make(endpoint: str, service: str = "v1.DRAPlugin", **kwargs: Any) -> GrpcDriverClient:
        kwargs.setdefault("clock", clock)
        kwargs.setdefault("recorder", events)
        client = GrpcDriverClient(DRIVER, endpoint, service, **kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def _expected_device(uid: str, share: bool) -> Device:
    return Device(
        pool_name="pool-a",
        device_name=f"dev-{uid}",
        request_names=("req",),
        cdi_device_ids=(f"example.com/gpu={uid}",),
        share_id=f"share-{uid}" if share else None,
    )


def test_v1_prepare_and_unprepare_convert_values(make_plugin: Any, clients: Any) -> None:
    plugin = make_plugin(serve=("v1",)).start()
    client = clients(plugin.dra_path, "v1.DRAPlugin")
    result = client.node_prepare_resources(CLAIMS)
    assert result == {
        "uid-1": PrepareResult(devices=(_expected_device("uid-1", True),)),
        "uid-2": PrepareResult(devices=(_expected_device("uid-2", True),)),
    }
    method, request = plugin.calls[-1]
    assert method == "NodePrepareResources"
    assert [(c.namespace, c.uid, c.name) for c in request.claims] == [
        ("default", "uid-1", "claim-1"),
        ("ns2", "uid-2", "claim-2"),
    ]
    assert client.node_unprepare_resources(CLAIMS) == {"uid-1": UnprepareResult(), "uid-2": UnprepareResult()}


def test_v1beta1_has_no_share_id_and_keeps_errors(make_plugin: Any, clients: Any) -> None:
    plugin = make_plugin(serve=("v1beta1",)).start()

    def answer(pb: Any, request: Any) -> Any:
        return pb.NodePrepareResourcesResponse(
            claims={
                "uid-1": pb.NodePrepareResourceResponse(
                    devices=[pb.Device(pool_name="p", device_name="d")]  # no request names, no CDI IDs
                ),
                "uid-2": pb.NodePrepareResourceResponse(error="no GPU left"),
            }
        )

    plugin.prepare_hook = answer
    client = clients(plugin.dra_path, "v1beta1.DRAPlugin")
    result = client.node_prepare_resources(CLAIMS)
    assert result == {
        "uid-1": PrepareResult(devices=(Device("p", "d", None, None, None),)),
        "uid-2": PrepareResult(error="no GPU left"),
    }


def test_metrics_and_journal_are_recorded(make_plugin: Any, clients: Any, events: Any) -> None:
    plugin = make_plugin(serve=("v1", "v1beta1")).start()
    metrics = Metrics()
    v1 = clients(plugin.dra_path, "v1.DRAPlugin", metrics=metrics)
    v1beta1 = clients(plugin.dra_path, "v1beta1.DRAPlugin", metrics=metrics)
    v1.node_prepare_resources(CLAIMS[:1])
    v1.node_prepare_resources(CLAIMS[:1])
    v1beta1.node_unprepare_resources(CLAIMS[:1])
    labels = {"driver_name": DRIVER, "grpc_status_code": "OK"}
    assert metrics.histogram_count(METRIC, method_name=V1_PREPARE, **labels) == 2
    assert metrics.histogram_count(METRIC, method_name=V1BETA1_UNPREPARE, **labels) == 1
    assert "# HELP dra_grpc_operations_duration_seconds [ALPHA] Duration in seconds" in metrics.to_text()
    rpc = events.of("rpc")
    assert [e["method"] for e in rpc] == [V1_PREPARE, V1_PREPARE, V1BETA1_UNPREPARE]
    first = rpc[0]
    assert first["side"] == "kubelet"
    assert first["driver"] == DRIVER
    assert first["endpoint"] == plugin.dra_path
    assert first["code"] == "OK"
    assert first["error"] is None
    assert first["duration"] >= 0
    assert first["request"] == {"claims": [{"namespace": "default", "uid": "uid-1", "name": "claim-1"}]}
    assert first["response"] == {
        "claims": {
            "uid-1": {
                "devices": [
                    {
                        "request_names": ["req"],
                        "pool_name": "pool-a",
                        "device_name": "dev-uid-1",
                        "cdi_device_ids": ["example.com/gpu=uid-1"],
                        "share_id": "share-uid-1",
                    }
                ],
                "error": "",
            }
        }
    }
    assert rpc[2]["response"] == {"claims": {"uid-1": {"error": ""}}}


def test_call_timeout_is_deadline_exceeded(
    make_plugin: Any, clients: Any, events: Any, clock: ScaledClock
) -> None:
    plugin = make_plugin().start()
    plugin.hang = threading.Event()
    metrics = Metrics()
    client = clients(plugin.dra_path, call_timeout=1.0, metrics=metrics)  # a short nominal timeout
    try:
        with pytest.raises(RpcError) as info:
            client.node_prepare_resources(CLAIMS)
    finally:
        plugin.hang.set()
    assert info.value.code == "DeadlineExceeded"
    assert str(info.value) == "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
    labels = {"driver_name": DRIVER, "method_name": V1_PREPARE, "grpc_status_code": "DeadlineExceeded"}
    assert metrics.histogram_count(METRIC, **labels) == 1
    (event,) = events.of("rpc")
    assert event["code"] == "DeadlineExceeded"
    assert event["response"] is None
    assert event["error"] == str(info.value)
    assert clock.scaled(1.0) * 0.9 <= event["duration"] < 5


def test_default_timeout_is_45_seconds_scaled(make_plugin: Any, clients: Any) -> None:
    client = clients("/nonexistent/dra.sock", clock=ScaledClock(0.001))
    assert client.call_timeout == 45.0


def test_unimplemented_service(make_plugin: Any, clients: Any) -> None:
    plugin = make_plugin(serve=("v1beta1",)).start()
    client = clients(plugin.dra_path, "v1.DRAPlugin")
    with pytest.raises(RpcError) as info:
        client.node_prepare_resources(CLAIMS)
    assert info.value.code == "Unimplemented"


def test_no_listener_is_unavailable(short_socket_dir: Path, clients: Any, events: Any) -> None:
    client = clients(str(short_socket_dir / "nobody.sock"))
    with pytest.raises(RpcError) as info:
        client.node_unprepare_resources(CLAIMS)
    assert info.value.code == "Unavailable"
    assert events.of("rpc")[0]["code"] == "Unavailable"


def test_one_connection_is_reused(
    make_plugin: Any, clients: Any, dirs: tuple[Path, Path], counting_proxy: Any
) -> None:
    plugin = make_plugin().start()
    proxy = counting_proxy(str(dirs[1] / "proxy.sock"), plugin.dra_path)
    client = clients(proxy.listen_path)
    for _ in range(5):
        client.node_prepare_resources(CLAIMS)
        client.node_unprepare_resources(CLAIMS)
    assert len(plugin.calls) == 10
    assert proxy.accepted == 1


def test_connection_state_follows_the_server(make_plugin: Any, clients: Any) -> None:
    plugin = make_plugin().start()
    changes: list[bool] = []
    changed = threading.Condition()

    def note(connected: bool) -> None:
        with changed:
            changes.append(connected)
            changed.notify_all()

    client = clients(plugin.dra_path, on_connected=note)
    with changed:
        assert changed.wait_for(lambda: changes[-1:] == [True], 5)
    assert client.connected
    plugin.stop()
    with changed:
        assert changed.wait_for(lambda: changes[-1:] == [False], 5)
    assert not client.connected
    plugin.start_dra()  # same path: gRPC must be asked to reconnect
    with changed:
        assert changed.wait_for(lambda: changes[-1:] == [True], 5)
    assert client.node_unprepare_resources(CLAIMS[:1]) == {"uid-1": UnprepareResult()}
