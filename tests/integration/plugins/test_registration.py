"""Registration through the registry directory: handshake, negotiation, re-registration."""

from __future__ import annotations

import itertools
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drasim.clock import ScaledClock
from drasim.errors import DriverNotRegisteredError
from drasim.plugins import PluginHost
from drasim.values import ClaimRef, UnprepareResult

DRIVER = "gpu.example.com"
CLAIM = ClaimRef(namespace="default", uid="uid-1", name="claim-1")


@pytest.fixture
def host_factory(dirs: tuple[Path, Path], clock: ScaledClock, events: Any) -> Iterator[Any]:
    hosts: list[PluginHost] = []

    def make(**kwargs: Any) -> PluginHost:
        kwargs.setdefault("clock", clock)
        host = PluginHost(dirs[0], recorder=events, **kwargs)
        hosts.append(host)
        host.start()
        return host

    yield make
    for host in hosts:
        host.stop()


def registrations(events: Any) -> str:
    """The registration events so far, one a line (for assertion messages)."""
    return "registration events:\n" + "\n".join(
        f"  {e['outcome']} {e.get('socket')} -> {e.get('endpoint')}: {e.get('error')}"
        for e in events.of("registration")
    )


def test_handshake_registers_and_notifies(host_factory: Any, make_plugin: Any, events: Any) -> None:
    plugin = make_plugin().start()
    host = host_factory()
    assert host.wait_registered(DRIVER, 5, connected=True)
    assert plugin.next_status() == (True, "")
    assert host.sync()
    assert plugin.get_info_calls == 1
    client = host.get_plugin(DRIVER)
    assert client.endpoint == plugin.dra_path
    assert host.manager.service_of(DRIVER, plugin.dra_path) == "v1.DRAPlugin"
    (event,) = events.of("registration", outcome="registered")
    assert event["driver"] == DRIVER
    assert event["socket"] == plugin.reg_path
    assert event["endpoint"] == plugin.dra_path
    assert event["service"] == "v1.DRAPlugin"
    assert event["error"] is None
    assert client.node_prepare_resources([CLAIM])["uid-1"] is not None


V1, V1B = "v1.DRAPlugin", "v1beta1.DRAPlugin"


@pytest.mark.parametrize(
    ("advertised", "kubelet", "serve", "expected"),
    [
        pytest.param([V1], [V1, V1B], ("v1",), V1, id="v1-only"),
        pytest.param([V1B], [V1, V1B], ("v1beta1",), V1B, id="v1beta1-only"),
        pytest.param([V1, V1B], [V1, V1B], ("v1", "v1beta1"), V1, id="both"),
        pytest.param([V1B, V1], [V1, V1B], ("v1", "v1beta1"), V1B, id="both-reversed"),
        pytest.param([V1, V1B], [V1B], ("v1beta1",), V1B, id="kubelet-v1beta1-only"),
        pytest.param(["v1alpha1.DRAResourceHealth", V1], [V1, V1B], ("v1",), V1, id="health-listed-first"),
    ],
)
def test_version_negotiation(
    host_factory: Any,
    make_plugin: Any,
    advertised: list[str],
    kubelet: list[str],
    *,
    serve: Any,
    expected: str,
) -> None:
    plugin = make_plugin(services=tuple(advertised), serve=serve).start()
    host = host_factory(services=kubelet)
    assert host.wait_registered(DRIVER, 5)
    assert plugin.next_status() == (True, "")
    assert host.manager.service_of(DRIVER, plugin.dra_path) == expected
    result = host.get_plugin(DRIVER).node_prepare_resources([CLAIM])
    assert result["uid-1"] is not None
    assert result["uid-1"].devices[0].device_name == "dev-uid-1"
    method, _ = plugin.calls[-1]
    assert method == "NodePrepareResources"


def _validation_error(endpoint: str, detail: str) -> str:
    return (
        "RegisterPlugin error -- plugin validation failed with err: invalid supported gRPC versions "
        f"of DRA driver plugin {DRIVER} at endpoint {endpoint}: {detail}"
    )


@pytest.mark.parametrize(
    ("advertised", "kubelet", "detail"),
    [
        pytest.param(
            [], [V1, V1B], "empty list of supported gRPC services (aka supported versions)", id="empty"
        ),
        pytest.param(
            ["1.0.0"],
            [V1, V1B],
            'none of services supported by the plugin (["1.0.0"]) are supported by the kubelet '
            '(["v1.DRAPlugin" "v1beta1.DRAPlugin"])',
            id="unknown",
        ),
        pytest.param(
            [V1B],
            [V1],
            'none of services supported by the plugin (["v1beta1.DRAPlugin"]) are supported by the kubelet '
            '(["v1.DRAPlugin"])',
            id="kubelet-v1-only",
        ),
    ],
)
def test_version_rejected(
    host_factory: Any,
    make_plugin: Any,
    events: Any,
    advertised: list[str],
    *,
    kubelet: list[str],
    detail: str,
) -> None:
    plugin = make_plugin(services=tuple(advertised)).start()
    host = host_factory(services=kubelet)
    registered, error = plugin.next_status()
    assert not registered
    assert error == _validation_error(plugin.dra_path, detail)
    host.sync()
    assert host.registered_drivers() == []
    failed = events.of("registration", outcome="failed")
    # The stock helper answers Notify(false) with an error, so the kubelet reports that it failed to send.
    assert failed[0]["error"].startswith(
        f"RegisterPlugin error -- failed to send error at socket {plugin.reg_path}"
    )
    with pytest.raises(DriverNotRegisteredError, match=f"DRA driver {DRIVER} is not registered"):
        host.get_plugin(DRIVER)


