"""The API side of the node: the backend's clients, names as the API server has them, fault rules.

:class:`ApiSide` wraps the run's :class:`~drasim.runner.backends.Backend` (drasim's in-memory
store, its HTTP server, or a real cluster) with what the runner, the kubelet and the drivers
need of it: the three API clients, scenario names translated to the API server's (a real
cluster's run namespaces), manifests with ``$(DRIVER)``/``$(NODE)`` filled in, ResourceSlice
publishing and wiping, and API-server fault rules. It never imports the world.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from dataclasses import replace as replace_fields
from typing import Any

from drasim.apiserver import ObjectStore
from drasim.apiserver.port import Cluster
from drasim.apiversions import DEFAULT_RESOURCE_API_VERSIONS
from drasim.errors import ApiError, DrasimError
from drasim.faults import ApiFault, PluginFault, describe, scaled
from drasim.journal import Journal
from drasim.runner.backends import Backend
from drasim.runner.context import StepFailure

__all__ = ["ApiSide", "expand"]

NODE_UID_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")
RESOURCE_V1 = "resource.k8s.io/v1"
SLICE_VERSIONS = DEFAULT_RESOURCE_API_VERSIONS
"""resource.k8s.io versions ResourceSlices are read through, newest first (the first served one wins)."""


@dataclass
class ApiSide:
    """The run's API server as the node sees it."""

    backend: Backend
    journal: Journal
    scenario_name: str
    scenario_node: str
    """The node name the scenario uses (``spec.kubelet.node``)."""
    first_driver: str
    """What ``$(DRIVER)`` stands for."""
    time_scale: float
    """Real seconds per nominal second for fault delays (0: delays vanish)."""
    runner_api: Cluster = field(init=False)
    """The runner's client (creates pods, claims, the scenario's objects)."""
    kubelet_api: Cluster = field(init=False)
    """The kubelet's client (reads claims through its version's resource API)."""
    driver_api: Cluster = field(init=False)
    """The drivers' shared client."""
    _uids: Iterator[int] = field(default_factory=itertools.count, init=False)

    def __post_init__(self) -> None:
        self.runner_api = self.backend.runner_api
        self.kubelet_api = self.backend.kubelet_api
        self.driver_api = self.backend.driver_api

    @property
    def node(self) -> str:
        """The node name (on a real cluster, the run's fake node)."""
        return self.backend.node

    @property
    def store(self) -> ObjectStore:
        """drasim's own object store (fault rules live here); a DrasimError on a real cluster."""
        if self.backend.store is None:
            msg = f"the {self.backend.name} backend has no drasim object store (API server faults need one)"
            raise DrasimError(msg)
        return self.backend.store

    def new_uid(self, kind: str, name: str) -> str:
        """A deterministic, unique UID for an object the runner creates."""
        return str(uuid.uuid5(NODE_UID_NAMESPACE, f"{self.scenario_name}/{kind}/{name}/{next(self._uids)}"))

    def create_node(self) -> None:
        """The Node object of drasim's own API server."""
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": self.node, "labels": {"kubernetes.io/hostname": self.node}},
            "spec": {},
        }
        self.runner_api.create(node)

    def expand(self, obj: Any) -> Any:
        """Replace ``$(DRIVER)`` and ``$(NODE)`` in every string of a manifest.

        ``$(DRIVER)`` is the first driver's name: the ``--driver-name`` of a driver
        command that replaced it, else the scenario's.
        """
        return expand(obj, self.first_driver, self.node)

    def manifest(self, obj: Any) -> Any:
        """A scenario manifest as the API server gets it: placeholders expanded, then relocated
        by the backend (on a real cluster: the run's namespaces and names)."""
        expanded = self.expand(obj)
        return self.backend.relocate(expanded) if isinstance(expanded, dict) else expanded

    def node_name(self, name: str) -> str:
        """The API-server name of a node the scenario names (the run's node for the scenario's own)."""
        if name in (self.node, self.scenario_node):
            return self.node
        return self.backend.node_name(name)

    def namespace(self, namespace: str) -> str:
        """The API-server namespace of a namespace the scenario names."""
        return self.backend.namespace(namespace)

    def plugin_fault(self, fault: PluginFault) -> PluginFault:
        """A plugin fault rule whose ``claim`` names the claim as the API server does."""
        if not fault.claim:
            return fault
        namespace, _, name = fault.claim.rpartition("/")
        return replace_fields(fault, claim=f"{self.namespace(namespace or 'default')}/{name}")

    def add_api_fault(self, fault: ApiFault) -> None:
        """Install one ``ApiFault`` rule on the object store, its delay scaled to real seconds."""
        rule = scaled(fault, self.time_scale)
        if not rule.effective:  # only a delay, and time scale 0
            self.journal.record(
                "fault", where="apiserver", description="no effect at time scale 0", spec=rule
            )
            return
        installed = self.store.faults.add(rule)
        self.journal.record("fault", where="apiserver", description=describe(installed), spec=installed)

    def driver_client(self, driver: str) -> Cluster:
        """The API client of in-process fake ``driver``: calls are journaled under its name.

        Faults aimed at ``client: driver`` hit it all the same (every client name other than
        kubelet and runner is a driver), and the report draws its calls on its own lifeline.
        """
        if driver in ("kubelet", "runner", "driver"):
            return self.driver_api
        return self.backend.driver_client(driver)

    def publisher(self, driver: str) -> Callable[[list[dict[str, Any]]], None]:
        """Make the API server hold exactly ``slices`` for (driver, this node), like a slice controller."""
        api = self.driver_client(driver)

        def publish(slices: list[dict[str, Any]]) -> None:
            selector = f"spec.driver={driver},spec.nodeName={self.node}"
            with contextlib.suppress(ApiError):  # slices already as desired are kept, as a controller does
                have = api.list(RESOURCE_V1, "ResourceSlice", field_selector=selector)
                if _specs(have) == _specs(slices):
                    return
            with contextlib.suppress(ApiError):
                api.delete_collection(RESOURCE_V1, "ResourceSlice", field_selector=selector)
            for item in slices:
                api.create(item)

        return publish

    def list_slices(self, selector: str) -> list[dict[str, Any]]:
        """ResourceSlices matching a field selector, read from the store (no journaled call, no faults)."""
        store = self.backend.store  # None on a real cluster: read through the API then
        last: ApiError | None = None
        for version in SLICE_VERSIONS:
            api_version = f"resource.k8s.io/{version}"
            try:
                if store is not None:
                    rtype, served = store.registry.by_kind(api_version, "ResourceSlice")
                    items, _ = store.list(rtype, served, field_selector=selector)
                    return list(items)
                return list(self.runner_api.list(api_version, "ResourceSlice", field_selector=selector))
            except ApiError as err:
                last = err
        raise StepFailure(f"cannot list ResourceSlices: {last}")

    # SliceWiper port, used by the kubelet's plugin manager.
    def delete_resource_slices(self, node_name: str, driver_name: str | None) -> None:
        """DeleteCollection of the node's (driver's) ResourceSlices, as the kubelet does."""
        selector = f"spec.nodeName={node_name}"
        if driver_name:
            selector += f",spec.driver={driver_name}"
        self.kubelet_api.delete_collection(RESOURCE_V1, "ResourceSlice", field_selector=selector)


def expand(obj: Any, driver: str, node: str) -> Any:
    """``obj`` with ``$(DRIVER)`` and ``$(NODE)`` replaced in every string."""
    if isinstance(obj, str):
        return obj.replace("$(DRIVER)", driver).replace("$(NODE)", node)
    if isinstance(obj, list):
        return [expand(item, driver, node) for item in obj]
    if isinstance(obj, dict):
        return {key: expand(value, driver, node) for key, value in obj.items()}
    return obj


def _specs(slices: list[dict[str, Any]]) -> list[str]:
    """The slices' specs in a canonical, order-independent form."""
    return sorted(json.dumps(item.get("spec"), sort_keys=True) for item in slices)
