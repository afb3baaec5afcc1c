"""Action steps: what happens to the node, in order.

Each class is registered under its YAML step name. The class docstring is the step's
contract for the runner: what to do, what the kubelet does as a consequence, and when
the step counts as failed. Unless a step says otherwise, a kubelet operation that fails
while the step has no ``expectError`` fails the scenario, and ``expectError`` on a step
whose operation succeeds fails it too. Durations are nominal kubelet seconds.

Claims are named ``namespace/name`` or ``name`` (namespace ``default``); pods likewise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drasim.limits import MAX_DURATION, MAX_OBJECTS, MAX_PARALLEL_STEPS
from drasim.scenario.common import (
    MAX_HEALTH_TIMEOUT_SECONDS,
    ApiFault,
    CheckpointCorruption,
    CrashPoint,
    ErrorMatch,
    Health,
    KubeletVersionName,
    PluginFault,
    doc,
)
from drasim.scenario.registry import Step, step

_EXPECT_ERROR = (
    "The operation must fail with a matching error (a string means 'contains'); "
    "without it, the operation must succeed."
)
_DRIVER = "Driver name; may be omitted when the scenario has exactly one driver."


@step("apply", shorthand="objects")
@dataclass(frozen=True, kw_only=True)
class Apply:
    """Create or update Kubernetes objects in the API server, like ``kubectl apply``.

    Items are plain manifests or ``{file: path}`` (relative to the scenario file; the loader
    inlines the file's documents). Strings ``$(DRIVER)`` and ``$(NODE)`` are replaced by the
    first driver's name and the kubelet's node name when the scenario runs.
    """

    objects: list[dict[str, Any]] = field(
        metadata=doc("Manifests to apply, in order.", max_items=MAX_OBJECTS)
    )
    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))


@step("create", shorthand="objects")
@dataclass(frozen=True, kw_only=True)
class Create:
    """Create Kubernetes objects; an object that already exists is an error (AlreadyExists)."""

    objects: list[dict[str, Any]] = field(
        metadata=doc("Manifests to create, in order.", max_items=MAX_OBJECTS)
    )
    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))


@step("delete")
@dataclass(frozen=True, kw_only=True)
class Delete:
    """Delete one object from the API server (immediately; no finalizers are emulated)."""

    kind: str = field(metadata=doc("Object kind, e.g. ResourceClaim, ResourceSlice, DeviceClass, Node."))
    name: str = field(metadata=doc("Object name."))
    namespace: str = field(default="default", metadata=doc("Namespace; ignored for cluster-scoped kinds."))
    api_version: str = field(
        default="",
        metadata=doc(
            "apiVersion; empty picks the usual one for the kind (resource.k8s.io/v1 for DRA kinds)."
        ),
    )
    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))


@dataclass(frozen=True, kw_only=True)
class DeviceRef:
    """One device result for an explicit allocation."""

    driver: str = field(default="", metadata=doc(_DRIVER))
    pool: str = field(default="", metadata=doc("Pool name; empty means the driver's pool on this node."))
    device: str = field(metadata=doc("Device name."))
    request: str = field(
        default="", metadata=doc("Request name in the claim; empty means the claim's first request.")
    )
    admin_access: bool = field(default=False, metadata=doc("Set adminAccess on the result."))
    share_id: str = field(default="", metadata=doc("Set shareID on the result (consumable capacity)."))


@step("allocate", shorthand="claim")
@dataclass(frozen=True, kw_only=True)
class Allocate:
    """Fill a ResourceClaim's ``status.allocation`` (what the scheduler would do).

    Without ``devices`` or ``sameAs`` the allocator picks devices from the ResourceSlices
    published for this node that satisfy the claim's requests and are not allocated to
    another claim. With ``devices`` (or ``sameAs``) exactly those results are written, even if
    they make no sense (to test drivers). ``reservedFor`` is not touched.
    """

    claim: str = field(metadata=doc("The claim to allocate."))
    devices: list[DeviceRef] = field(
        default_factory=list, metadata=doc("Explicit results; empty means allocate from ResourceSlices.")
    )
    same_as: str = field(
        default="",
        metadata=doc(
            "Copy the allocation results of this already allocated claim (two claims, one device: "
            "for exclusivity tests without naming devices)."
        ),
    )
    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))


@step("deallocate", shorthand="claim")
@dataclass(frozen=True, kw_only=True)
class Deallocate:
    """Clear a claim's ``status.allocation`` and ``status.reservedFor``."""

    claim: str = field(metadata=doc("The claim to deallocate."))


@dataclass(frozen=True, kw_only=True)
class PodClaim:
    """One ``pod.spec.resourceClaims`` entry. In YAML a plain string ``x`` means ``{name: x, claim: x}``."""

    name: str = field(metadata=doc("The pod-level claim name that containers refer to."))
    claim: str = field(
        default="",
        metadata=doc("Name of an existing ResourceClaim in the pod's namespace (resourceClaimName)."),
    )
    template: str = field(
        default="",
        metadata=doc(
            "Name of a ResourceClaimTemplate (resourceClaimTemplateName). startPod then creates the claim "
            "'<pod>-<name>' from it, owned by the pod, and records it in pod.status.resourceClaimStatuses."
        ),
    )


@dataclass(frozen=True, kw_only=True)
class ContainerClaim:
    """One ``container.resources.claims`` entry. In YAML a plain string names the pod claim."""

    name: str = field(metadata=doc("Pod claim name."))
    request: str = field(
        default="", metadata=doc("Request within the claim ('' = all requests; 'req/sub' for sub-requests).")
    )


@dataclass(frozen=True, kw_only=True)
class Container:
    """A container of the pod and the claims it uses."""

    name: str = field(metadata=doc("Container name."))
    claims: list[ContainerClaim | str] = field(
        default_factory=list, metadata=doc("Claims (and requests) the container uses.")
    )
    init: bool = field(default=False, metadata=doc("Make it an init container."))


@step("startPod", shorthand="name", prepares=True, operation=True)
@dataclass(frozen=True, kw_only=True)
class StartPod:
    """Bind a new pod to the node; the kubelet prepares its resources (PrepareResources).

    The runner creates the Pod (spec.nodeName = the node), creates claims from templates,
    allocates every referenced claim that is not allocated yet (unless ``allocate: false``),
    adds the pod to each claim's ``status.reservedFor`` (unless ``reserve: false``), then the
    kubelet runs PrepareResources. On success the pod is Running and each container's CDI
    devices are computed (GetResources). On failure the pod stays Pending and the kubelet
    retries it at its next resync (``resyncInterval``) of advanced clock, or on ``syncPod``. While the kubelet
    is stopped only the API objects are created; the kubelet prepares the pod when it starts.
    """

    name: str = field(metadata=doc("Pod name."))
    namespace: str = field(default="default", metadata=doc("Pod namespace (claims are looked up there)."))
    uid: str = field(default="", metadata=doc("Pod UID; empty lets the runner generate a unique one."))
    claims: list[PodClaim | str] = field(default_factory=list, metadata=doc("pod.spec.resourceClaims."))
    containers: list[Container] = field(
        default_factory=list,
        metadata=doc("Containers; empty means one container 'ctr' using every pod claim."),
    )
    allocate: bool = field(
        default=True, metadata=doc("Allocate unallocated claims first, as the scheduler would.")
    )
    reserve: bool = field(
        default=True, metadata=doc("Add the pod to each claim's status.reservedFor, as the scheduler would.")
    )
    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))


