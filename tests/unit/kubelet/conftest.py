"""In-memory test doubles for the kubelet core's ports, and builders for pods and claims.

Tests reach everything through two fixtures (pytest's importlib mode keeps test
modules from importing helpers): ``kit`` (builders, fakes, the upstream test
constants) and ``harness`` (a :class:`Harness` with one registered driver).
The constants are those of upstream's manager_test.go / claiminfo_test.go.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from drasim.clock import VirtualClock
from drasim.errors import (
    ApiError,
    CheckpointError,
    CorruptCheckpointError,
    DriverNotRegisteredError,
)
from drasim.kubelet.claiminfo import ClaimInfo
from drasim.kubelet.features import FeatureGates
from drasim.kubelet.manager import Manager
from drasim.metrics import Metrics
from drasim.state import ClaimInfoState, Device, DriverState
from drasim.values import ClaimRef, PrepareResult, UnprepareResult

NAMESPACE = "test-namespace"
DRIVER = "test-driver"
POOL = "test-pool"
DEVICE = "test-device"
REQUEST = "test-request"
REQUEST2 = "test-request-2"
CLAIM = "test-claim"
CLAIM_UID = "test-claim-uid"
POD = "test-pod"
POD_UID = "test-pod-uid"
CONTAINER = "test-container"
POD_GROUP = "test-podgroup"
CDI_ID = "test-driver/test=cdi-test-device"
EXT_REQUEST = "container-0-request-0"
SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"


class FakeClaimReader:
    """ClaimReader over a dict; a missing claim is a 404 ApiError as a real server gives."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.gets: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def add(self, claim: dict[str, Any]) -> None:
        meta = claim["metadata"]
        self.objects[(meta["namespace"], meta["name"])] = claim

    def get_resource_claim(self, namespace: str, name: str) -> dict[str, Any]:
        with self._lock:
            self.gets.append((namespace, name))
            claim = self.objects.get((namespace, name))
        if claim is None:
            raise ApiError.not_found("resourceclaims.resource.k8s.io", name)
        return copy.deepcopy(claim)


PrepareScript = Callable[[Sequence[ClaimRef]], Mapping[str, PrepareResult | None]]
UnprepareScript = Callable[[Sequence[ClaimRef]], Mapping[str, UnprepareResult | None]]


class FakeDriverClient:
    """A scripted plugin instance that records every call.

    By default every requested claim succeeds with one device
    (test-pool/test-device, request names [claim name], CDI ID
    ``<driver>/test=claim-<uid>``) and every unprepare succeeds with an empty entry.
    Set ``prepare_script`` / ``unprepare_script`` to a function or an exception.
    """

    def __init__(self, driver_name: str = DRIVER, endpoint: str = "/plugins/test/dra.sock") -> None:
        self._driver_name = driver_name
        self._endpoint = endpoint
        self.prepare_calls: list[list[ClaimRef]] = []
        self.unprepare_calls: list[list[ClaimRef]] = []
        self.prepare_script: PrepareScript | Exception | None = None
        self.unprepare_script: UnprepareScript | Exception | None = None
        self._lock = threading.Lock()

    @property
    def driver_name(self) -> str:
        return self._driver_name

    @property
    def endpoint(self) -> str:
        return self._endpoint

    def default_device(self, claim: ClaimRef) -> Device:
        return Device(
            pool_name=POOL,
            device_name=DEVICE,
            request_names=(claim.name,),
            cdi_device_ids=(f"{self._driver_name}/test=claim-{claim.uid}",),
        )

    def node_prepare_resources(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult | None]:
        with self._lock:
            self.prepare_calls.append(list(claims))
        script = self.prepare_script
        if isinstance(script, Exception):
            raise script
        if script is not None:
            return script(claims)
        return {c.uid: PrepareResult(devices=(self.default_device(c),)) for c in claims}

    def node_unprepare_resources(self, claims: Sequence[ClaimRef]) -> Mapping[str, UnprepareResult | None]:
        with self._lock:
            self.unprepare_calls.append(list(claims))
        script = self.unprepare_script
        if isinstance(script, Exception):
            raise script
        if script is not None:
            return script(claims)
        return {c.uid: UnprepareResult() for c in claims}


