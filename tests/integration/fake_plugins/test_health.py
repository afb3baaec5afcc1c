"""The DRAResourceHealth stream of a fake driver (v1alpha1 and v1)."""

from __future__ import annotations

import grpc
import pytest

from drasim._proto.drahealth.v1 import api_pb2 as health_v1
from drasim._proto.drahealth.v1 import api_pb2_grpc as health_v1_grpc
from drasim._proto.drahealth.v1alpha1 import api_pb2 as health_v1alpha1
from drasim._proto.drahealth.v1alpha1 import api_pb2_grpc as health_v1alpha1_grpc
from fake_plugins import Behaviour

VERSIONS = {
    "v1alpha1.DRAResourceHealth": (health_v1alpha1, health_v1alpha1_grpc),
    "v1.DRAResourceHealth": (health_v1, health_v1_grpc),
}


def watch(wire_, service: str):
    pb, pb_grpc = VERSIONS[service]
    stub = pb_grpc.DRAResourceHealthStub(wire_.dra_channel)
    return pb, stub.NodeWatchResources(pb.NodeWatchResourcesRequest(), timeout=10)


def health_of(pb, message) -> dict[str, tuple[str, str]]:
    return {
        f"{d.device.pool_name}/{d.device.device_name}": (pb.HealthStatus.Name(d.health), d.message)
        for d in message.devices
    }


@pytest.mark.parametrize("service", list(VERSIONS))
def test_stream_sends_full_list_then_changes(make_driver, wire, service):
    initial = Behaviour.from_dict({"health": [{"device": "gpu-0", "health": "unhealthy", "message": "ecc"}]})
    driver = make_driver(services=["v1.DRAPlugin", service], devices=2, behaviour=initial)
    assert service in wire(driver).get_info().supported_versions
    pb, stream = watch(wire(driver), service)
    assert health_of(pb, next(stream)) == {
        "node-1/gpu-0": ("UNHEALTHY", "ecc"),
        "node-1/gpu-1": ("HEALTHY", ""),
    }
    driver.set_health("gpu-1", "UNHEALTHY", message="overheated", timeout_seconds=5)
    message = next(stream)
    assert health_of(pb, message)["node-1/gpu-1"] == ("UNHEALTHY", "overheated")
    assert message.devices[1].health_check_timeout_seconds == 5
    stream.cancel()
    sent = [c for c in driver.calls if c.rpc == "NodeWatchResources"]
    assert [c.stream for c in sent] == [False, True]


def test_stream_fault_unimplemented(make_driver, wire):
    behaviour = Behaviour.from_dict({"faults": [{"rpc": "NodeWatchResources", "code": "UNIMPLEMENTED"}]})
    driver = make_driver(services=["v1.DRAPlugin", "v1alpha1.DRAResourceHealth"], behaviour=behaviour)
    _, stream = watch(wire(driver), "v1alpha1.DRAResourceHealth")
    with pytest.raises(grpc.RpcError) as err:
        next(stream)
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_health_not_served_unless_enabled(make_driver, wire):
    driver = make_driver()
    _, stream = watch(wire(driver), "v1alpha1.DRAResourceHealth")
    with pytest.raises(grpc.RpcError) as err:
        next(stream)
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_stop_ends_the_stream(make_driver, wire):
    driver = make_driver(services=["v1.DRAPlugin", "v1.DRAResourceHealth"])
    _, stream = watch(wire(driver), "v1.DRAResourceHealth")
    next(stream)
    driver.stop()
    with pytest.raises((StopIteration, grpc.RpcError)):
        next(stream)
