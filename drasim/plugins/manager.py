"""The registered DRA plugin instances (upstream ``plugin/dra_plugin_manager.go``).

:class:`DRAPluginManager` is the kubelet's plugin handler for type ``DRAPlugin``:
the reconciler calls :meth:`~DRAPluginManager.validate_plugin`,
:meth:`~DRAPluginManager.register_plugin` and :meth:`~DRAPluginManager.deregister_plugin`,
and the kubelet DRA manager calls :meth:`~DRAPluginManager.get_plugin` (the
:class:`drasim.interfaces.DriverDirectory` port).

It keeps every instance of a driver in the order they were added; several instances
of one driver coexist (rolling updates). It also wipes the node's ResourceSlices:
once at startup for all drivers, and 30 s (nominal) after a driver lost its last
connected instance, cancelled when one connects again. Wiping goes through the
:class:`SliceWiper` port and the timers through an injectable scheduler.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from drasim.errors import DrasimError, DriverNotRegisteredError
from drasim.interfaces import Clock, DriverClient, NullRecorder, Recorder
from drasim.kubelet.profiles import KubeletVersion
from drasim.kubelet.profiles import profile as version_profile
from drasim.metrics import Metrics
from drasim.plugins.client import DEFAULT_CALL_TIMEOUT, GrpcDriverClient
from drasim.plugins.conversion import V1_SERVICE, V1BETA1_SERVICE
from drasim.plugins.health import (
    HEALTH_RETRY_PERIOD,
    HealthCallback,
    HealthEndedCallback,
    HealthStream,
    pick_health_service,
)
from drasim.plugins.timers import Scheduler, ThreadScheduler, TimerHandle

#: upstream ``servicesSupportedByKubelet`` (most recent first).
SERVICES_SUPPORTED_BY_KUBELET: tuple[str, ...] = (V1_SERVICE, V1BETA1_SERVICE)

#: upstream ``defaultWipingDelay``.
DEFAULT_WIPING_DELAY = 30.0

# upstream wipe retry: wait.Backoff{Duration: 1s, Factor: 2, Jitter: 0.2, Cap: 5m, Steps: 100}
_WIPE_BACKOFF_BASE, _WIPE_BACKOFF_CAP, _WIPE_STEPS, _WIPE_JITTER = 1.0, 300.0, 100, 0.2


class PluginRegistrationError(DrasimError):
    """The DRA handler refused a plugin (validation or registration); message as upstream."""


class SliceWiper(Protocol):
    """Deletes ResourceSlices (``DeleteCollection`` with a field selector).

    ``driver_name=None`` means every slice of the node (``spec.nodeName=<node>``);
    otherwise ``spec.nodeName=<node>,spec.driver=<driver>``. Raise to have it retried;
    "no slices" is success.
    """

    def delete_resource_slices(self, node_name: str, driver_name: str | None) -> None:
        """Delete the matching ResourceSlices."""
        ...


class ManagedClient(DriverClient, Protocol):
    """What the manager needs of an instance's client, beyond the DriverClient calls."""

    @property
    def connected(self) -> bool:
        """Whether the channel has a ready connection."""
        ...

    def close(self) -> None:
        """Release the channel."""
        ...


#: Builds a client: (driver, endpoint, service, call_timeout, on_connected) -> client.
ClientFactory = Callable[[str, str, str, float, Callable[[bool], None]], ManagedClient]


