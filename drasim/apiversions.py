"""The one table of kubelet plugin gRPC API versions (DRA and device health).

Every place that needs to know which plugin APIs exist reads it: the kubelet version
profiles (:mod:`drasim.profiles`), the plugin client and its protobuf conversion
(:mod:`drasim.plugins`), the fake driver's servicers, the scenario vocabulary and the
runner. Adding a version (say ``v1beta2.DRAPlugin``) is one row here plus its ``.proto``
and generated modules under ``drasim/_proto``; ``tests/unit/test_apiversions.py`` checks
that every consumer derives from the table.

PURE: plain data, no I/O, and no import of grpc or protobuf (the generated modules are
imported when a row's ``messages`` or ``stubs`` is first used), so the kubelet core and the
scenario layer can name services without pulling in the wire code.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType
from typing import Any, Literal

__all__ = [
    "DEFAULT_DRA_SERVICES",
    "DRA_APIS",
    "DRA_SERVICES",
    "DRA_V1",
    "DRA_V1ALPHA4",
    "DRA_V1BETA1",
    "HEALTH_APIS",
    "HEALTH_SERVICES",
    "HEALTH_V1",
    "HEALTH_V1ALPHA1",
    "PluginApi",
    "dra_api",
    "health_api",
]


@dataclass(frozen=True)
class PluginApi:
    """One gRPC API version a kubelet plugin can serve."""

    service: str
    """The name a plugin advertises in ``PluginInfo.supported_versions`` (``"v1.DRAPlugin"``)."""
    kind: Literal["dra", "health"]
    version: str
    """The API version (``"v1alpha4"``), which is not always the prefix of ``service``."""
    proto_package: str
    """The protobuf package the service is declared in."""
    grpc_service: str
    """The service name inside that package (``"DRAPlugin"``; v1alpha4 kept ``"Node"``)."""
    module: str
    """The package of the generated modules (``"drasim._proto.dra.v1"``)."""
    default: bool = False
    """Served by a fake driver and offered by a scenario's kubelet when nothing says otherwise."""
    share_id: bool = False
    """``Device.share_id`` exists (DRA v1 only)."""

    @cached_property
    def messages(self) -> ModuleType:
        """The generated ``api_pb2`` module."""
        return importlib.import_module(f"{self.module}.api_pb2")

    @cached_property
    def stubs(self) -> ModuleType:
        """The generated ``api_pb2_grpc`` module."""
        return importlib.import_module(f"{self.module}.api_pb2_grpc")

    @property
    def path(self) -> str:
        """The gRPC service path, e.g. ``/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin``."""
        return f"/{self.proto_package}.{self.grpc_service}"

    def method_path(self, method: str) -> str:
        """The full gRPC method path, e.g. ``.../DRAPlugin/NodePrepareResources``."""
        return f"{self.path}/{method}"

    def add_servicer(self, servicer: Any, server: Any) -> None:
        """Register ``servicer`` for this service on a ``grpc.Server``."""
        adder: Callable[[Any, Any], None] = getattr(self.stubs, f"add_{self.grpc_service}Servicer_to_server")
        adder(servicer, server)

    def stub(self, channel: Any) -> Any:
        """A client stub for this service on ``channel``."""
        return getattr(self.stubs, f"{self.grpc_service}Stub")(channel)


#: DRA plugin services, newest first.
DRA_APIS: tuple[PluginApi, ...] = (
    PluginApi("v1.DRAPlugin", "dra", "v1", "k8s.io.kubelet.pkg.apis.dra.v1", "DRAPlugin",
              "drasim._proto.dra.v1", default=True, share_id=True),
    PluginApi("v1beta1.DRAPlugin", "dra", "v1beta1", "k8s.io.kubelet.pkg.apis.dra.v1beta1", "DRAPlugin",
              "drasim._proto.dra.v1beta1", default=True),
    # Kubelets 1.31-1.33: advertised as "v1alpha3.NodeService" (upstream's historical misnomer)
    # and served as /v1alpha3.Node, because v1alpha4 kept the v1alpha3 proto package.
    PluginApi("v1alpha3.NodeService", "dra", "v1alpha4", "v1alpha3", "Node",
              "drasim._proto.dra.v1alpha4"),
)  # fmt: skip

#: Device-health services, in the order upstream ``pickHealthService`` prefers them.
HEALTH_APIS: tuple[PluginApi, ...] = (
    PluginApi("v1.DRAResourceHealth", "health", "v1", "v1", "DRAResourceHealth",
              "drasim._proto.drahealth.v1"),
    PluginApi("v1alpha1.DRAResourceHealth", "health", "v1alpha1", "v1alpha1", "DRAResourceHealth",
              "drasim._proto.drahealth.v1alpha1"),
)  # fmt: skip

_BY_SERVICE = {api.service: api for api in (*DRA_APIS, *HEALTH_APIS)}


def _service(kind: str, version: str) -> str:
    """The service name of the row of ``kind`` (dra, health) and proto ``version``."""
    (api,) = [api for api in (*DRA_APIS, *HEALTH_APIS) if api.kind == kind and api.version == version]
    return api.service


# Names for the rows that code must single out (each one documents a quirk that depends on it),
# looked up by kind and version, so reordering the tables cannot swap them.
DRA_V1 = _service("dra", "v1")
DRA_V1BETA1 = _service("dra", "v1beta1")
DRA_V1ALPHA4 = _service("dra", "v1alpha4")
HEALTH_V1 = _service("health", "v1")
HEALTH_V1ALPHA1 = _service("health", "v1alpha1")

#: resource.k8s.io versions drasim knows, newest first (v1alpha3: what kubelet 1.31 reads claims through).
RESOURCE_API_VERSIONS: tuple[str, ...] = ("v1", "v1beta2", "v1beta1", "v1alpha3")
#: The resource.k8s.io versions served by default, and the ones ResourceSlices are read through
#: (newest first; the first served one wins).
DEFAULT_RESOURCE_API_VERSIONS: tuple[str, ...] = RESOURCE_API_VERSIONS[:3]

#: Every DRA service name, newest first.
DRA_SERVICES: tuple[str, ...] = tuple(api.service for api in DRA_APIS)
#: The DRA services served and offered by default.
DEFAULT_DRA_SERVICES: tuple[str, ...] = tuple(api.service for api in DRA_APIS if api.default)
#: Every device-health service name, preferred first.
HEALTH_SERVICES: tuple[str, ...] = tuple(api.service for api in HEALTH_APIS)


def dra_api(service: str) -> PluginApi:
    """The DRA row of an advertised service name; ``KeyError`` for anything else."""
    api = _BY_SERVICE[service]
    if api.kind != "dra":
        raise KeyError(service)
    return api


def health_api(service: str) -> PluginApi:
    """The device-health row of an advertised service name; ``KeyError`` for anything else."""
    api = _BY_SERVICE[service]
    if api.kind != "health":
        raise KeyError(service)
    return api