@step("syncPod", shorthand="pod", prepares=True, unprepares=True, operation=True, pod_field=True)
@dataclass(frozen=True, kw_only=True)
class SyncPod:
    """Make the kubelet's pod worker sync the pod now (no clock change).

    Pending: PrepareResources again. Terminating: UnprepareResources again. Running or
    Succeeded: nothing.
    """

    pod: str = field(metadata=doc("Pod name."))
    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))


@step("recreateSandbox", shorthand="pod", prepares=True, operation=True, pod_field=True)
@dataclass(frozen=True, kw_only=True)
class RecreateSandbox:
    """A Running pod's sandbox is re-created: the kubelet runs PrepareResources for it again.

    Claims still marked prepared in memory are skipped (no RPC); claims restored from the
    checkpoint after a restart are not marked prepared, so NodePrepareResources is sent.
    """

    pod: str = field(metadata=doc("Pod name."))
    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))


@step("restartContainer", pod_field=True)
@dataclass(frozen=True, kw_only=True)
class RestartContainer:
    """A container restarts inside its existing sandbox: no DRA call; its CDI devices are computed again."""

    pod: str = field(metadata=doc("Pod name."))
    container: str = field(
        default="", metadata=doc("Container name; empty means the pod's only (first) container.")
    )


@step("stopPod", shorthand="pod", unprepares=True, operation=True, pod_field=True)
@dataclass(frozen=True, kw_only=True)
class StopPod:
    """The pod's containers finish (phase Succeeded); the kubelet unprepares (UnprepareResources).

    The Pod object stays in the API server. If unprepare fails the pod stays Terminating and
    is retried after ``backoffPeriod`` of advanced clock, or on ``syncPod``.
    """

    pod: str = field(metadata=doc("Pod name."))
    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))