def test_wrong_plugin_type_is_rejected(host_factory: Any, make_plugin: Any) -> None:
    plugin = make_plugin(plugin_type="CSIPlugin").start()
    host_factory()
    registered, error = plugin.next_status()
    assert not registered
    expected = "RegisterPlugin error -- no handler registered for plugin type: CSIPlugin at socket "
    expected += plugin.reg_path
    assert error == expected


def test_failed_registration_is_retried(host_factory: Any, make_plugin: Any) -> None:
    plugin = make_plugin(services=()).start()
    host = host_factory()
    assert plugin.next_status()[0] is False
    assert plugin.next_status()[0] is False  # retried after backoff
    assert host.reconciler.attempts(plugin.reg_path) >= 2


def test_empty_endpoint_means_registration_socket(host_factory: Any, make_plugin: Any) -> None:
    plugin = make_plugin(common_socket=True).start()
    host = host_factory()
    assert host.wait_registered(DRIVER, 5, connected=True)
    assert host.get_plugin(DRIVER).endpoint == plugin.reg_path
    assert host.get_plugin(DRIVER).node_unprepare_resources([CLAIM]) == {"uid-1": UnprepareResult(error="")}
    assert plugin.calls[-1][0] == "NodeUnprepareResources"


def test_socket_removal_deregisters(host_factory: Any, make_plugin: Any, events: Any) -> None:
    plugin = make_plugin().start()
    host = host_factory()
    assert host.wait_registered(DRIVER, 5)
    assert host.sync()  # the registration finished (status notified) before the plugin stops
    plugin.stop()
    assert host.wait_deregistered(DRIVER, 5), registrations(events)
    (event,) = events.of("registration", outcome="deregistered")
    assert event["socket"] == plugin.reg_path
    assert event["endpoint"] == plugin.dra_path


def test_plugin_restart_on_same_path_reregisters(host_factory: Any, make_plugin: Any, events: Any) -> None:
    first = make_plugin().start()
    host = host_factory()
    assert host.wait_registered(DRIVER, 5, connected=True)
    # The instance is in the manager before the kubelet has told the plugin so; stopping the
    # plugin before that NotifyRegistrationStatus returns fails the first registration
    # ("failed to send registration status ... Cancelling all calls"), as upstream would.
    assert first.next_status() == (True, "")
    assert host.sync(), registrations(events)
    old_client = host.get_plugin(DRIVER)
    first.stop()
    second = make_plugin().start()
    assert second.next_status() == (True, ""), registrations(events)
    assert host.wait_registered(DRIVER, 5, connected=True), registrations(events)
    assert host.sync(), registrations(events)
    new_client = host.get_plugin(DRIVER)
    assert new_client is not old_client, registrations(events)
    assert len(host.manager.instances(DRIVER)) == 1, registrations(events)
    new_client.node_prepare_resources([CLAIM])
    assert second.calls
    assert not first.calls
    outcomes = [e["outcome"] for e in events.of("registration")]
    assert outcomes == ["registered", "deregistered", "registered"], registrations(events)


def test_two_instances_newest_connected_wins(host_factory: Any, make_plugin: Any) -> None:
    old = make_plugin(reg_name="old-reg.sock", dra_name="old.sock").start()
    host = host_factory()
    assert host.wait_registered(DRIVER, 5, endpoint=old.dra_path, connected=True)
    new = make_plugin(reg_name="new-reg.sock", dra_name="new.sock")
    new.start_registration()  # DRA socket not up yet: registered, but not connected
    assert host.wait_registered(DRIVER, 5, endpoint=new.dra_path)
    assert host.get_plugin(DRIVER).endpoint == old.dra_path
    new.start_dra()
    assert host.wait_registered(DRIVER, 5, endpoint=new.dra_path, connected=True)
    assert host.get_plugin(DRIVER).endpoint == new.dra_path
    assert host.sync()  # the registration finished (status notified) before the plugin stops
    new.stop()
    assert host.wait_deregistered(DRIVER, 5, endpoint=new.dra_path)
    assert host.get_plugin(DRIVER).endpoint == old.dra_path


