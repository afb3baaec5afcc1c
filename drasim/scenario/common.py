"""Small value types shared by the scenario schema: enums, error matchers, fault rules.

Every dataclass field carries ``metadata={"description": ...}`` (built with :func:`doc`);
the loader, the JSON Schema and the generated reference in docs/scenarios.md all read it.
YAML keys are the camelCase form of the field names unless ``metadata["yaml"]`` says
otherwise. Durations are *nominal* kubelet seconds: the runner multiplies them by the
kubelet profile's ``timeScale`` before really waiting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from drasim.scenario.limits import MAX_COUNT, MAX_DURATION, MAX_HTTP_STATUS

API_VERSION = "drasim.dev/v1alpha1"
KIND = "Scenario"

Rpc = Literal[
    "GetInfo",
    "NotifyRegistrationStatus",
    "NodePrepareResources",
    "NodeUnprepareResources",
    "NodeWatchResources",
]
"""The plugin-side gRPC methods the kubelet calls (registration, DRA and health services)."""

GrpcCode = Literal[
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
]
"""gRPC status code names as in grpc.StatusCode (the Go names are their CamelCase forms)."""

KubeletService = Literal["v1.DRAPlugin", "v1beta1.DRAPlugin", "v1alpha3.NodeService"]
"""DRA gRPC services the emulated kubelet can speak, named as plugins advertise them."""

Health = Literal["Healthy", "Unhealthy", "Unknown"]
"""Device health as the kubelet reports it in ``allocatedResourcesStatus``."""

MAX_HEALTH_TIMEOUT_SECONDS = 9_223_372_036
"""The largest ``health_check_timeout_seconds`` the kubelet can hold: it multiplies the value
by ``time.Second`` into an int64 nanosecond ``time.Duration``, which wraps above this."""

BugName = Literal[
    "non-idempotent",
    "forgets-state",
    "drops-claim",
    "ignores-claim-errors",
    "duplicate-cdi-ids",
    "no-cdi-spec",
    "double-allocates",
]
"""Deliberately broken behaviours of the fake plugin (fake_plugins/), used to prove scenarios catch bugs."""

ApiVerb = Literal["any", "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]
"""Kubernetes API verbs an API-server fault can match."""

ApiClient = Literal["any", "kubelet", "driver", "runner"]
"""Who made an API request: the emulated kubelet, the driver under test, or the runner itself."""

CrashPoint = Literal[
    "prepare:after-validation",
    "prepare:after-pod-reference-checkpoint",
    "prepare:after-batch",
    "prepare:after-rpc",
    "unprepare:after-claim-selection",
    "unprepare:after-batch",
    "unprepare:after-rpc",
]
"""Kubelet hook points where ``restartKubelet.crashAt`` makes the kubelet die (see docs/scenarios.md)."""

CRASH_POINT_MEANING: dict[str, str] = {
    "prepare:after-validation": (
        "PrepareResources validated the pod's claims (fetched, reservedFor checked, drivers resolved) "
        "but has not touched the claim cache: nothing checkpointed, no RPC sent."
    ),
    "prepare:after-pod-reference-checkpoint": (
        "The pod UID was added to every claim and checkpointed; NodePrepareResources was not sent."
    ),
    "prepare:after-batch": (
        "The first NodePrepareResources batch (one driver) returned success and its devices were added in "
        "memory, while the pod's other batches were not sent: the kubelet dies with the call's work done "
        "at the plugin but not recorded (nothing after the pod-reference checkpoint is on disk)."
    ),
    "prepare:after-rpc": (
        "Every NodePrepareResources batch of this PrepareResources call returned success; the devices "
        "are only in memory, the final checkpoint (devices, prepared) was not written "
        "(kubernetes/kubernetes#116411)."
    ),
    "unprepare:after-claim-selection": (
        "UnprepareResources chose the claims to unprepare and dropped this pod from shared claims in "
        "memory only; no NodeUnprepareResources was sent."
    ),
    "unprepare:after-batch": (
        "The first NodeUnprepareResources batch (one driver) returned success; other batches were not "
        "sent, and the cache and checkpoint still hold every claim."
    ),
    "unprepare:after-rpc": (
        "Every NodeUnprepareResources batch of this UnprepareResources call returned success; the "
        "claims were not yet removed from the cache and the checkpoint still lists them."
    ),
}

RePreparePolicy = Literal["newSandboxOnly", "allPods"]
"""When a restarted kubelet calls NodePrepareResources again for claims restored from its checkpoint."""

PodPhase = Literal["Pending", "Running", "Terminating", "Succeeded", "Gone"]
"""A pod's life as the runner tracks it (Gone: removed from the API server and from the kubelet)."""

KubeletOperation = Literal["any", "prepare", "unprepare", "reconcile", "registration", "start"]
"""Which kubelet operation produced an error: PrepareResources, UnprepareResources, a reconcile
pass, a plugin registration, or a kubelet start (checkpoint load)."""

CheckpointCorruption = Literal["checksum", "truncate", "invalidJson", "legacyFormat", "content"]
"""How ``corruptCheckpoint`` damages the kubelet's dra_manager_state file."""

ApiServerMode = Literal["auto", "memory", "http"]
"""How the API server is reached: in-process, over HTTP, or chosen by the runner (auto)."""

BackendName = Literal["", "memory", "http", "kubeconfig"]
"""An API-server backend (docs/backends.md); empty: whichever the run chooses."""

ResourceApiVersion = Literal["v1", "v1beta2", "v1beta1", "v1alpha3"]
"""resource.k8s.io versions the fake API server can serve (v1alpha3: what kubelet 1.31 reads)."""