class FakeDriverDirectory:
    """DriverDirectory over a dict, with upstream's "not registered" error."""

    def __init__(self) -> None:
        self.plugins: dict[str, FakeDriverClient] = {}

    def register(self, client: FakeDriverClient) -> FakeDriverClient:
        self.plugins[client.driver_name] = client
        return client

    def get_plugin(self, driver_name: str) -> FakeDriverClient:
        client = self.plugins.get(driver_name)
        if client is None:
            raise DriverNotRegisteredError(driver_name)
        return client


class MemoryCheckpointStore:
    """CheckpointStore in memory; ``corrupt`` and ``fail_store`` inject faults."""

    def __init__(self) -> None:
        self.entries: list[ClaimInfoState] | None = None  # None = no file yet
        self.writes: list[list[ClaimInfoState]] = []
        self.corrupt = False
        self.fail_store = False
        self._lock = threading.Lock()

    def get_or_create(self) -> list[ClaimInfoState]:
        if self.corrupt:
            raise CorruptCheckpointError("checkpoint is corrupted")
        with self._lock:
            if self.entries is None:
                self.entries = []
            return [entry.clone() for entry in self.entries]

    def store(self, entries: Sequence[ClaimInfoState]) -> None:
        if self.fail_store:
            raise CheckpointError("could not save checkpoint dra_manager_state: disk full")
        with self._lock:
            self.entries = [entry.clone() for entry in entries]
            self.writes.append([entry.clone() for entry in entries])

    def entry(self, namespace: str, name: str) -> ClaimInfoState | None:
        return next(
            (e for e in self.entries or [] if (e.namespace, e.claim_name) == (namespace, name)),
            None,
        )


class ListRecorder:
    """Recorder that keeps every event."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def record(self, kind: str, **fields: Any) -> None:
        with self._lock:
            self.events.append((kind, fields))


def make_pod(
    name: str = POD,
    uid: str = POD_UID,
    claims: Sequence[str] = (CLAIM,),
    *,
    namespace: str = NAMESPACE,
    container_claims: Sequence[dict[str, str]] | None = None,
    template: bool = False,
    statuses: Sequence[dict[str, Any]] | None = None,
    pod_group: str | None = None,
    extended: dict[str, Any] | None = None,
    requests: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A pod whose spec.resourceClaims name ``claims`` (directly, or through templates)."""
    pod_claims = [
        {"name": c, "resourceClaimTemplateName": f"{c}-template"}
        if template
        else {"name": c, "resourceClaimName": c}
        for c in claims
    ]
    resources: dict[str, Any] = {
        "claims": list(container_claims) if container_claims is not None else [{"name": c} for c in claims]
    }
    if requests is not None:
        resources["requests"] = requests
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid},
        "spec": {"resourceClaims": pod_claims, "containers": [{"name": CONTAINER, "resources": resources}]},
        "status": {},
    }
    if statuses is not None:
        pod["status"]["resourceClaimStatuses"] = list(statuses)
    if pod_group is not None:
        pod["spec"]["schedulingGroup"] = {"podGroupName": pod_group}
    if extended is not None:
        pod["status"]["extendedResourceClaimStatus"] = extended
    return pod


def make_claim(
    name: str = CLAIM,
    driver: str | Sequence[str] = DRIVER,
    reserved_for: Sequence[str | dict[str, Any]] = (POD_UID,),
    *,
    namespace: str = NAMESPACE,
    uid: str | None = None,
    allocated: bool = True,
    owner: dict[str, Any] | None = None,
    request: str = REQUEST,
) -> dict[str, Any]:
    """An allocated claim (UID ``<name>-uid``) with one result per driver, reserved for pods."""
    drivers = [driver] if isinstance(driver, str) else list(driver)
    status: dict[str, Any] = {
        "reservedFor": [
            {"resource": "pods", "uid": r, "name": ""} if isinstance(r, str) else r for r in reserved_for
        ]
    }
    if allocated:
        results = [{"request": request, "driver": d, "pool": POOL, "device": DEVICE} for d in drivers]
        status["allocation"] = {"devices": {"results": results}}
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"{name}-uid"}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": [{"name": request, "exactly": {"deviceClassName": "test-class"}}]}},
        "status": status,
    }