def test_stale_socket_without_listener_backs_off(
    dirs: tuple[Path, Path], make_plugin: Any, events: Any
) -> None:
    stale_path = str(dirs[0] / f"{DRIVER}-reg.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(stale_path)
    sock.close()  # the file stays, nobody listens
    clock = ScaledClock(0.05)  # dial timeout 0.5 s, backoff from 25 ms doubling
    host = PluginHost(dirs[0], clock=clock, recorder=events)
    host.start()
    try:
        assert host.reconciler.wait_for(lambda: host.reconciler.attempts(stale_path) >= 3, 10)
        failures = events.of("registration", outcome="failed", socket=stale_path)
        assert failures, "each failed attempt is journaled"
        assert failures[0]["error"].startswith(f"RegisterPlugin error -- dial failed at socket {stale_path}")
        # Each attempt waits out the dial timeout, then the backoff: never a busy loop.
        gaps = [b["_t"] - a["_t"] for a, b in itertools.pairwise(failures)]
        assert all(gap >= clock.scaled(10.0) for gap in gaps)
        # The owner comes back and re-creates its socket: registration succeeds.
        os.unlink(stale_path)
        plugin = make_plugin().start()
        assert plugin.next_status(5) == (True, "")
        assert host.wait_registered(DRIVER, 5)
    finally:
        host.stop()


def test_dot_files_and_non_sockets_are_ignored(
    dirs: tuple[Path, Path], host_factory: Any, make_plugin: Any
) -> None:
    hidden = make_plugin(reg_name=".hidden-reg.sock").start()
    (dirs[0] / "not-a-socket.sock").write_text("x")
    host = host_factory()
    assert host.sync()
    assert hidden.get_info_calls == 0
    assert host.registered_drivers() == []
    assert host.watcher.known_sockets() == []


def test_kubelet_restart_reregisters_existing_sockets(
    dirs: tuple[Path, Path], clock: ScaledClock, make_plugin: Any, events: Any
) -> None:
    plugin = make_plugin().start()
    first = PluginHost(dirs[0], clock=clock, recorder=events)
    first.start()
    assert first.wait_registered(DRIVER, 5)
    first.stop()
    assert plugin.next_status() == (True, "")
    second = PluginHost(dirs[0], clock=clock, recorder=events)
    second.start()
    try:
        assert second.wait_registered(DRIVER, 5, connected=True)
        assert plugin.next_status() == (True, "")
        assert plugin.get_info_calls == 2
    finally:
        second.stop()


@pytest.mark.parametrize("use_inotify", [True, False], ids=["inotify", "polling"])
def test_socket_in_new_subdirectory(
    dirs: tuple[Path, Path], host_factory: Any, make_plugin: Any, use_inotify: bool
) -> None:
    host = host_factory(use_inotify=use_inotify)
    assert host.watcher.mode == ("inotify" if use_inotify else "polling")
    sub = dirs[0] / "sub"
    sub.mkdir()
    plugin = make_plugin(reg_name="sub/r.sock").start()
    assert host.wait_registered(DRIVER, 5)
    assert host.sync()  # the registration finished (status notified) before the plugin stops
    plugin.stop()
    assert host.wait_deregistered(DRIVER, 5)


def test_registry_dir_is_created(short_socket_dir: Path, clock: ScaledClock) -> None:
    target = short_socket_dir / "new" / "registry"
    with PluginHost(target, clock=clock):
        assert target.is_dir()
        assert target.stat().st_mode & 0o777 == 0o755 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_second_plugin_cannot_hijack_an_endpoint(host_factory: Any, make_plugin: Any) -> None:
    owner = make_plugin(reg_name="owner-reg.sock").start()
    host = host_factory()
    assert host.wait_registered(DRIVER, 5, connected=True)
    assert owner.next_status() == (True, "")
    intruder = make_plugin(reg_name="intruder-reg.sock")
    intruder.dra_path = intruder.advertised_endpoint = owner.dra_path
    intruder.start_registration()
    registered, error = intruder.next_status()
    assert not registered
    assert error == (
        "RegisterPlugin error -- plugin registration failed with err: "
        f"endpoint {owner.dra_path} already registered for DRA driver plugin {DRIVER}"
    )
    assert host.sync()
    assert len(host.manager.instances(DRIVER)) == 1


def test_get_info_failure_is_retried_until_it_answers(
    host_factory: Any, make_plugin: Any, events: Any
) -> None:
    plugin = make_plugin()
    plugin.plugin_type = "DRAPlugin"
    broken = {"left": 2}
    original = plugin.services

    class FlakyServices(tuple):  # GetInfo reads the list; raising there fails the RPC
        def __iter__(self) -> Any:
            if broken["left"]:
                broken["left"] -= 1
                raise RuntimeError("not ready")
            return super().__iter__()

    plugin.services = FlakyServices(original)
    plugin.start()
    host = host_factory()
    assert plugin.next_status(5) == (True, "")
    assert host.sync()
    failures = events.of("registration", outcome="failed")
    assert len(failures) == 2
    assert "failed to get plugin info using RPC GetInfo" in failures[0]["error"]
    assert "code = Unknown" in failures[0]["error"]
    assert host.registered_drivers() == [DRIVER]
