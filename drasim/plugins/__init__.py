"""The kubelet side of the DRA plugin protocol.

Start with :class:`PluginHost` (see :mod:`drasim.plugins.host`): it watches a plugin
registry directory, performs the registration handshake and hands out gRPC
clients for the registered drivers through :meth:`PluginHost.get_plugin` or
``PluginHost.manager`` (a :class:`drasim.interfaces.DriverDirectory`).

Modules: ``client`` (gRPC DriverClient), ``conversion`` (protobuf <-> values),
``registration`` (handshake), ``reconciler`` (desired vs actual, retries),
``watcher`` + ``inotify`` (directory watching), ``manager`` (DRAPluginManager,
slice wiping), ``health`` (NodeWatchResources streams), ``timers``.
"""

from __future__ import annotations

from drasim.plugins.client import DEFAULT_CALL_TIMEOUT, GrpcDriverClient
from drasim.plugins.health import DeviceHealthReport, HealthCallback, pick_health_service
from drasim.plugins.host import PluginHost
from drasim.plugins.manager import (
    SERVICES_SUPPORTED_BY_KUBELET,
    DRAPluginManager,
    PluginRegistrationError,
    SliceWiper,
    validate_supported_services,
)
from drasim.plugins.registration import RegistrationFailedError
from drasim.plugins.timers import ManualScheduler, ThreadScheduler

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "SERVICES_SUPPORTED_BY_KUBELET",
    "DRAPluginManager",
    "DeviceHealthReport",
    "GrpcDriverClient",
    "HealthCallback",
    "ManualScheduler",
    "PluginHost",
    "PluginRegistrationError",
    "RegistrationFailedError",
    "SliceWiper",
    "ThreadScheduler",
    "pick_health_service",
    "validate_supported_services",
]
