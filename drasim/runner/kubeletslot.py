"""The kubelet slot: the one seam between the runner and a kubelet implementation.

The runner, the pod worker, the step handlers and the expectations talk to the node's kubelet
only through :class:`Kubelet`, a protocol whose methods are the emulated manager's own
(:class:`drasim.kubelet.manager.Manager`) plus the plugin-registration and timer calls the
runner makes. :class:`drasim.runner.emulated.EmulatedKubelet` is today's implementation
(drasim's Python port of the DRA manager with its plugin host); another one (say upstream's
Go manager driven out of process) is one new class implementing :class:`Kubelet` and one row
in :data:`drasim.runner.kubelets.KUBELET_IMPLEMENTATIONS`, started by a
:class:`KubeletFactory` from a :class:`KubeletNode` (everything a kubelet gets from the node).

What only the emulation can do is a *capability* (:data:`CAPABILITIES`): a kubelet lists
what it offers in ``capabilities`` and the optional calls return ``None`` where it does not.
A step that needs a missing capability raises :class:`Unsupported`, which the runner reports
as a skipped scenario naming the reason ("not comparable"), never as a crash.

:class:`KubeletSlot` is the world's part that holds the running kubelet (or none), starts
and stops it, switches versions and arms crash points. It never imports the world.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from drasim.clock import ScaledClock
from drasim.errors import DrasimError, KubeletError
from drasim.journal import Journal
from drasim.kubelet.claiminfo import ClaimInfo
from drasim.metrics import Metrics
from drasim.profiles import KubeletVersion
from drasim.profiles import profile as version_profile
from drasim.state import ClaimInfoState

__all__ = [
    "CAPABILITIES",
    "CRASH_POINTS",
    "HEALTH_STREAMS",
    "SCALED_RECONNECT",
    "SERVICE_NARROWING",
    "WATCHER_PAUSE",
    "Kubelet",
    "KubeletFactory",
    "KubeletImplementation",
    "KubeletNode",
    "KubeletSlot",
    "SimulatedCrash",
    "Unsupported",
    "effective_services",
]

CRASH_POINTS = "crash-points"
"""The kubelet can die at a named hook point inside an operation (``restartKubelet: {crashAt}``)."""
WATCHER_PAUSE = "watcher-pause"
"""The kubelet's registry scan can be held while a killed fake driver's sockets are swapped."""
HEALTH_STREAMS = "health-streams"
"""The kubelet exposes its open health streams (to wait until a stopped driver's stream ended)."""
SERVICE_NARROWING = "service-narrowing"
"""The kubelet can offer plugins fewer DRA services than its version has (a scenario's
``kubelet.services``, a drasim profile knob upstream's kubelet has no setting for)."""
SCALED_RECONNECT = "scaled-reconnect"
"""The kubelet's gRPC client retries a refused connection on the scenario's clock. Upstream's
client (grpc-go, ``backoff.DefaultConfig``: 1 s base delay, growing 1.6 times per failure) waits
real seconds before it dials a refused socket again and fails every call meanwhile with the last
dial error, so a scenario that serves a refused socket again and retries within scaled time
cannot be compared; the gRPC library's backoff is not the DRA manager's behaviour."""
CAPABILITIES = (CRASH_POINTS, WATCHER_PAUSE, HEALTH_STREAMS, SERVICE_NARROWING, SCALED_RECONNECT)
"""Every optional capability a kubelet implementation may offer."""


class Unsupported(DrasimError):  # noqa: N818 - a verdict on the scenario, not an error of drasim
    """A step needs a capability the kubelet in the slot lacks: the scenario is not comparable."""

    def __init__(self, what: str, capability: str, implementation: str) -> None:
        super().__init__(
            f"not comparable: {what} needs the kubelet capability {capability!r}, "
            f"which the {implementation} kubelet does not offer"
        )
        self.capability = capability


class SimulatedCrash(Exception):  # noqa: N818 - it is an event, not an error
    """Raised from a kubelet hook to make the kubelet die at that point."""

    def __init__(self, point: str) -> None:
        super().__init__(f"kubelet crashed at {point}")
        self.point = point


class Kubelet(Protocol):
    """A running kubelet, as the runner drives it (see the module docstring)."""

    # The DRA manager (names as upstream's Manager and drasim's emulation have them).
    def prepare_resources(self, pod: Mapping[str, Any]) -> None:
        """PrepareResources for the pod manifest; raises KubeletError with the kubelet's text."""
        ...

    def unprepare_resources(self, pod: Mapping[str, Any]) -> None:
        """UnprepareResources for the pod manifest; raises KubeletError with the kubelet's text."""
        ...

    def reconcile(self, active_pod_uids: Collection[str]) -> dict[str, str | None]:
        """One reconcile pass: pod UID -> error text (None: unprepared) for each inactive pod."""
        ...

    def get_resources_by_device(
        self, pod: Mapping[str, Any], container: Mapping[str, Any] | str
    ) -> list[tuple[str, ...]]:
        """The container's CDI device IDs, grouped per prepared device."""
        ...

    def claim_info(self, namespace: str, name: str) -> ClaimInfo | None:
        """A copy of one cached claim info, or None."""
        ...

    def claim_infos(self) -> list[ClaimInfoState]:
        """The claim-info cache as checkpointable states, sorted by namespace/name."""
        ...

    def is_prepared(self, namespace: str, name: str) -> bool:
        """Whether the claim is cached and marked prepared."""
        ...

    def pod_might_need_to_unprepare_resources(self, pod_uid: str) -> bool:
        """PodMightNeedToUnprepareResources."""
        ...

    # Plugin registration.
    def sync_registrations(self, timeout: float) -> bool:
        """Rescan the plugin registry and wait for the registrations it causes; False on timeout."""
        ...

    def instances(self, driver: str) -> Sequence[Any]:
        """The registered instances of ``driver`` (each with ``endpoint`` and ``connected``), oldest first."""
        ...

    def service_of(self, driver: str, endpoint: str) -> str | None:
        """The DRA service the kubelet chose for an instance."""
        ...

    def health_service(self, driver: str, endpoint: str) -> str:
        """The service of the instance's health stream ('' when none is open)."""
        ...

    def wait_registered(
        self, driver: str, *, timeout: float, endpoint: str | None = None, connected: bool = False
    ) -> bool:
        """Wait until ``driver`` has an instance (at ``endpoint``; connected, if asked)."""
        ...

    # Time: the kubelet's own timers (slice wipes, registration retries, health re-opens).
    def pending_timers(self) -> list[float]:
        """Real seconds from now until each pending timer, soonest first."""
        ...

    def advance_timers(self, seconds: float) -> None:
        """Move the kubelet's timer clock ``seconds`` (real) ahead, firing what falls due."""
        ...

    # Lifetime.
    def start(self) -> None:
        """Start watching the plugin registry (the kubelet has loaded its checkpoint already)."""
        ...

    def stop(self) -> None:
        """Stop: memory is lost; the checkpoint file, sockets and drivers stay."""
        ...

    # Optional capabilities: None where the implementation does not offer them.
    def paused_watcher(self) -> contextlib.AbstractContextManager[None] | None:
        """(:data:`WATCHER_PAUSE`) a context that holds registry scans."""
        ...

    def health_streams(self, driver: str) -> list[Any] | None:
        """(:data:`HEALTH_STREAMS`) the open health streams of ``driver`` (each has ``wait_idle``)."""
        ...


@dataclass(frozen=True)
class KubeletNode:
    """What a kubelet gets from the node it runs on."""

    registry_dir: Path
    checkpoint_path: Path
    node_name: str
    version: KubeletVersion
    services: list[str]
    """The DRA services it offers plugins."""
    timers: Any
    """The scenario's kubelet timers (``call_timeout``, ``wiping_delay``, ...; nominal seconds)."""
    clock: ScaledClock
    journal: Journal
    metrics: Metrics
    claims: Any
    """The API client it reads ResourceClaims through (a ``ClaimReader``)."""
    slice_wiper: Any
    """Deletes the node's ResourceSlices (``delete_resource_slices(node, driver)``)."""
    on_health: Callable[..., None]
    on_health_ended: Callable[[str], None]
    hook: Callable[[str], None]
    """Called at every crash point; raises :class:`SimulatedCrash` to make the kubelet die there."""
    fsync: bool = False
    record_checkpoint_writes: bool = False
    """Journal the bytes of every checkpoint write (``drasim diff`` compares them)."""
    release: str | None = None
    """The upstream release an out-of-process kubelet runs (:meth:`RunPlan.release_at`)."""
    kubeconfig: Callable[[], Path] | None = None
    """A kubeconfig of the node's API server, for a kubelet in its own process."""
    logs_dir: Path | None = None
    """Where a kubelet in its own process writes its log."""
    time_scale: float = 1.0
    """Real seconds per nominal second (a kubelet in its own process scales its timeouts)."""


class KubeletFactory(Protocol):
    """Starts a kubelet implementation on a node: loads its checkpoint; raises KubeletError if it refuses."""

    def __call__(self, node: KubeletNode) -> Kubelet:
        """A loaded (not yet watching) kubelet."""
        ...


@dataclass(frozen=True)
class KubeletImplementation:
    """A kubelet implementation the slot can hold: how to start one and what it can do."""

    name: str
    create: KubeletFactory
    capabilities: frozenset[str]
    """The optional capabilities (:data:`CAPABILITIES`) it offers."""


def effective_services(chosen: Sequence[str], version: KubeletVersion) -> list[str]:
    """DRA services a kubelet offers: its version's, narrowed by a scenario's ``kubelet.services``."""
    from drasim.scenario.common import DEFAULT_SERVICES

    if list(chosen) == list(DEFAULT_SERVICES):
        return list(version.dra_services)
    return [s for s in chosen if version.supports_service(s)]


@dataclass
class KubeletSlot:
    """The node's kubelet: the running one (or none), its next version and its crash point."""

    kind: KubeletImplementation
    version: KubeletVersion
    """The version the next start uses (``restartKubelet: {version: ...}`` changes it)."""
    journal: Journal
    running: Kubelet | None = None
    crash_at: str | None = field(default=None, init=False)
    """The hook point where the running kubelet dies (set by ``restartKubelet: {crashAt}``)."""
    crashed_at: str | None = field(default=None, init=False)
    """The hook point where it died."""

    def create(self, node: KubeletNode) -> Kubelet:
        """A new kubelet of this slot's implementation, loaded from the checkpoint; journaled either way."""
        try:
            kubelet = self.kind.create(node)
        except KubeletError as err:
            self.journal.record("kubelet", operation="start", error=str(err), version=self.version.version)
            raise
        self.journal.record("kubelet", operation="start", error=None, version=self.version.version)
        return kubelet

    def stop(self) -> bool:
        """Stop the running kubelet (memory lost; checkpoint, sockets and drivers stay); False if none ran."""
        kubelet, self.running = self.running, None
        if kubelet is None:
            return False
        kubelet.stop()
        self.journal.record("kubelet", operation="stop", error=None)
        return True

    def set_version(self, version: str) -> KubeletVersion:
        """Use another kubelet version from the next start on (an upgrade or a downgrade)."""
        previous, self.version = self.version.version, version_profile(version)
        self.journal.record("kubelet", operation="version", previous=previous, version=self.version.version)
        return self.version

    def hook(self, point: str) -> None:
        """The kubelet reached hook ``point``: die there if a crash is armed for it."""
        if self.crash_at is not None and point == self.crash_at:
            self.crashed_at = point
            raise SimulatedCrash(point)

    @contextlib.contextmanager
    def crash_armed(self, point: str) -> Iterator[None]:
        """Arm a crash at ``point`` for the block (``Unsupported`` without :data:`CRASH_POINTS`)."""
        self.require(CRASH_POINTS, "restartKubelet with crashAt")
        self.crash_at, self.crashed_at = point, None
        try:
            yield
        finally:
            self.crash_at = None

    def require(self, capability: str, what: str) -> None:
        """Raise :class:`Unsupported` unless the slot's kubelet offers ``capability``."""
        if not self.offers(capability):
            raise Unsupported(what, capability, self.kind.name)

    def offers(self, capability: str) -> bool:
        """Whether the slot's kubelet implementation offers ``capability``."""
        return capability in self.kind.capabilities