KubeletVersionName = Literal["1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]
"""Kubelet versions drasim emulates (drasim.kubelet.profiles; docs/kubelet-versions.md)."""

DEFAULT_SERVICES: tuple[KubeletService, ...] = ("v1.DRAPlugin", "v1beta1.DRAPlugin")


def doc(text: str, **extra: Any) -> dict[str, Any]:
    """Field metadata: the description plus optional ``yaml`` (key override), ``minimum``, ``maximum``
    (numbers) or ``max_items`` (lists); bounds come from :mod:`drasim.scenario.limits`."""
    return {"description": text, **extra}


@dataclass(frozen=True, kw_only=True)
class ErrorMatch:
    """How an error message is matched. In YAML a plain string means ``contains``."""

    contains: str = field(default="", metadata=doc("The error message must contain this text."))
    matches: str = field(
        default="", metadata=doc("A Python regular expression that must be found in the message (re.search).")
    )

    def describe(self) -> str:
        """A short human form for reports: ``contains 'x'`` or ``matches /x/``."""
        return f"matches /{self.matches}/" if self.matches else f"contains {self.contains!r}"


@dataclass(frozen=True, kw_only=True)
class PluginFault:
    """One fault rule for a DRA plugin's gRPC methods.

    Rules are checked in the order they were added; the first rule that matches a call
    and still has uses left applies. Transport faults (code, delay, hang) can be applied
    by the kubelet's client interceptor and so work against real drivers; protocol faults
    (error, missingClaim, unknownUID, crash) need the fake plugin.
    """

    driver: str = field(
        default="",
        metadata=doc("Driver whose calls are affected; may be omitted when the scenario has one driver."),
    )
    rpc: Rpc = field(metadata=doc("The gRPC method this rule applies to."))
    claim: str = field(
        default="",
        metadata=doc(
            "Only calls whose request carries this claim (``namespace/name``, or ``name`` in namespace "
            "default); empty matches every call."
        ),
    )
    code: GrpcCode | None = field(
        default=None, metadata=doc("Fail the whole call with this gRPC status code.")
    )
    message: str = field(default="", metadata=doc("Status message sent with ``code``."))
    error: str = field(
        default="",
        metadata=doc(
            "Answer, but set this per-claim error string for ``claim`` (or for every claim in the request)."
        ),
    )
    missing_claim: bool = field(
        default=False,
        metadata=doc(
            "Answer, but leave ``claim`` (or every claim) out of the reply, "
            "so the kubelet reports 'skipped N ResourceClaims'."
        ),
    )
    unknown_uid: bool = field(
        default=False,
        metadata=doc("Answer, and add an entry for a claim UID that was not requested.", yaml="unknownUID"),
    )
    nil_entry: bool = field(
        default=False,
        metadata=doc(
            "Answer, but with an empty entry for ``claim`` (or every claim): what a Go driver's nil "
            "value in the reply map looks like on the wire. The kubelet takes it as success without "
            "devices, so containers get no CDI devices from it."
        ),
    )
    delay: float = field(
        default=0.0,
        metadata=doc(
            "Nominal seconds to wait before answering "
            "(longer than callTimeout means the kubelet sees DEADLINE_EXCEEDED).",
            minimum=0,
            maximum=MAX_DURATION,
        ),
    )
    hang: bool = field(
        default=False,
        metadata=doc(
            "Never answer: the kubelet sees DEADLINE_EXCEEDED after callTimeout; the plugin's handler "
            "is released then (the call is cancelled) or when the plugin stops, without side effects."
        ),
    )
    block: bool = field(
        default=False,
        metadata=doc(
            "Hold the call in the plugin until an ``unblock`` step (or ``clearFaults``, or the plugin "
            "stops), even after the kubelet gave up on it (deadline, restart); once released the plugin "
            "does the work (state, CDI spec) and replies to whoever still listens."
        ),
    )
    crash: Literal["before", "after"] | None = field(
        default=None,
        metadata=doc(
            "The plugin process dies mid-call: 'before' doing anything, or 'after' writing its own "
            "state but before replying."
        ),
    )
    times: int = field(
        default=0,
        metadata=doc(
            "How many matching calls the rule affects; 0 means every matching call from now on.",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )
    after: int = field(
        default=0,
        metadata=doc(
            "Let this many matching calls through unharmed before the rule starts to apply.",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )


@dataclass(frozen=True, kw_only=True)
class ApiFault:
    """One fault rule for the fake API server (it answers with a Kubernetes Status error)."""

    verb: ApiVerb = field(default="any", metadata=doc("Request verb to match."))
    resource: str = field(
        default="",
        metadata=doc(
            "Plural resource to match, e.g. resourceclaims, resourceslices, nodes, pods; empty matches all."
        ),
    )
    name: str = field(default="", metadata=doc("Object name to match; empty matches all."))
    client: ApiClient = field(default="any", metadata=doc("Whose requests are affected."))
    code: int = field(
        default=0,
        metadata=doc(
            "HTTP status to answer with (404, 409, 429, 500, 503, ...); "
            "0 means answer normally (use with delay).",
            minimum=0,
            maximum=MAX_HTTP_STATUS,
        ),
    )
    message: str = field(default="", metadata=doc("Message of the Status error."))
    delay: float = field(
        default=0.0,
        metadata=doc("Nominal seconds of latency added before answering.", minimum=0, maximum=MAX_DURATION),
    )
    drop_watches: bool = field(
        default=False, metadata=doc("Close every open watch that matches once, when the rule is added.")
    )
    times: int = field(
        default=0,
        metadata=doc(
            "How many matching requests the rule affects; 0 means all from now on.",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )
    after: int = field(
        default=0,
        metadata=doc(
            "Let this many matching requests through before the rule applies.", minimum=0, maximum=MAX_COUNT
        ),
    )