def go_quote_list(items: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join('"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"' for s in items) + "]"


def validate_supported_services(supported: Sequence[str], kubelet_services: Sequence[str]) -> str:
    """First entry of the PLUGIN's list that the kubelet supports (upstream ``validateSupportedServices``)."""
    if not supported:
        msg = "empty list of supported gRPC services (aka supported versions)"
        raise PluginRegistrationError(msg)
    for service in supported:
        if service in kubelet_services:
            return service
    msg = (
        f"none of services supported by the plugin ({go_quote_list(supported)}) "
        f"are supported by the kubelet ({go_quote_list(kubelet_services)})"
    )
    raise PluginRegistrationError(msg)


@dataclass
class _Instance:
    client: ManagedClient
    service: str
    health: HealthStream | None = None


@dataclass
class _Wipe:
    handle: TimerHandle | None = None
    done: bool = False
    cancelled: bool = False


class DRAPluginManager:
    """Driver name -> plugin instances, with connection tracking and ResourceSlice wiping."""

    def __init__(
        self,
        *,
        clock: Clock,
        recorder: Recorder | None = None,
        metrics: Metrics | None = None,
        services: Sequence[str] = SERVICES_SUPPORTED_BY_KUBELET,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        node_name: str = "",
        slice_wiper: SliceWiper | None = None,
        wiping_delay: float = DEFAULT_WIPING_DELAY,
        scheduler: Scheduler | None = None,
        health_callback: HealthCallback | None = None,
        health_retry_period: float = HEALTH_RETRY_PERIOD,
        client_factory: ClientFactory | None = None,
        health_ended_callback: HealthEndedCallback | None = None,
        version: KubeletVersion | None = None,
    ) -> None:
        #: The kubelet version whose registration, health and wiping rules apply (default: newest).
        self.version = version if version is not None else version_profile()
        self.services = tuple(services)
        self.call_timeout = call_timeout
        self.node_name = node_name
        self._clock = clock
        self._recorder = recorder if recorder is not None else NullRecorder()
        self._metrics = metrics
        self._wiper = slice_wiper
        self._wiping_delay = wiping_delay
        self._scheduler = scheduler or ThreadScheduler()
        self._health_callback = health_callback
        self._health_ended = health_ended_callback
        self._health_retry = health_retry_period
        self._factory = client_factory or self._grpc_client
        self._lock = threading.RLock()  # predicates of wait_for may call the locked getters
        self._changed = threading.Condition(self._lock)
        self._store: dict[str, list[_Instance]] = {}
        self._wipes: dict[str, _Wipe] = {}
        self._stopped = False
        self._startup_wipe: _Wipe | None = None
        if self._wiper is not None:
            # Upstream NewDRAPluginManager: no driver is usable yet, so stop advertising the node's slices.
            wipe = self._startup_wipe = _Wipe()
            wipe.handle = self._scheduler.call_later(0.0, lambda: self._run_wipe(None, wipe, 0))

    def _grpc_client(
        self, driver: str, endpoint: str, service: str, timeout: float, on_connected: Callable[[bool], None]
    ) -> ManagedClient:
        return GrpcDriverClient(
            driver,
            endpoint,
            service,
            clock=self._clock,
            recorder=self._recorder,
            metrics=self._metrics,
            call_timeout=timeout,
            on_connected=on_connected,
        )

    # ---- plugin handler (called by the reconciler) ----

    def _choose(self, name: str, endpoint: str, versions: Sequence[str]) -> str:
        try:
            if self.version.service_choice == "plugin-order":
                return validate_supported_services(versions, self.services)
            return self.version.choose_service(versions, allowed=self.services)
        except (PluginRegistrationError, ValueError) as exc:
            msg = f"invalid supported gRPC versions of DRA driver plugin {name} at endpoint {endpoint}: {exc}"
            raise PluginRegistrationError(msg) from None

    def _health_service(self, versions: Sequence[str]) -> str:
        """The health service to stream from, by this kubelet version's rules ("" for none)."""
        offered = self.version.health_services
        if not offered:
            return ""
        if not self.version.health_needs_advertisement:
            return offered[0]  # 1.34-1.36 open v1alpha1 whatever the plugin advertised
        picked = pick_health_service(versions)
        return picked if picked in offered else ""

    def validate_plugin(self, name: str, endpoint: str, versions: Sequence[str]) -> None:
        """Upstream ``ValidatePlugin``: raises :class:`PluginRegistrationError`."""
        self._choose(name, endpoint, versions)

    def register_plugin(
        self, name: str, endpoint: str, versions: Sequence[str], call_timeout: float | None = None
    ) -> ManagedClient:
        """Upstream ``RegisterPlugin``: choose the service, open the channel, append the instance."""
        service = self._choose(name, endpoint, versions)
        timeout = self.call_timeout if call_timeout is None else call_timeout
        with self._lock:
            if self._stopped:
                msg = "DRA plugin manager is stopped"
                raise PluginRegistrationError(msg)
            if any(i.client.endpoint == endpoint for i in self._store.get(name, [])):
                msg = f"endpoint {endpoint} already registered for DRA driver plugin {name}"
                raise PluginRegistrationError(msg)
        client = self._factory(name, endpoint, service, timeout, lambda _c: self._connection_changed(name))
        instance = _Instance(client, service)
        health_service = self._health_service(versions)
        channel = getattr(client, "channel", None)
        if self._health_callback is not None and health_service and channel is not None:
            instance.health = HealthStream(
                channel,
                name,
                endpoint,
                health_service,
                self._health_callback,
                clock=self._clock,
                recorder=self._recorder,
                retry_period=self._health_retry,
                on_end=self._health_ended,
                connected=lambda: bool(getattr(client, "connected", True)),
            )
        with self._lock:
            clash = self._stopped or any(i.client.endpoint == endpoint for i in self._store.get(name, []))
            if not clash:
                self._store.setdefault(name, []).append(instance)
                self._sync(name)
                self._changed.notify_all()
        if clash:  # lost a race with a concurrent registration of the same endpoint (or with stop)
            client.close()
            msg = f"endpoint {endpoint} already registered for DRA driver plugin {name}"
            raise PluginRegistrationError(msg)
        if instance.health is not None:
            instance.health.start()
        return client

    def deregister_plugin(self, name: str, endpoint: str) -> None:
        """Upstream ``DeRegisterPlugin``: drop the instance (no-op if absent), cancel health, close."""
        with self._lock:
            instances = self._store.get(name, [])
            found = next((i for i in instances if i.client.endpoint == endpoint), None)
            if found is None:
                return
            instances.remove(found)
            if not instances:
                del self._store[name]
            self._sync(name)
            self._changed.notify_all()
        # Outside the lock: closing may call back into _connection_changed.
        if found.health is not None:
            found.health.stop()
        found.client.close()

    def _connection_changed(self, name: str) -> None:
        with self._lock:
            if self._stopped:
                return
            self._sync(name)
            self._changed.notify_all()

    # ---- lookups (DriverDirectory) ----

    def get_plugin(self, driver_name: str) -> ManagedClient:
        """Newest connected instance, else the newest one (upstream ``GetPlugin``)."""
        if not driver_name:
            raise DriverNotRegisteredError("")
        with self._lock:
            instances = list(self._store.get(driver_name, []))
        if not instances:
            raise DriverNotRegisteredError(driver_name)
        for instance in reversed(instances):
            if instance.client.connected:
                return instance.client
        return instances[-1].client

    def instances(self, driver_name: str) -> list[ManagedClient]:
        """Every registered instance of a driver, oldest first."""
        with self._lock:
            return [i.client for i in self._store.get(driver_name, [])]

    def service_of(self, driver_name: str, endpoint: str) -> str | None:
        """The negotiated service of one instance, or ``None``."""
        with self._lock:
            for i in self._store.get(driver_name, []):
                if i.client.endpoint == endpoint:
                    return i.service
        return None

    def health_streams(self, driver_name: str) -> list[HealthStream]:
        """The health streams of every registered instance of a driver."""
        with self._lock:
            return [i.health for i in self._store.get(driver_name, []) if i.health is not None]

    def health_stream(self, driver_name: str, endpoint: str) -> HealthStream | None:
        """The health stream of one instance, if it has one."""
        with self._lock:
            for i in self._store.get(driver_name, []):
                if i.client.endpoint == endpoint:
                    return i.health
        return None

    def drivers(self) -> list[str]:
        """Names of drivers with at least one instance."""
        with self._lock:
            return sorted(self._store)

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until ``predicate()`` holds after some registration or connection change."""
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    def pending_wipes(self) -> set[str]:
        """Drivers whose slice wipe is queued or retrying (not yet done)."""
        with self._lock:
            return {d for d, w in self._wipes.items() if not w.done}

    # ---- slice wiping ----

    def _usable(self, name: str) -> bool:
        if self.version.slice_wiping != "after-last-disconnect":
            # Before 1.34 there was no connection tracking: a registered instance is enough.
            return bool(self._store.get(name))
        return any(i.client.connected for i in self._store.get(name, []))

    def _sync(self, name: str) -> None:
        """Queue or cancel the driver's slice wipe (upstream ``sync``); lock held."""
        if self._wiper is None or self._stopped:
            return
        if self._usable(name):
            wipe = self._wipes.pop(name, None)
            if wipe is not None:
                wipe.cancelled = True
                if wipe.handle is not None:
                    wipe.handle.cancel()
                if not wipe.done:
                    self._recorder.record(
                        "kubelet", operation="wipe-cancelled", driver=name, node=self.node_name
                    )
            return
        if name in self._wipes:
            return  # already queued (or done): the original deadline still applies
        wipe = _Wipe()
        self._wipes[name] = wipe
        # 1.31 wiped at once on deregistration; later kubelets wait wipingDelay.
        delay = 0.0 if self.version.slice_wiping == "on-deregistration" else self._wiping_delay
        wipe.handle = self._scheduler.call_later(
            self._clock.scaled(delay), lambda: self._run_wipe(name, wipe, 0)
        )
        self._recorder.record(
            "kubelet", operation="wipe-scheduled", driver=name, node=self.node_name, delay=delay
        )

    def _run_wipe(self, driver: str | None, wipe: _Wipe, attempt: int) -> None:
        with self._lock:
            if wipe.cancelled or self._stopped or self._wiper is None:
                return
            wiper = self._wiper
        try:
            wiper.delete_resource_slices(self.node_name, driver)
        except Exception as exc:  # any failure is retried with backoff, as upstream
            self._wipe_failed(driver, wipe, attempt, exc)
            return
        with self._lock:
            wipe.done = True
        self._recorder.record("kubelet", operation="resourceslices-wiped", driver=driver, node=self.node_name)

    def _wipe_failed(self, driver: str | None, wipe: _Wipe, attempt: int, exc: Exception) -> None:
        self._recorder.record(
            "kubelet",
            operation="wipe-failed",
            driver=driver,
            node=self.node_name,
            error=str(exc),
            attempt=attempt,
        )
        with self._lock:
            if wipe.cancelled or self._stopped:
                return
            if attempt + 1 >= _WIPE_STEPS:
                wipe.done = True
                return
            delay = min(_WIPE_BACKOFF_BASE * 2**attempt, _WIPE_BACKOFF_CAP)
            delay *= 1 + random.random() * _WIPE_JITTER  # jitter, not crypto
            wipe.handle = self._scheduler.call_later(
                self._clock.scaled(delay), lambda: self._run_wipe(driver, wipe, attempt + 1)
            )

    # ---- lifecycle ----

    def stop(self) -> None:
        """Cancel pending wipes and health streams, close every channel (upstream ``Stop``)."""
        with self._lock:
            self._stopped = True
            instances = [i for group in self._store.values() for i in group]
            wipes = [*self._wipes.values(), *([self._startup_wipe] if self._startup_wipe else [])]
            self._changed.notify_all()
        for wipe in wipes:
            wipe.cancelled = True
            if wipe.handle is not None:
                wipe.handle.cancel()
        self._scheduler.stop()
        for instance in instances:
            if instance.health is not None:
                instance.health.stop()
            instance.client.close()
