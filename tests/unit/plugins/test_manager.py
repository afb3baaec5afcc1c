"""DRAPluginManager without gRPC: fake clients, a manual scheduler (upstream dra_plugin_manager_test.go)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from drasim.clock import VirtualClock
from drasim.errors import DriverNotRegisteredError
from drasim.interfaces import DriverDirectory
from drasim.plugins import DRAPluginManager, ManualScheduler, PluginRegistrationError
from drasim.plugins.manager import go_quote_list, validate_supported_services
from drasim.values import ClaimRef, PrepareResult, UnprepareResult

V1, V1B = "v1.DRAPlugin", "v1beta1.DRAPlugin"


class FakeClient:
    def __init__(
        self, driver: str, endpoint: str, service: str, timeout: float, notify: Callable[[bool], None]
    ):
        self._driver = driver
        self._endpoint = endpoint
        self.service = service
        self.call_timeout = timeout
        self._notify = notify
        self._connected = False
        self.closed = False

    @property
    def driver_name(self) -> str:
        return self._driver

    @property
    def endpoint(self) -> str:
        return self._endpoint

    @property
    def connected(self) -> bool:
        return self._connected

    def set_connected(self, value: bool) -> None:
        self._connected = value
        self._notify(value)

    def close(self) -> None:
        self.closed = True

    def node_prepare_resources(self, claims: Sequence[ClaimRef]) -> dict[str, PrepareResult | None]:
        return {c.uid: PrepareResult() for c in claims}

    def node_unprepare_resources(self, claims: Sequence[ClaimRef]) -> dict[str, UnprepareResult | None]:
        return {c.uid: UnprepareResult() for c in claims}


class Wiper:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []
        self.failures = 0

    def delete_resource_slices(self, node_name: str, driver_name: str | None) -> None:
        self.calls.append((node_name, driver_name))
        if self.failures:
            self.failures -= 1
            raise RuntimeError("Unauthorized")


class Events:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def record(self, kind: str, **fields: Any) -> None:
        self.events.append((kind, fields))

    def operations(self) -> list[str]:
        return [f["operation"] for k, f in self.events if k == "kubelet"]


@pytest.fixture
def scheduler() -> ManualScheduler:
    return ManualScheduler()


@pytest.fixture
def wiper() -> Wiper:
    return Wiper()


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture
def manager(scheduler: ManualScheduler, wiper: Wiper, events: Events) -> Iterator[DRAPluginManager]:
    pm = DRAPluginManager(
        clock=VirtualClock(),
        recorder=events,
        node_name="worker",
        slice_wiper=wiper,
        scheduler=scheduler,
        client_factory=FakeClient,
    )
    yield pm
    pm.stop()


def test_is_a_driver_directory(manager: DRAPluginManager) -> None:
    assert isinstance(manager, DriverDirectory)


def test_add_same_name(manager: DRAPluginManager) -> None:
    """TestAddSameName: same endpoint refused; new endpoint wins; removing it falls back."""
    first = manager.register_plugin("dra.example.com", "/a/dra.sock", [V1])
    with pytest.raises(PluginRegistrationError) as info:
        manager.register_plugin("dra.example.com", "/a/dra.sock", [V1])
    assert str(info.value) == "endpoint /a/dra.sock already registered for DRA driver plugin dra.example.com"
    second = manager.register_plugin("dra.example.com", "/b/dra.sock", [V1])
    assert manager.get_plugin("dra.example.com") is second
    manager.deregister_plugin("dra.example.com", "/b/dra.sock")
    assert manager.get_plugin("dra.example.com") is first
    assert isinstance(second, FakeClient)
    assert second.closed


def test_delete(manager: DRAPluginManager) -> None:
    """TestDelete: after removal, GetPlugin fails; deregistering twice is a no-op."""
    manager.register_plugin("dra.example.com", "/a/dra.sock", [V1])
    manager.deregister_plugin("dra.example.com", "/a/dra.sock")
    manager.deregister_plugin("dra.example.com", "/a/dra.sock")
    manager.deregister_plugin("other.example.com", "/x.sock")
    with pytest.raises(DriverNotRegisteredError) as info:
        manager.get_plugin("dra.example.com")
    assert str(info.value) == "DRA driver dra.example.com is not registered"


def test_empty_driver_name(manager: DRAPluginManager) -> None:
    with pytest.raises(DriverNotRegisteredError) as info:
        manager.get_plugin("")
    assert str(info.value) == "DRA driver name is empty"


def test_newest_connected_wins(manager: DRAPluginManager) -> None:
    old = manager.register_plugin("d", "/old.sock", [V1])
    new = manager.register_plugin("d", "/new.sock", [V1])
    assert isinstance(old, FakeClient)
    assert isinstance(new, FakeClient)
    assert manager.get_plugin("d") is new  # none connected: the newest
    old.set_connected(True)
    assert manager.get_plugin("d") is old  # the only connected one
    new.set_connected(True)
    assert manager.get_plugin("d") is new
    assert manager.instances("d") == [old, new]


def test_register_chooses_service_and_timeout(manager: DRAPluginManager) -> None:
    client = manager.register_plugin("d", "/a.sock", [V1B, V1])
    assert isinstance(client, FakeClient)
    assert client.service == V1B
    assert client.call_timeout == 45.0
    other = manager.register_plugin("d", "/b.sock", [V1], call_timeout=0.02)
    assert isinstance(other, FakeClient)
    assert other.call_timeout == 0.02
    assert manager.service_of("d", "/a.sock") == V1B


def test_register_rejects_unsupported(manager: DRAPluginManager) -> None:
    with pytest.raises(PluginRegistrationError) as info:
        manager.register_plugin("d", "/a.sock", [])
    assert str(info.value) == (
        "invalid supported gRPC versions of DRA driver plugin d at endpoint /a.sock: "
        "empty list of supported gRPC services (aka supported versions)"
    )
    assert manager.drivers() == []


@pytest.mark.parametrize(
    ("plugin", "kubelet", "expected"),
    [
        ([V1], [V1, V1B], V1),
        ([V1B], [V1, V1B], V1B),
        ([V1, V1B], [V1, V1B], V1),
        ([V1B, V1], [V1, V1B], V1B),  # the plugin's order decides
        (["v1alpha1.DRAResourceHealth", V1B], [V1, V1B], V1B),
        ([V1, V1B], [V1B], V1B),
    ],
)
def test_validate_supported_services(plugin: list[str], kubelet: list[str], expected: str) -> None:
    assert validate_supported_services(plugin, kubelet) == expected


def test_validate_supported_services_errors() -> None:
    with pytest.raises(PluginRegistrationError, match=r"^empty list of supported gRPC services \(aka"):
        validate_supported_services([], [V1, V1B])
    with pytest.raises(PluginRegistrationError) as info:
        validate_supported_services(["1.0.0", "v1alpha3.NodeService"], [V1, V1B])
    assert str(info.value) == (
        'none of services supported by the plugin (["1.0.0" "v1alpha3.NodeService"]) '
        'are supported by the kubelet (["v1.DRAPlugin" "v1beta1.DRAPlugin"])'
    )


def test_go_quote_list() -> None:
    assert go_quote_list([]) == "[]"
    assert go_quote_list(['a"b', "c\\d"]) == '["a\\"b" "c\\\\d"]'


def test_startup_wipe_of_all_node_slices(
    manager: DRAPluginManager, scheduler: ManualScheduler, wiper: Wiper
) -> None:
    assert scheduler.pending() == [0.0]
    scheduler.advance(0)
    assert wiper.calls == [("worker", None)]


def test_wipe_after_delay_when_driver_unusable(
    manager: DRAPluginManager, scheduler: ManualScheduler, wiper: Wiper, events: Events
) -> None:
    scheduler.advance(0)
    client = manager.register_plugin("d", "/a.sock", [V1])
    assert isinstance(client, FakeClient)
    assert manager.pending_wipes() == {"d"}  # registered but not connected yet
    client.set_connected(True)
    assert manager.pending_wipes() == set()
    client.set_connected(False)
    assert scheduler.pending() == [30.0]
    scheduler.advance(29.9)
    assert wiper.calls == [("worker", None)]
    client.set_connected(False)  # another disconnect does not push the deadline back
    scheduler.advance(0.1)
    assert wiper.calls == [("worker", None), ("worker", "d")]
    assert manager.pending_wipes() == set()
    client.set_connected(False)
    assert scheduler.pending() == []  # already wiped: nothing new until the driver was usable again
    assert events.operations() == [
        "resourceslices-wiped",
        "wipe-scheduled",
        "wipe-cancelled",
        "wipe-scheduled",
        "resourceslices-wiped",
    ]


def test_reconnect_cancels_wipe(manager: DRAPluginManager, scheduler: ManualScheduler, wiper: Wiper) -> None:
    scheduler.advance(0)
    client = manager.register_plugin("d", "/a.sock", [V1])
    assert isinstance(client, FakeClient)
    scheduler.advance(20)
    client.set_connected(True)
    scheduler.advance(60)
    assert wiper.calls == [("worker", None)]


def test_deregistration_of_last_instance_schedules_wipe(
    manager: DRAPluginManager, scheduler: ManualScheduler, wiper: Wiper
) -> None:
    scheduler.advance(0)
    a = manager.register_plugin("d", "/a.sock", [V1])
    b = manager.register_plugin("d", "/b.sock", [V1])
    assert isinstance(a, FakeClient)
    assert isinstance(b, FakeClient)
    a.set_connected(True)
    b.set_connected(True)
    manager.deregister_plugin("d", "/b.sock")
    assert manager.pending_wipes() == set()  # /a.sock still connected
    manager.deregister_plugin("d", "/a.sock")
    assert manager.pending_wipes() == {"d"}
    scheduler.advance(30)
    assert wiper.calls[-1] == ("worker", "d")


def test_failed_wipe_is_retried_with_backoff(
    manager: DRAPluginManager, scheduler: ManualScheduler, wiper: Wiper
) -> None:
    wiper.failures = 2
    scheduler.advance(0)
    assert wiper.calls == [("worker", None)]
    (delay,) = scheduler.pending()
    assert 1.0 <= delay <= 1.2  # 1 s, jitter 0.2
    scheduler.advance(delay)
    (delay,) = scheduler.pending()
    assert 2.0 <= delay <= 2.4
    scheduler.advance(delay)
    assert len(wiper.calls) == 3
    assert scheduler.pending() == []


def test_stop_cancels_everything(scheduler: ManualScheduler, wiper: Wiper, events: Events) -> None:
    pm = DRAPluginManager(
        clock=VirtualClock(), slice_wiper=wiper, scheduler=scheduler, client_factory=FakeClient, node_name="n"
    )
    client = pm.register_plugin("d", "/a.sock", [V1])
    pm.stop()
    assert isinstance(client, FakeClient)
    assert client.closed
    scheduler.advance(100)
    assert wiper.calls == []
    with pytest.raises(PluginRegistrationError, match="stopped"):
        pm.register_plugin("d", "/b.sock", [V1])


def test_no_wiper_no_wipes(scheduler: ManualScheduler) -> None:
    pm = DRAPluginManager(clock=VirtualClock(), scheduler=scheduler, client_factory=FakeClient)
    pm.register_plugin("d", "/a.sock", [V1])
    assert scheduler.pending() == []
    assert pm.pending_wipes() == set()
    pm.stop()


def test_wait_for_sees_registrations(manager: DRAPluginManager) -> None:
    assert not manager.wait_for(lambda: manager.drivers() == ["d"], 0.01)
    manager.register_plugin("d", "/a.sock", [V1])
    assert manager.wait_for(lambda: manager.drivers() == ["d"], 0.01)


# ---- kubelet version profiles (drasim/kubelet/profiles.py) -----------------------------------


def _versioned(version: str, scheduler: ManualScheduler, wiper: Wiper) -> DRAPluginManager:
    from drasim.kubelet.profiles import profile

    return DRAPluginManager(
        clock=VirtualClock(),
        node_name="worker",
        slice_wiper=wiper,
        scheduler=scheduler,
        client_factory=FakeClient,
        version=profile(version),
        services=profile(version).dra_services,
    )


@pytest.mark.parametrize(
    ("version", "advertised", "health"),
    [
        ("1.33", [V1B, "v1alpha1.DRAResourceHealth"], ""),  # no health streams before 1.34
        ("1.34", [V1, V1B], "v1alpha1.DRAResourceHealth"),  # 1.34-1.36 open one for every plugin
        ("1.36", [V1, "v1.DRAResourceHealth"], "v1alpha1.DRAResourceHealth"),
        ("1.37", [V1, V1B], ""),  # 1.37: only when advertised
        ("1.37", [V1, "v1alpha1.DRAResourceHealth", "v1.DRAResourceHealth"], "v1.DRAResourceHealth"),
    ],
)
def test_health_service_by_version(
    version: str, advertised: list[str], health: str, scheduler: ManualScheduler, wiper: Wiper
) -> None:
    manager = _versioned(version, scheduler, wiper)
    assert manager._health_service(advertised) == health
    manager.stop()


def test_registration_choice_by_version(scheduler: ManualScheduler, wiper: Wiper) -> None:
    old = _versioned("1.33", scheduler, wiper)
    client = old.register_plugin("dra.example.com", "/a/dra.sock", [V1, V1B])
    assert getattr(client, "service", None) == V1B
    with pytest.raises(PluginRegistrationError, match="empty list of supported gRPC services"):
        old.register_plugin("dra.example.com", "/b/dra.sock", [])
    old.stop()
    oldest = _versioned("1.31", ManualScheduler(), Wiper())
    with pytest.raises(PluginRegistrationError, match="could not find a highest supported version"):
        oldest.register_plugin("dra.example.com", "/a/dra.sock", [V1, V1B])
    oldest.stop()


def test_before_1_34_a_disconnected_but_registered_plugin_keeps_its_slices(
    scheduler: ManualScheduler, wiper: Wiper
) -> None:
    manager = _versioned("1.33", scheduler, wiper)
    client = manager.register_plugin("dra.example.com", "/a/dra.sock", [V1B])
    assert isinstance(client, FakeClient)
    client.set_connected(True)
    client.set_connected(False)
    scheduler.advance(60.0)
    assert ("worker", "dra.example.com") not in wiper.calls
    manager.deregister_plugin("dra.example.com", "/a/dra.sock")
    scheduler.advance(29.0)
    assert ("worker", "dra.example.com") not in wiper.calls
    scheduler.advance(1.0)
    assert ("worker", "dra.example.com") in wiper.calls
    manager.stop()


def test_kubelet_1_31_wipes_at_once_on_deregistration(scheduler: ManualScheduler, wiper: Wiper) -> None:
    manager = _versioned("1.31", scheduler, wiper)
    manager.register_plugin("dra.example.com", "/a/dra.sock", ["1.0.0"])
    manager.deregister_plugin("dra.example.com", "/a/dra.sock")
    scheduler.advance(0.0)
    assert ("worker", "dra.example.com") in wiper.calls
    manager.stop()
