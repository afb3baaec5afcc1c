"""The kubelet's device-health cache: timeouts, staleness on the scenario clock, message truncation."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from drasim.plugins.health import DeviceHealthReport
from drasim.runner import expectations
from drasim.runner.context import StepFailure
from drasim.scenario.expectations import ExpectHealth
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

W: Any = sys.modules["drasim_test_checks_world"]  # loaded by tests/conftest.py
GPU = W.GPU


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr("drasim.runner.expectations.common.SETTLE_TIMEOUT", 0.05)
    return W.FakeWorld(tmp_path)


def report(device: str, health: str = "Healthy", **kwargs: Any) -> DeviceHealthReport:
    return DeviceHealthReport(pool_name="pool", device_name=device, health=health, **kwargs)


def health(world: Any, device: str, driver: str = GPU) -> str:
    return world.health.health(driver, "pool", device)


def test_never_reported_device_is_unknown(world: Any) -> None:
    assert world.health.info(GPU, "pool", "gpu-0") == ("Unknown", "")


def test_report_is_valid_for_30_seconds_after_the_kubelet_received_it(world: Any) -> None:
    world.clock.now = 100.0
    world.health.absorb(GPU, (report("gpu-0", "Unhealthy", message="ECC errors"),))
    world.clock.now = 130.0  # exactly the timeout: upstream's test is "older than", so still valid
    assert world.health.info(GPU, "pool", "gpu-0") == ("Unhealthy", "ECC errors")
    world.clock.now = 130.001
    assert world.health.info(GPU, "pool", "gpu-0") == ("Unknown", "")


def test_plugin_timestamp_is_not_used_for_staleness(world: Any) -> None:
    # updateHealthInfo overwrites LastUpdated with the kubelet's own time of receipt.
    world.clock.now = 1000.0
    world.health.absorb(GPU, (report("gpu-0", last_updated_time=1),))
    assert world.health.entries[(GPU, "pool", "gpu-0")]["last_updated"] == 1000.0
    assert health(world, "gpu-0") == "Healthy"


@pytest.mark.parametrize(
    ("timeout_seconds", "valid_until"),
    [(0, 30.0), (-7, 30.0), (5, 5.0), (120, 120.0)],
    ids=["unset", "negative", "shorter", "longer"],
)
def test_per_device_timeout(world: Any, timeout_seconds: int, valid_until: float) -> None:
    world.health.absorb(GPU, (report("gpu-0", health_check_timeout_seconds=timeout_seconds),))
    world.clock.now = valid_until
    assert health(world, "gpu-0") == "Healthy"
    world.clock.now = valid_until + 0.5
    assert health(world, "gpu-0") == "Unknown"


def test_a_new_report_restarts_the_timeout(world: Any) -> None:
    world.health.absorb(GPU, (report("gpu-0"),))
    world.clock.now = 31.0
    assert health(world, "gpu-0") == "Unknown"
    world.health.absorb(GPU, (report("gpu-0"),))
    world.clock.now = 61.0
    assert health(world, "gpu-0") == "Healthy"
    world.clock.now = 61.5
    assert health(world, "gpu-0") == "Unknown"


def test_stale_devices_missing_from_a_report_are_stored_unknown(world: Any) -> None:
    world.health.absorb(GPU, (report("gpu-0"), report("gpu-1", "Unhealthy", message="hot")))
    world.health.absorb(W.NIC, (report("nic-0"),))
    world.clock.now = 20.0
    world.health.absorb(GPU, (report("gpu-2"),))
    # gpu-0 and gpu-1 are not stale yet: kept as they are.
    assert world.health.entries[(GPU, "pool", "gpu-1")]["health"] == "Unhealthy"
    world.clock.now = 40.0
    world.health.absorb(GPU, (report("gpu-0"),))
    assert world.health.entries[(GPU, "pool", "gpu-1")] == {
        "health": "Unknown",
        "message": "",
        "timeout": 30.0,
        "last_updated": 40.0,
    }
    assert health(world, "gpu-0") == "Healthy"
    assert health(world, "gpu-2") == "Healthy"  # reported at 20, not stale at 40
    # Another driver's devices are not touched by this driver's report.
    assert world.health.entries[(W.NIC, "pool", "nic-0")]["health"] == "Healthy"
    assert health(world, "nic-0", W.NIC) == "Unknown"


def test_message_is_truncated_when_stored(world: Any) -> None:
    world.health.absorb(GPU, (report("gpu-0", "Unhealthy", message="e" * 2000),))
    assert world.health.info(GPU, "pool", "gpu-0") == ("Unhealthy", "e" * 1021 + "...")


def test_wait_health_ignores_stale_and_missing_reports(world: Any) -> None:
    key = (GPU, "pool", "gpu-0")
    assert not world.health.wait(key, "Unknown", 0.0)  # nothing was ever reported
    world.health.absorb(GPU, (report("gpu-0"),))
    assert world.health.wait(key, "Healthy", 0.0)
    world.clock.now = 31.0
    assert not world.health.wait(key, "Healthy", 0.0)  # the stored Healthy is stale
    delivered = threading.Event()

    def deliver() -> None:
        world.health.absorb(GPU, (report("gpu-0"),))
        delivered.set()

    thread = threading.Thread(target=deliver)
    thread.start()
    assert world.health.wait(key, "Healthy", 10.0)
    thread.join(10.0)
    assert delivered.is_set()


def test_expect_health_sees_a_stale_report_as_unknown(world: Any) -> None:
    world.add_pod("a", ["gpu"])
    world.manager.claims["default/gpu"] = ClaimInfoState(
        claim_uid="uid-gpu",
        claim_name="gpu",
        namespace="default",
        pod_uids={"uid-a"},
        driver_state={GPU: DriverState(devices=[Device("pool", "gpu-0", ("req-0",), None)])},
    )
    world.health.absorb(GPU, (report("gpu-0", health_check_timeout_seconds=10),))
    expectations.run_check(world, ExpectHealth(pod="a", claim="gpu", health="Healthy"), W.context("expect"))
    world.clock.now = 11.0
    expectations.run_check(world, ExpectHealth(pod="a", claim="gpu", health="Unknown"), W.context("expect"))
    with pytest.raises(StepFailure) as info:
        expectations.run_check(
            world, ExpectHealth(pod="a", claim="gpu", health="Healthy"), W.context("expect")
        )
    assert info.value.actual == {"gpu.example.com/pool/gpu-0": "Unknown"}


def test_a_stream_end_forgets_only_that_drivers_devices(world: Any) -> None:
    other = "nic.example.com"
    world.health.absorb(GPU, (report("gpu-0", "Unhealthy", message="ECC errors"),))
    world.health.absorb(other, (report("nic-0", "Unhealthy"),))
    world.health.clear_driver(GPU)
    assert world.health.info(GPU, "pool", "gpu-0") == ("Unknown", "")
    assert health(world, "nic-0", driver=other) == "Unhealthy"
    world.health.absorb(GPU, (report("gpu-0", "Healthy"),))  # a new stream reports again
    assert health(world, "gpu-0") == "Healthy"
