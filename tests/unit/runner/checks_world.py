"""A small stand-in for the runner's World, for the expectation-check unit tests.

It has the attributes the checks read: a real Journal (events recorded by hand), a
real checkpoint file, a real CDI directory, real Metrics and a real object store,
plus fakes of the kubelet manager and plugin host.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from drasim.apiserver import MemoryCluster, ObjectStore
from drasim.errors import KubeletError
from drasim.journal import Journal
from drasim.metrics import Metrics
from drasim.profiles import KubeletVersion, profile
from drasim.runner.context import StepContext
from drasim.runner.health import DeviceHealth
from drasim.runner.pods import PodRecord, pod_claims
from drasim.scenario.steps import Container, ContainerClaim
from drasim.state import ClaimInfoState

DRA = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/"
REG = "/pluginregistration.Registration/"
HEALTH = "/v1.DRAResourceHealth/"
GPU = "gpu.example.com"
NIC = "nic.example.com"


@dataclass
class FakeManager:
    """The kubelet DRA manager calls the checks make."""

    resources: dict[tuple[str, str], list[tuple[str, ...]]] = field(default_factory=dict)
    """(pod uid, container) -> CDI IDs per device; a missing key raises like GetResources."""
    might_unprepare: set[str] = field(default_factory=set)
    claims: dict[str, ClaimInfoState] = field(default_factory=dict)

    def get_resources(self, pod: dict[str, Any], container: str) -> list[str]:
        return [cdi_id for group in self.get_resources_by_device(pod, container) for cdi_id in group]

    def get_resources_by_device(self, pod: dict[str, Any], container: str) -> list[tuple[str, ...]]:
        key = (pod["metadata"]["uid"], container)
        if key not in self.resources:
            msg = f"unable to get claim info for claim of pod {pod['metadata']['name']}"
            raise KubeletError(msg)
        return list(self.resources[key])

    def pod_might_need_to_unprepare_resources(self, uid: str) -> bool:
        return uid in self.might_unprepare

    def claim_info(self, namespace: str, name: str) -> ClaimInfoState | None:
        return self.claims.get(f"{namespace}/{name}")


@dataclass
class FakeClient:
    endpoint: str
    connected: bool = True


@dataclass
class FakePluginManager:
    clients: dict[str, list[FakeClient]] = field(default_factory=dict)
    services: dict[tuple[str, str], str] = field(default_factory=dict)

    def instances(self, driver: str) -> list[FakeClient]:
        return list(self.clients.get(driver, []))

    def service_of(self, driver: str, endpoint: str) -> str | None:
        return self.services.get((driver, endpoint))

    def health_stream(self, driver: str, endpoint: str) -> Any:
        return None


@dataclass
class FakeKubelet:
    """The running kubelet as the checks see it (the slot's Kubelet protocol), over the two fakes."""

    manager: FakeManager
    plugins: FakePluginManager

    def get_resources_by_device(self, pod: dict[str, Any], container: str) -> list[tuple[str, ...]]:
        return self.manager.get_resources_by_device(pod, container)

    def pod_might_need_to_unprepare_resources(self, uid: str) -> bool:
        return self.manager.pod_might_need_to_unprepare_resources(uid)

    def claim_info(self, namespace: str, name: str) -> ClaimInfoState | None:
        return self.manager.claim_info(namespace, name)

    def instances(self, driver: str) -> list[FakeClient]:
        return self.plugins.instances(driver)

    def service_of(self, driver: str, endpoint: str) -> str | None:
        return self.plugins.service_of(driver, endpoint)

    def health_service(self, driver: str, endpoint: str) -> str:
        return ""


@dataclass
class FakeApi:
    """The world's API side: drasim's own store, names unchanged."""

    store: ObjectStore
    runner_api: MemoryCluster

    @property
    def backend(self) -> Any:
        return SimpleNamespace(store=self.store)  # the in-memory backend: drasim's store

    def namespace(self, namespace: str) -> str:
        return namespace

    def node_name(self, name: str) -> str:
        return name

    def list_slices(self, selector: str) -> list[dict[str, Any]]:
        rtype, served = self.store.registry.by_kind("resource.k8s.io/v1", "ResourceSlice")
        items, _ = self.store.list(rtype, served, field_selector=selector)
        return list(items)


@dataclass
class FakeFleet:
    drivers: dict[str, Any] = field(default_factory=dict)

    def driver(self, name: str = "") -> Any:
        return self.drivers[name] if name else next(iter(self.drivers.values()))

    def wait_republished_slices(self) -> None:
        """No driver process: no slices to wait for."""


@dataclass
class FakeWorld:
    root: Path
    journal: Journal = field(default_factory=Journal)
    metrics: Metrics = field(default_factory=Metrics)
    store: ObjectStore = field(default_factory=ObjectStore)
    pods: dict[str, PodRecord] = field(default_factory=dict)
    clock: Any = field(default_factory=lambda: SimpleNamespace(now=0.0))
    node: str = "node-1"
    kubelet: Any = None
    manager: FakeManager = field(default_factory=FakeManager)
    plugins: FakePluginManager = field(default_factory=FakePluginManager)
    version: KubeletVersion = field(default_factory=profile)

    def __post_init__(self) -> None:
        self.workspace = SimpleNamespace(
            checkpoint_path=self.root / "kubelet" / "dra_manager_state", cdi_dir=self.root / "cdi"
        )
        self.workspace.cdi_dir.mkdir(parents=True)
        self.runner_api = MemoryCluster(self.store, client="runner")
        self.api = FakeApi(self.store, self.runner_api)
        self.fleet = FakeFleet({GPU: SimpleNamespace(name=GPU)})
        self.health = DeviceHealth(lambda: self.clock.now, lambda: self.version, self.journal)
        self.start_kubelet()

    def start_kubelet(self) -> None:
        self.kubelet = FakeKubelet(self.manager, self.plugins)

    def stop_kubelet(self) -> None:
        self.kubelet = None

    # -- helpers to set the scene ------------------------------------------------------

    def add_pod(
        self,
        name: str,
        claims: list[str],
        *,
        phase: str = "Running",
        containers: list[Container] | None = None,
    ) -> PodRecord:
        namespace, _, short = name.rpartition("/")
        namespace = namespace or "default"
        record = PodRecord(
            name=short,
            namespace=namespace,
            uid=f"uid-{short}",
            claims=pod_claims(list(claims)),
            containers=containers or [Container(name="ctr", claims=[ContainerClaim(name=c) for c in claims])],
            phase=phase,
        )
        self.pods[record.key] = record
        return record

    def kubelet_call(
        self,
        method: str,
        claims: list[str] = (),  # type: ignore[assignment]
        *,
        driver: str = GPU,
        code: str = "OK",
        response: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        """A kubelet-side rpc event; claims are ``ns/name`` (uid ``uid-<name>``)."""
        refs = [
            {"namespace": c.split("/")[0], "uid": f"uid-{c.split('/')[1]}", "name": c.split("/")[1]}
            for c in claims
        ]
        self.journal.record(
            "rpc",
            side="kubelet",
            driver=driver,
            endpoint=f"/plugins/{driver}/dra.sock",
            method=(REG if method in ("GetInfo", "NotifyRegistrationStatus") else DRA) + method,
            request={"claims": refs},
            response=response,
            code=code,
            error=error,
            duration=0.001,
        )

    def plugin_call(self, method: str, *, driver: str = GPU, code: str = "OK", stream: bool = False) -> None:
        """A plugin-side rpc event as the fake plugin journals it."""
        prefix = {"GetInfo": REG, "NotifyRegistrationStatus": REG, "NodeWatchResources": HEALTH}.get(
            method, DRA
        )
        self.journal.record(
            "rpc",
            side="plugin",
            seq=1,
            driver=driver,
            method=prefix + method,
            request={},
            response={} if code == "OK" else None,
            code=code,
            details="",
            start=0.0,
            duration=0.0,
            stream=stream,
        )

    def kubelet_op(self, operation: str, error: str | None = None, pod: str = "", pod_uid: str = "") -> None:
        fields: dict[str, Any] = {"operation": operation, "error": error}
        if pod:
            fields["pod"] = pod
        if pod_uid:
            fields["pod_uid"] = pod_uid
        self.journal.record("kubelet", **fields)


def prepare_reply(claim: str, devices: list[dict[str, Any]], error: str = "") -> dict[str, Any]:
    """A kubelet-side journal form of a NodePrepareResources reply for one claim."""
    name = claim.split("/")[1]
    return {"claims": {f"uid-{name}": {"devices": devices, "error": error}}}


def device(name: str, cdi: str | None = None, pool: str = "pool-a") -> dict[str, Any]:
    return {
        "request_names": ["req-0"],
        "pool_name": pool,
        "device_name": name,
        "cdi_device_ids": [cdi or f"{GPU}/gpu={name}"],
    }


def context(name: str, index: int = 5, **marks: int) -> StepContext:
    """A step context: steps 0-4 were startPod, <name>, mark, deletePod, <name>."""
    names = ["startPod", name, "mark", "deletePod", name]
    return StepContext(
        index=index, name=name, step_marks=[0, 2, 4, 6, 8], step_names=names, marks=dict(marks)
    )
