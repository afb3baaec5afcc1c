"""One object that runs the kubelet's side of the plugin protocol.

``PluginHost`` wires the registry-directory watcher, the reconciler (registration
handshakes with retries) and the :class:`~drasim.plugins.manager.DRAPluginManager`
(gRPC clients, connection tracking, ResourceSlice wiping, health streams)::

    host = PluginHost(registry_dir, clock=ScaledClock(0.01), recorder=journal, metrics=metrics)
    host.start()
    host.wait_registered("gpu.example.com", timeout=10)
    client = host.get_plugin("gpu.example.com")      # a DriverClient
    ...
    host.stop()

``host.manager`` is the :class:`drasim.interfaces.DriverDirectory` to give the kubelet
DRA manager. Stopping the host is like stopping the kubelet: sockets stay, and a new
host on the same directory registers them again.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import TracebackType

from drasim.interfaces import Clock, NullRecorder, Recorder
from drasim.kubelet.profiles import KubeletVersion
from drasim.metrics import Metrics
from drasim.plugins.client import DEFAULT_CALL_TIMEOUT
from drasim.plugins.health import HEALTH_RETRY_PERIOD, HealthCallback, HealthEndedCallback
from drasim.plugins.manager import (
    DEFAULT_WIPING_DELAY,
    SERVICES_SUPPORTED_BY_KUBELET,
    DRAPluginManager,
    ManagedClient,
    SliceWiper,
)
from drasim.plugins.reconciler import RECONCILE_PERIOD, Reconciler
from drasim.plugins.registration import DRA_PLUGIN_TYPE
from drasim.plugins.timers import Scheduler
from drasim.plugins.watcher import PluginWatcher


class PluginHost:
    """Watcher + reconciler + DRA plugin manager for one registry directory."""

    def __init__(
        self,
        registry_dir: str | os.PathLike[str],
        *,
        clock: Clock,
        recorder: Recorder | None = None,
        metrics: Metrics | None = None,
        services: Sequence[str] = SERVICES_SUPPORTED_BY_KUBELET,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        slice_wiper: SliceWiper | None = None,
        node_name: str = "",
        wiping_delay: float = DEFAULT_WIPING_DELAY,
        health_callback: HealthCallback | None = None,
        health_retry_period: float = HEALTH_RETRY_PERIOD,
        health_ended_callback: HealthEndedCallback | None = None,
        scheduler: Scheduler | None = None,
        use_inotify: bool = True,
        poll_interval: float = 0.05,
        reconcile_period: float = RECONCILE_PERIOD,
        version: KubeletVersion | None = None,
    ) -> None:
        self.registry_dir = os.fspath(registry_dir)
        recorder = recorder if recorder is not None else NullRecorder()
        self._started = False
        self.manager = DRAPluginManager(
            clock=clock,
            recorder=recorder,
            metrics=metrics,
            services=services,
            call_timeout=call_timeout,
            node_name=node_name,
            slice_wiper=slice_wiper,
            wiping_delay=wiping_delay,
            scheduler=scheduler,
            health_callback=health_callback,
            health_retry_period=health_retry_period,
            health_ended_callback=health_ended_callback,
            version=version,
        )
        self.reconciler = Reconciler(
            {DRA_PLUGIN_TYPE: self.manager}, clock=clock, recorder=recorder, period=reconcile_period
        )
        self.watcher = PluginWatcher(
            self.registry_dir, self.reconciler, use_inotify=use_inotify, poll_interval=poll_interval
        )

    def start(self) -> None:
        """Create/scan the directory and start watching and registering."""
        self.reconciler.start()
        self.watcher.start()
        self._started = True

    def stop(self) -> None:
        """Stop watching, then close every plugin connection and cancel timers."""
        if self._started:
            self.watcher.stop()
            self.reconciler.stop()
        self.manager.stop()
        self._started = False

    def __enter__(self) -> PluginHost:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def sync(self, timeout: float = 5.0) -> bool:
        """Rescan the directory and wait for the resulting registrations to finish."""
        self.watcher.rescan()
        return self.reconciler.sync(timeout)

    def wait_registered(
        self, driver_name: str, timeout: float = 10.0, *, endpoint: str | None = None, connected: bool = False
    ) -> bool:
        """Wait until the driver has an instance (at ``endpoint``, if given; connected, if asked)."""

        def ready() -> bool:
            return any(
                (endpoint is None or c.endpoint == endpoint) and (not connected or c.connected)
                for c in self.manager.instances(driver_name)
            )

        return self.manager.wait_for(ready, timeout)

    def wait_deregistered(
        self, driver_name: str, timeout: float = 10.0, *, endpoint: str | None = None
    ) -> bool:
        """Wait until the driver has no instance (at ``endpoint``, if given)."""

        def gone() -> bool:
            return not any(
                endpoint is None or c.endpoint == endpoint for c in self.manager.instances(driver_name)
            )

        return self.manager.wait_for(gone, timeout)

    def get_plugin(self, driver_name: str) -> ManagedClient:
        """The instance the kubelet would call (see :meth:`DRAPluginManager.get_plugin`)."""
        return self.manager.get_plugin(driver_name)

    def registered_drivers(self) -> list[str]:
        """Names of drivers with at least one registered instance."""
        return self.manager.drivers()