@step("deletePod", shorthand="pod", unprepares=True, operation=True, pod_field=True)
@dataclass(frozen=True, kw_only=True)
class DeletePod:
    """Graceful deletion: containers stop, the kubelet unprepares, then the pod is removed.

    After a successful UnprepareResources the pod is removed from the API server, from every
    claim's reservedFor, and claims generated from templates for it are deleted. Until then
    the Pod waits in the API server with a deletionTimestamp. If unprepare fails the pod
    stays Terminating and the pod worker retries after ``backoffPeriod``. While the kubelet
    is stopped the pod is Terminating; the next kubelet's pod worker unprepares it at start.
    """

    pod: str = field(metadata=doc("Pod name."))
    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))


@step("forceDeletePod", shorthand="pod", pod_field=True)
@dataclass(frozen=True, kw_only=True)
class ForceDeletePod:
    """Remove the pod from the API server at once (grace period 0).

    The pod also leaves every claim's reservedFor and its generated claims are deleted. A
    running kubelet's pod worker unprepares it at once (UnprepareResources, retried after
    ``backoffPeriod`` while it fails; the pod is Terminating, then Gone); a reconcile pass also
    unprepares the claims of the pod, which is no longer active. While the kubelet is stopped
    the pod is Gone at once and only reconcile passes of the next kubelet unprepare its claims.
    """

    pod: str = field(metadata=doc("Pod name."))
    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))


@step("reconcile", unprepares=True)
@dataclass(frozen=True, kw_only=True)
class Reconcile:
    """Run one pass of the kubelet's reconcile loop now: unprepare claims of pods that are not active.

    Errors of a reconcile pass are only journaled (as upstream logs them); use expectError.
    """


@step("advanceClock", shorthand="seconds", prepares=True, unprepares=True)
@dataclass(frozen=True, kw_only=True)
class AdvanceClock:
    """Move the kubelet's clock forward and fire every timer that falls due, in time order.

    Timers: reconcile passes every ``reconcilePeriod``; pod-worker retries of Terminating pods
    after ``backoffPeriod`` and of Pending pods after ``resyncInterval`` (both jittered by
    ``retryJitter``); slice wipes ``wipingDelay`` after a driver lost its
    last connected instance; failed plugin registrations are retried every nominal second;
    fault delays and hangs count down. Errors of these retries are journaled, not step failures.
    Before the clock moves (by a second or more), registrations in flight end and registered
    plugins' connections come up (at most the real time the move stands for), as they would
    long before a real kubelet's timers fired.
    """

    seconds: float = field(metadata=doc("Nominal seconds to advance.", minimum=0, maximum=MAX_DURATION))


@step("stopKubelet", lifecycle=True)
@dataclass(frozen=True, kw_only=True)
class StopKubelet:
    """Stop the kubelet cleanly: its in-memory state is dropped; checkpoint, sockets and plugins remain."""


@step("startKubelet", prepares=True, unprepares=True, lifecycle=True)
@dataclass(frozen=True, kw_only=True)
class StartKubelet:
    """Start a new kubelet from the checkpoint (a failed start leaves the kubelet stopped).

    It restores claims with prepared=false, wipes every ResourceSlice of the node, registers
    the plugins whose sockets exist, then syncs the pods bound to the node: Pending pods are
    prepared, Terminating pods (also those deleted while the kubelet was down, which wait in
    the API server with a deletionTimestamp) unprepared, and (policy ``allPods``) Running pods
    prepared again. Errors of these syncs are journaled, not step failures (check with expectError).
    Pods gone from the API server are unprepared by reconcile passes; the first effective pass
    comes one ``reconcilePeriod`` after the start (upstream's immediate first pass finds the
    pod sources not ready yet), or at a ``reconcile`` step. With ``version`` the new kubelet is
    that release (a node upgrade or downgrade): it reads the checkpoint the previous one wrote.
    """

    expect_error: ErrorMatch | str | None = field(default=None, metadata=doc(_EXPECT_ERROR))
    version: KubeletVersionName | None = field(
        default=None, metadata=doc("Start this kubelet version (upgrade/downgrade); default: unchanged.")
    )


