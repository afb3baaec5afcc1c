"""Health streams and ResourceSlice wiping through a PluginHost with real plugins."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drasim._proto.drahealth.v1 import api_pb2 as h1
from drasim._proto.drahealth.v1alpha1 import api_pb2 as h1a1
from drasim.clock import ScaledClock
from drasim.plugins import DeviceHealthReport, ManualScheduler, PluginHost

DRIVER = "gpu.example.com"
DRA = ("v1.DRAPlugin", "v1beta1.DRAPlugin")
UNHEALTHY = {
    "device": {"pool_name": "pool-a", "device_name": "gpu-0"},
    "health": 2,
    "last_updated_time": 1700000000,
    "health_check_timeout_seconds": 60,
    "message": "too hot",
}


@pytest.fixture
def reports() -> queue.Queue[tuple[str, tuple[DeviceHealthReport, ...]]]:
    return queue.Queue()


@pytest.fixture
def health_host(
    dirs: tuple[Path, Path], clock: ScaledClock, events: Any, reports: queue.Queue[Any]
) -> Iterator[PluginHost]:
    host = PluginHost(dirs[0], clock=clock, recorder=events, health_callback=lambda d, r: reports.put((d, r)))
    host.start()
    yield host
    host.stop()


def test_health_v1_delivered_and_reopened(
    make_plugin: Any, health_host: PluginHost, reports: Any, clock: ScaledClock
) -> None:
    plugin = make_plugin(
        services=(*DRA, "v1alpha1.DRAResourceHealth", "v1.DRAResourceHealth"), health=("v1", "v1alpha1")
    )
    plugin.start()
    assert health_host.wait_registered(DRIVER, 5)
    assert plugin.health_opens.get(timeout=5) is h1
    plugin.health_items.put([UNHEALTHY])
    driver, devices = reports.get(timeout=5)
    assert driver == DRIVER
    assert devices == (DeviceHealthReport("pool-a", "gpu-0", "Unhealthy", 1700000000, 60, "too hot"),)
    ended = time.monotonic()
    plugin.health_items.put(None)  # the plugin ends the stream
    assert plugin.health_opens.get(timeout=5) is h1
    assert time.monotonic() - ended >= clock.scaled(5.0) * 0.9  # re-opened after 5 s nominal
    plugin.health_items.put([{**UNHEALTHY, "health": 1, "message": ""}])
    assert reports.get(timeout=5)[1][0].health == "Healthy"


def test_health_v1alpha1_when_only_that_is_advertised(
    make_plugin: Any, health_host: PluginHost, reports: Any
) -> None:
    plugin = make_plugin(services=(*DRA, "v1alpha1.DRAResourceHealth"), health=("v1", "v1alpha1")).start()
    assert plugin.health_opens.get(timeout=5) is h1a1
    plugin.health_items.put([{**UNHEALTHY, "health": 0}])
    assert reports.get(timeout=5)[1][0].health == "Unknown"
    stream = health_host.manager.health_stream(DRIVER, plugin.dra_path)
    assert stream is not None
    assert stream.path == "/v1alpha1.DRAResourceHealth/NodeWatchResources"


def test_no_health_stream_unless_advertised(make_plugin: Any, health_host: PluginHost) -> None:
    plugin = make_plugin(health=("v1",)).start()
    assert health_host.wait_registered(DRIVER, 5)
    assert health_host.manager.health_stream(DRIVER, plugin.dra_path) is None
    assert plugin.health_opens.empty()


def test_health_unimplemented_stops_retrying(make_plugin: Any, health_host: PluginHost) -> None:
    plugin = make_plugin(services=(*DRA, "v1.DRAResourceHealth"), health=("v1",))
    plugin.health_unimplemented = True
    plugin.start()
    assert plugin.health_opens.get(timeout=5) is h1
    assert health_host.wait_registered(DRIVER, 5)
    stream = health_host.manager.health_stream(DRIVER, plugin.dra_path)
    assert stream is not None
    assert stream.wait_stopped(5)
    assert stream.opened == 1


def test_deregistration_cancels_health_stream(make_plugin: Any, health_host: PluginHost) -> None:
    plugin = make_plugin(services=(*DRA, "v1.DRAResourceHealth"), health=("v1",)).start()
    assert plugin.health_opens.get(timeout=5) is h1
    stream = health_host.manager.health_stream(DRIVER, plugin.dra_path)
    assert stream is not None
    assert stream.running
    plugin.stop()
    assert health_host.wait_deregistered(DRIVER, 5)
    assert stream.wait_stopped(5)


def test_every_stream_end_is_reported_for_clearing(
    dirs: tuple[Path, Path], clock: ScaledClock, events: Any, make_plugin: Any, reports: Any
) -> None:
    # Upstream clears the driver's health cache whenever its stream exits (clearDriver).
    ended: queue.Queue[str] = queue.Queue()
    host = PluginHost(
        dirs[0],
        clock=clock,
        recorder=events,
        health_callback=lambda d, r: reports.put((d, r)),
        health_ended_callback=ended.put,
    )
    host.start()
    try:
        plugin = make_plugin(services=(*DRA, "v1.DRAResourceHealth"), health=("v1",)).start()
        assert plugin.health_opens.get(timeout=5) is h1
        plugin.health_items.put([UNHEALTHY])
        assert reports.get(timeout=5)[0] == DRIVER
        assert ended.empty()
        plugin.health_items.put(None)  # the plugin ends the stream: cleared once
        assert ended.get(timeout=5) == DRIVER
        assert plugin.health_opens.get(timeout=5) is h1  # re-opened
        assert ended.empty()
        plugin.stop()  # deregistration cancels the stream: cleared again
        assert host.wait_deregistered(DRIVER, 5)
        assert ended.get(timeout=5) == DRIVER
    finally:
        host.stop()


class RecordingWiper:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []

    def delete_resource_slices(self, node_name: str, driver_name: str | None) -> None:
        self.calls.append((node_name, driver_name))


def test_slices_wiped_at_startup_and_after_driver_is_gone(
    dirs: tuple[Path, Path], clock: ScaledClock, events: Any, make_plugin: Any
) -> None:
    wiper = RecordingWiper()
    scheduler = ManualScheduler()
    host = PluginHost(
        dirs[0], clock=clock, recorder=events, slice_wiper=wiper, node_name="node-1", scheduler=scheduler
    )
    host.start()
    try:
        assert scheduler.pending() == [0.0]
        scheduler.advance(0)
        assert wiper.calls == [("node-1", None)]  # startup: every slice of the node

        plugin = make_plugin().start()
        assert host.wait_registered(DRIVER, 5, connected=True)
        assert host.manager.pending_wipes() == set()

        plugin.stop_dra()  # registration socket stays, DRA socket dies
        assert host.manager.wait_for(lambda: host.manager.pending_wipes() == {DRIVER}, 5)
        assert scheduler.pending() == [pytest.approx(clock.scaled(30.0))]
        plugin.start_dra()
        assert host.manager.wait_for(lambda: host.manager.pending_wipes() == set(), 5)
        scheduler.advance(clock.scaled(60.0))
        assert wiper.calls == [("node-1", None)]

        plugin.stop()
        assert host.wait_deregistered(DRIVER, 5)
        assert host.manager.pending_wipes() == {DRIVER}
        scheduler.advance(clock.scaled(29.0))
        assert len(wiper.calls) == 1
        scheduler.advance(clock.scaled(2.0))
        assert wiper.calls == [("node-1", None), ("node-1", DRIVER)]
        operations = [
            e["operation"] for e in events.of("kubelet") if e["operation"].startswith(("wipe", "res"))
        ]
        assert "wipe-cancelled" in operations
        assert operations[-1] == "resourceslices-wiped"
    finally:
        host.stop()
