"""expectRegistered, expectMetric, expectResourceSlices, expectPod, expectMightNeedUnprepare, expectHealth."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from drasim.errors import ConfigError
from drasim.runner import expectations
from drasim.runner.context import StepFailure
from drasim.scenario.expectations import (
    ExpectHealth,
    ExpectMetric,
    ExpectMightNeedUnprepare,
    ExpectPod,
    ExpectRegistered,
    ExpectResourceSlices,
)
from drasim.scenario.steps import Container, ContainerClaim
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

W: Any = sys.modules["drasim_test_checks_world"]  # loaded by tests/conftest.py


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr("drasim.runner.expectations.common.SETTLE_TIMEOUT", 0.05)
    return W.FakeWorld(tmp_path)


def ok(world: Any, args: object) -> None:
    expectations.run_check(world, args, W.context("expect"))


def fails(world: Any, args: object) -> StepFailure:
    with pytest.raises(StepFailure) as info:
        expectations.run_check(world, args, W.context("expect"))
    return info.value


# ------------------------------------------------------------------ registration


def test_registered(world: Any) -> None:
    world.plugins.clients[W.GPU] = [W.FakeClient("/old.sock", connected=False), W.FakeClient("/new.sock")]
    world.plugins.services[(W.GPU, "/new.sock")] = "v1.DRAPlugin"
    ok(world, ExpectRegistered(instances=2, connected=True, service="v1.DRAPlugin"))
    ok(world, ExpectRegistered(driver=W.GPU))
    failure = fails(world, ExpectRegistered(registered=False, service="v1beta1.DRAPlugin"))
    assert failure.message == (
        "registration of gpu.example.com: expected registered False; found True; "
        "expected service 'v1beta1.DRAPlugin'; found 'v1.DRAPlugin'"
    )
    assert failure.expected == {"registered": False, "service": "v1beta1.DRAPlugin"}
    assert failure.actual == {"registered": True, "service": "v1.DRAPlugin"}


def test_registered_with_the_kubelet_stopped(world: Any) -> None:
    world.stop_kubelet()
    ok(world, ExpectRegistered(registered=False, connected=False, instances=0))
    failure = fails(world, ExpectRegistered())
    assert failure.message == (
        "registration of gpu.example.com (the kubelet is not running): expected registered True; found False"
    )


def test_registered_sees_a_connection_made_while_it_waits(world: Any) -> None:
    client = W.FakeClient("/a.sock", connected=False)
    world.plugins.clients[W.GPU] = [client]

    def connect() -> None:
        client.connected = True
        world.journal.record("registration", driver=W.GPU, outcome="registered")

    import threading

    thread = threading.Thread(target=connect)
    thread.start()
    try:
        expectations.run_check(world, ExpectRegistered(connected=True), W.context("expect"))
    finally:
        thread.join()


# ------------------------------------------------------------------ metrics


def test_metric_gauge_and_histogram(world: Any) -> None:
    world.metrics.set_gauge_family("dra_resource_claims_in_use", [({"driver_name": "<any>"}, 2.0)])
    world.metrics.observe(
        "dra_operations_duration_seconds", 0.1, operation_name="PrepareResources", is_error="false"
    )
    ok(
        world,
        ExpectMetric(
            name="dra_resource_claims_in_use", labels={"driver_name": "<any>"}, value=2, present=True
        ),
    )
    # a missing gauge series reads as 0
    ok(
        world,
        ExpectMetric(
            name="dra_resource_claims_in_use", labels={"driver_name": W.GPU}, value=0, present=False
        ),
    )
    ok(
        world,
        ExpectMetric(
            name="dra_operations_duration_seconds",
            labels={"operation_name": "PrepareResources", "is_error": "false"},
            count=1,
        ),
    )


def test_metric_failures(world: Any) -> None:
    world.metrics.set_gauge_family("dra_resource_claims_in_use", [({"driver_name": "<any>"}, 2.0)])
    failure = fails(
        world, ExpectMetric(name="dra_resource_claims_in_use", labels={"driver_name": W.GPU}, value=1)
    )
    assert failure.message == (
        'expected dra_resource_claims_in_use{driver_name="gpu.example.com"} = 1; found 0 (no such series)'
    )
    assert failure.actual["otherSeries"] == [{"driver_name": "<any>", "value": 2.0}]
    failure = fails(
        world,
        ExpectMetric(
            name="dra_operations_duration_seconds", labels={"operation_name": "x"}, count=2, present=True
        ),
    )
    assert failure.message == (
        'expected series dra_operations_duration_seconds{operation_name="x"} to be present; it is absent; '
        'expected 2 observations in dra_operations_duration_seconds{operation_name="x"}; found 0'
    )


# ------------------------------------------------------------------ slices


def make_slice(world: Any, name: str, driver: str, node: str, devices: int) -> None:
    world.api.runner_api.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {
                "driver": driver,
                "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": f"dev-{i}"} for i in range(devices)],
            },
        }
    )


def test_resource_slices(world: Any) -> None:
    make_slice(world, "a", W.GPU, "node-1", 2)
    make_slice(world, "b", W.NIC, "node-1", 1)
    make_slice(world, "c", W.GPU, "node-2", 4)
    ok(world, ExpectResourceSlices(count=2, devices=3))
    ok(world, ExpectResourceSlices(driver=W.GPU, node="node-2", count=1, devices=4))
    failure = fails(world, ExpectResourceSlices(driver=W.GPU, count=0, devices=0))
    assert failure.message == (
        "expected 0 ResourceSlices of gpu.example.com on node node-1; found 1 ['a']; "
        "expected 0 devices in the ResourceSlices of gpu.example.com on node node-1; found 2"
    )
    assert failure.actual == {"count": 1, "devices": 2, "slices": ["a"]}


# ------------------------------------------------------------------ pods


def test_pod_phase(world: Any) -> None:
    world.add_pod("ns1/a", ["gpu"], phase="Terminating")
    ok(world, ExpectPod(pod="ns1/a", phase="Terminating"))
    ok(world, ExpectPod(pod="forgotten", phase="Gone"))
    failure = fails(world, ExpectPod(pod="ns1/a", phase="Gone"))
    assert failure.message == "expected pod ns1/a to be Gone; it is Terminating"
    assert failure.expected == {"phase": "Gone"}
    assert fails(world, ExpectPod(pod="x", phase="Running")).message == (
        "pod default/x is unknown: no startPod created it (pods: ns1/a)"
    )


def test_might_need_unprepare(world: Any) -> None:
    world.add_pod("a", ["gpu"])
    world.add_pod("b", ["gpu"])
    world.manager.might_unprepare.add("uid-a")
    ok(world, ExpectMightNeedUnprepare(pods={"a": True, "b": False}))
    failure = fails(world, ExpectMightNeedUnprepare(pods={"a": False, "b": False}))
    assert failure.message == "PodMightNeedToUnprepareResources: pod default/a: expected False, found True"
    assert failure.actual == {"default/a": True, "default/b": False}
    world.stop_kubelet()
    assert fails(world, ExpectMightNeedUnprepare(pods={"a": True})).message == (
        "expected PodMightNeedToUnprepareResources answers: the kubelet is not running"
    )


# ------------------------------------------------------------------ health


def _claim(devices: list[Device]) -> ClaimInfoState:
    return ClaimInfoState(
        claim_uid="uid-gpu",
        claim_name="gpu",
        namespace="default",
        pod_uids={"uid-a"},
        driver_state={W.GPU: DriverState(devices=devices)},
    )


def test_health_of_every_resource(world: Any) -> None:
    world.add_pod("a", ["gpu"])
    world.manager.claims["default/gpu"] = _claim(
        [
            Device("pool-a", "gpu-0", ("req-0",), ("gpu.example.com/gpu=gpu-0",)),
            Device("pool-a", "gpu-1", ("req-1",), None),
        ]
    )
    world.health.entries[(W.GPU, "pool-a", "gpu-0")] = {"health": "Unhealthy", "message": "ECC"}
    ok(world, ExpectHealth(pod="a", claim="gpu", health="Unhealthy", resource_id="gpu.example.com/gpu=gpu-0"))
    ok(
        world,
        ExpectHealth(pod="a", claim="gpu", health="Unknown", resource_id="gpu.example.com/pool-a/gpu-1"),
    )
    failure = fails(world, ExpectHealth(pod="a", claim="gpu", health="Unhealthy"))
    assert failure.message == (
        "expected every resource of allocatedResourcesStatus entry claim:gpu of container ctr in pod "
        "default/a to be Unhealthy; found gpu.example.com/pool-a/gpu-1: Unknown"
    )
    assert failure.actual == {
        "gpu.example.com/gpu=gpu-0": "Unhealthy",
        "gpu.example.com/pool-a/gpu-1": "Unknown",
    }


def test_health_of_a_request_entry(world: Any) -> None:
    ctr = Container(name="main", claims=[ContainerClaim(name="gpu", request="req-1")])
    world.add_pod("a", ["gpu"], containers=[ctr])
    world.manager.claims["default/gpu"] = _claim(
        [Device("pool-a", "gpu-0", ("req-0",), None), Device("pool-a", "gpu-1", ("req-1",), None)]
    )
    world.health.entries[(W.GPU, "pool-a", "gpu-0")] = {"health": "Unhealthy", "message": ""}
    world.health.entries[(W.GPU, "pool-a", "gpu-1")] = {"health": "Healthy", "message": ""}
    ok(world, ExpectHealth(pod="a", claim="gpu", request="req-1", health="Healthy"))
    failure = fails(world, ExpectHealth(pod="a", claim="gpu", health="Healthy"))
    assert failure.message == (
        "expected allocatedResourcesStatus entry claim:gpu of container main in pod default/a; "
        "the container has no such claim entry (entries: claim:gpu/req-1)"
    )
    failure = fails(
        world, ExpectHealth(pod="a", claim="gpu", request="req-1", health="Healthy", resource_id="x")
    )
    assert failure.message == (
        "expected resource x in allocatedResourcesStatus entry claim:gpu/req-1 of container main in pod "
        "default/a; found ['gpu.example.com/pool-a/gpu-1']"
    )


def test_health_without_a_prepared_claim(world: Any) -> None:
    world.add_pod("a", ["gpu"])
    failure = fails(world, ExpectHealth(pod="a", claim="gpu", health="Healthy"))
    assert failure.message == (
        "expected allocatedResourcesStatus entry claim:gpu of container ctr in pod default/a with health "
        "Healthy; the kubelet lists no resources for it (claim not prepared, or no devices for the request)"
    )


def test_health_message_exact_and_contains(world: Any) -> None:
    world.add_pod("a", ["gpu"])
    world.manager.claims["default/gpu"] = _claim(
        [Device("pool-a", "gpu-0", ("req-0",), None), Device("pool-a", "gpu-1", ("req-0",), None)]
    )
    world.health.entries[(W.GPU, "pool-a", "gpu-0")] = {
        "health": "Unhealthy",
        "message": "ECC errors on bank 3",
    }
    world.health.entries[(W.GPU, "pool-a", "gpu-1")] = {
        "health": "Unhealthy",
        "message": "ECC errors on bank 1",
    }
    gpu0, gpu1 = "gpu.example.com/pool-a/gpu-0", "gpu.example.com/pool-a/gpu-1"
    ok(world, ExpectHealth(pod="a", claim="gpu", health="Unhealthy", message_contains="ECC errors"))
    ok(
        world,
        ExpectHealth(
            pod="a", claim="gpu", health="Unhealthy", message="ECC errors on bank 3", resource_id=gpu0
        ),
    )
    entry = "every resource of allocatedResourcesStatus entry claim:gpu of container ctr in pod default/a"
    for expectation, wanted, expected in (
        (
            ExpectHealth(pod="a", claim="gpu", health="Unhealthy", message="ECC errors on bank 3"),
            "message 'ECC errors on bank 3'",
            {gpu0: "ECC errors on bank 3", gpu1: "ECC errors on bank 3"},
        ),
        (
            ExpectHealth(pod="a", claim="gpu", health="Unhealthy", message_contains="bank 3"),
            "a message containing 'bank 3'",
            {gpu0: "contains 'bank 3'", gpu1: "contains 'bank 3'"},
        ),
    ):
        failure = fails(world, expectation)
        assert failure.message == f"expected {entry} to have {wanted}; found {gpu1}: 'ECC errors on bank 1'"
        assert failure.expected == expected
        assert failure.actual == {gpu0: "ECC errors on bank 3", gpu1: "ECC errors on bank 1"}
    # The health is checked first: a wrong health is reported as such, whatever the message.
    failure = fails(world, ExpectHealth(pod="a", claim="gpu", health="Healthy", message="nope"))
    assert "to be Healthy; found" in failure.message


def test_health_message_is_empty_when_unknown(world: Any) -> None:
    world.add_pod("a", ["gpu"])
    world.manager.claims["default/gpu"] = _claim([Device("pool-a", "gpu-0", ("req-0",), None)])
    world.health.entries[(W.GPU, "pool-a", "gpu-0")] = {
        "health": "Unhealthy",
        "message": "ECC",
        "timeout": 10.0,
        "last_updated": 0.0,
    }
    ok(world, ExpectHealth(pod="a", claim="gpu", health="Unhealthy", message="ECC"))
    world.clock.now = 11.0  # the report went stale: Unknown, and the kubelet shows no message
    ok(world, ExpectHealth(pod="a", claim="gpu", health="Unknown", message=""))
    failure = fails(world, ExpectHealth(pod="a", claim="gpu", health="Unknown", message="ECC"))
    assert failure.message.endswith("to have message 'ECC'; found gpu.example.com/pool-a/gpu-0: ''")
    assert failure.actual == {"gpu.example.com/pool-a/gpu-0": ""}
    failure = fails(world, ExpectHealth(pod="a", claim="gpu", health="Unknown", message_contains="ECC"))
    assert failure.actual == {"gpu.example.com/pool-a/gpu-0": ""}


# ------------------------------------------------------------------ dispatch


def test_every_expectation_has_a_check() -> None:
    import inspect

    from drasim.scenario import expectations as ex

    steps = {cls for name, cls in vars(ex).items() if inspect.isclass(cls) and name.startswith("Expect")}
    assert steps == set(expectations.CHECKS)
    assert expectations.is_expectation(ExpectPod(pod="a", phase="Running"))


def test_an_action_is_not_an_expectation(world: Any) -> None:
    with pytest.raises(ConfigError, match="Container is not an expectation"):
        expectations.run_check(world, Container(name="x"), W.context("expect"))