@step("restartKubelet", lifecycle=True)
@dataclass(frozen=True, kw_only=True)
class RestartKubelet:
    """Stop and start the kubelet, cleanly or by crashing at a hook point.

    Clean (no ``crashAt``): stopKubelet, advance ``downtime``, startKubelet. With ``crashAt``
    the ``during`` step runs; when the kubelet reaches the hook point it dies there (the
    operation is abandoned, only what was already checkpointed survives), then after
    ``downtime`` a new kubelet starts. The step fails if the hook point is never reached.
    """

    crash_at: CrashPoint | None = field(default=None, metadata=doc("Hook point where the kubelet crashes."))
    during: Step | None = field(
        default=None,
        metadata=doc("The action that drives the kubelet to the hook point (required with crashAt)."),
    )
    downtime: float = field(
        default=0.0, metadata=doc("Nominal seconds the kubelet stays down.", minimum=0, maximum=MAX_DURATION)
    )
    stay_down: bool = field(
        default=False,
        metadata=doc("Leave the kubelet stopped after the crash or stop; use startKubelet later."),
    )
    version: KubeletVersionName | None = field(
        default=None,
        metadata=doc(
            "The restarted kubelet is this version (a node upgrade or downgrade); it reads the checkpoint "
            "the previous kubelet wrote. Default: the same version."
        ),
    )
    expect_error: ErrorMatch | str | None = field(
        default=None, metadata=doc("Matched against the kubelet start.")
    )


@step("restartPlugin", shorthand="driver", lifecycle=True, starts_plugin=True)
@dataclass(frozen=True, kw_only=True)
class RestartPlugin:
    """Stop the plugin gracefully (sockets removed), wait ``downtime``, start it again.

    Whatever the plugin persisted in its data directory is kept. The step returns when the
    kubelet has registered the new instance.
    """

    driver: str = field(default="", metadata=doc(_DRIVER))
    downtime: float = field(
        default=0.0, metadata=doc("Nominal seconds the plugin stays down.", minimum=0, maximum=MAX_DURATION)
    )


@step("killPlugin", shorthand="driver", lifecycle=True)
@dataclass(frozen=True, kw_only=True)
class KillPlugin:
    """Kill the plugin process (SIGKILL): no cleanup, its sockets stay behind, in-flight calls fail."""

    driver: str = field(default="", metadata=doc(_DRIVER))


@step("stopPlugin", shorthand="driver", lifecycle=True)
@dataclass(frozen=True, kw_only=True)
class StopPlugin:
    """Stop the plugin gracefully: it removes its sockets; the kubelet deregisters it, queues a slice wipe."""

    driver: str = field(default="", metadata=doc(_DRIVER))


@step("startPlugin", shorthand="driver", lifecycle=True, starts_plugin=True)
@dataclass(frozen=True, kw_only=True)
class StartPlugin:
    """Start a stopped or killed plugin; returns when the kubelet finished the registration attempt."""

    driver: str = field(default="", metadata=doc(_DRIVER))


@step("deregisterPlugin", shorthand="driver")
@dataclass(frozen=True, kw_only=True)
class DeregisterPlugin:
    """Remove only the registration socket: the kubelet deregisters the plugin; its DRA socket serves on."""

    driver: str = field(default="", metadata=doc(_DRIVER))


@step("fault", lifecycle=True)
@dataclass(frozen=True, kw_only=True)
class Fault:
    """Add a fault rule for a plugin's gRPC methods or for the API server (exactly one of the two)."""

    plugin: PluginFault | None = field(default=None, metadata=doc("A plugin gRPC fault rule."))
    api_server: ApiFault | None = field(default=None, metadata=doc("An API-server fault rule."))


@step("clearFaults", lifecycle=True)
@dataclass(frozen=True, kw_only=True)
class ClearFaults:
    """Remove fault rules: those of one driver, or all plugin and API-server rules."""

    driver: str = field(default="", metadata=doc("Only this driver's rules; empty clears every rule."))


@step("unblock", shorthand="driver", needs={"proxy": "releases calls held by a block fault ({where})"})
@dataclass(frozen=True, kw_only=True)
class Unblock:
    """Release the plugin calls held by ``block`` (or ``hang``) faults and wait until they finished.

    A released call does its work at the plugin (prepared state, CDI spec) and replies to
    whoever still waits: a kubelet that gave up on it (deadline) or was restarted meanwhile
    never sees the reply. The rule stays, so later matching calls are held again until its
    ``times`` is used up or ``clearFaults`` removes it. Fails when no call is held. Fake
    plugin only.
    """

    driver: str = field(default="", metadata=doc("Driver; may be omitted when the scenario has one driver."))