def make_claim_info(
    uid: str = CLAIM_UID,
    pod_uids: Sequence[str] = (),
    *,
    prepared: bool = False,
    name: str = CLAIM,
    driver: str = DRIVER,
    request_names: tuple[str, ...] | None = (REQUEST,),
    cdi_id: str = CDI_ID,
    share_id: str | None = None,
) -> ClaimInfo:
    """Upstream's genTestClaimInfo: one device with one CDI ID."""
    device = Device(POOL, DEVICE, request_names=request_names, cdi_device_ids=(cdi_id,), share_id=share_id)
    return ClaimInfo(
        claim_uid=uid,
        claim_name=name,
        namespace=NAMESPACE,
        pod_uids=set(pod_uids),
        driver_state={driver: DriverState(devices=[device])},
        prepared=prepared,
    )


class Harness:
    """A Manager wired to the fakes; :meth:`restart` builds a new one on the same checkpoint."""

    def __init__(self, *, gates: FeatureGates | None = None, with_driver: bool = True) -> None:
        self.claims = FakeClaimReader()
        self.drivers = FakeDriverDirectory()
        self.checkpoint = MemoryCheckpointStore()
        self.clock = VirtualClock()
        self.recorder = ListRecorder()
        self.metrics = Metrics()
        self.gates = gates or FeatureGates()
        self.hook_points: list[str] = []
        self.crash_at: str | None = None
        self.driver = self.drivers.register(FakeDriverClient()) if with_driver else None
        self.manager = self.new_manager()

    def hook(self, point: str) -> None:
        self.hook_points.append(point)
        self.clock.advance(0.25)
        if point == self.crash_at:
            raise SimulatedCrashError(point)

    def new_manager(self) -> Manager:
        return Manager(
            claims=self.claims,
            drivers=self.drivers,
            checkpoint=self.checkpoint,
            clock=self.clock,
            recorder=self.recorder,
            metrics=self.metrics,
            hooks=self.hook,
            feature_gates=self.gates,
        )

    def restart(self) -> Manager:
        self.crash_at = None
        self.metrics = Metrics()
        self.manager = self.new_manager()
        return self.manager

    def add_info(self, info: ClaimInfo) -> None:
        with self.manager.cache.write_locked():
            self.manager.cache.add(info)

    def prepare_count(self) -> int:
        return sum(len(c.prepare_calls) for c in self.drivers.plugins.values())

    def unprepare_count(self) -> int:
        return sum(len(c.unprepare_calls) for c in self.drivers.plugins.values())


class SimulatedCrashError(Exception):
    """Raised by the harness hook to emulate a kubelet crash at a named point."""


class Kit:
    """What tests need from this module (fixtures are the only way in under importlib mode)."""

    NAMESPACE = NAMESPACE
    DRIVER = DRIVER
    POOL = POOL
    DEVICE = DEVICE
    REQUEST = REQUEST
    REQUEST2 = REQUEST2
    CLAIM = CLAIM
    CLAIM_UID = CLAIM_UID
    POD = POD
    POD_UID = POD_UID
    CONTAINER = CONTAINER
    POD_GROUP = POD_GROUP
    CDI_ID = CDI_ID
    EXT_REQUEST = EXT_REQUEST
    SHARE_ID = SHARE_ID
    pod = staticmethod(make_pod)
    claim = staticmethod(make_claim)
    claim_info = staticmethod(make_claim_info)
    Harness = Harness
    SimulatedCrashError = SimulatedCrashError
    FakeDriverClient = FakeDriverClient
    MemoryCheckpointStore = MemoryCheckpointStore


@pytest.fixture
def kit() -> type[Kit]:
    return Kit


@pytest.fixture
def harness() -> Harness:
    return Harness()