@step(
    "resetConnections",
    shorthand="driver",
    needs={"proxy": "resets the kubelet's connections to the plugin ({where})"},
)
@dataclass(frozen=True, kw_only=True)
class ResetConnections:
    """End the kubelet's connections to the plugin's DRA socket, as a plugin whose gRPC server
    dropped them: calls in flight fail (``Unavailable``); the kubelet's next call connects again.

    The plugin keeps running, registered, with its state. The fake plugin, or a driver process
    behind drasim's proxy.
    """

    driver: str = field(default="", metadata=doc(_DRIVER))


@step(
    "refuseConnections",
    shorthand="driver",
    needs={"proxy": "refuses the kubelet's connections to the plugin ({where})"},
)
@dataclass(frozen=True, kw_only=True)
class RefuseConnections:
    """Close the plugin's DRA socket: the kubelet's connections end and new ones are refused, so
    its DRA calls fail (``Unavailable``), until ``refuseConnections`` with ``refuse: false``.

    The plugin keeps running and registered, as when its gRPC server alone went away (its
    registration socket still answers). The fake plugin, or a driver process behind drasim's
    proxy.
    """

    driver: str = field(default="", metadata=doc(_DRIVER))
    refuse: bool = field(default=True, metadata=doc("False: accept connections again."))


@step("corruptCheckpoint", shorthand="mode")
@dataclass(frozen=True, kw_only=True)
class CorruptCheckpoint:
    """Damage the kubelet's dra_manager_state file; a kubelet started afterwards must refuse to start."""

    mode: CheckpointCorruption = field(
        default="checksum",
        metadata=doc(
            "checksum: wrong CRC; truncate: cut the file in half; invalidJson: not JSON; "
            "legacyFormat: a 1.30-era 'v1' file; content: replace the file with ``content``."
        ),
    )
    content: str = field(default="", metadata=doc("The new file content for mode 'content'."))


@step("deleteCheckpoint")
@dataclass(frozen=True, kw_only=True)
class DeleteCheckpoint:
    """Delete the kubelet's dra_manager_state file (a kubelet started afterwards begins empty)."""


@step("clearCdiDir")
@dataclass(frozen=True, kw_only=True)
class ClearCdiDir:
    """Delete every file in the CDI directory, as a reboot clears a tmpfs /var/run/cdi."""


@step("rebootNode", lifecycle=True, starts_plugin=True)
@dataclass(frozen=True, kw_only=True)
class RebootNode:
    """Simulate a node reboot.

    In order: stop the kubelet, kill every plugin, clear the CDI directory, remove stale
    sockets, advance ``downtime``, start every plugin, start the kubelet. Every pod that was
    Running gets a new sandbox, so the kubelet runs PrepareResources for it (and, as claims
    come back with prepared=false, sends NodePrepareResources).
    """

    downtime: float = field(
        default=0.0, metadata=doc("Nominal seconds the node is down.", minimum=0, maximum=MAX_DURATION)
    )


@step(
    "setDeviceHealth",
    needs={
        "health": "uses {where}",
        "fake-plugin": "tells the driver a device's health, which a real driver decides itself ({where})",
    },
)
@dataclass(frozen=True, kw_only=True)
class SetDeviceHealth:
    """The fake plugin reports a device's health on its stream; returns once the kubelet processed it."""

    driver: str = field(default="", metadata=doc(_DRIVER))
    pool: str = field(default="", metadata=doc("Pool name; empty means the driver's pool on this node."))
    device: str = field(metadata=doc("Device name."))
    health: Health = field(metadata=doc("Reported health."))
    message: str = field(default="", metadata=doc("Optional health message."))
    timeout_seconds: int = field(
        default=0,
        metadata=doc(
            "Sent as the report's health_check_timeout_seconds (0 to 9223372036): the kubelet shows "
            "the device as Unknown once more than this many seconds pass without a newer report; "
            "0 means the kubelet's default of 30.",
            minimum=0,
            maximum=MAX_HEALTH_TIMEOUT_SECONDS,
        ),
    )


@step("mark", shorthand="name")
@dataclass(frozen=True, kw_only=True)
class Mark:
    """Name this point of the run, so expectations can look only at what happened after it (``since``)."""

    name: str = field(metadata=doc("Mark name, unique within the scenario."))


@step("parallel", shorthand="steps")
@dataclass(frozen=True, kw_only=True)
class Parallel:
    """Run actions concurrently (each in its own thread); done when all are done.

    Only actions are allowed inside. Each inner step's own ``expectError`` is checked.
    """

    steps: list[Step] = field(
        metadata=doc("The actions to run at the same time.", max_items=MAX_PARALLEL_STEPS)
    )
