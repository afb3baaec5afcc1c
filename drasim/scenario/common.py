"""Small value types shared by the scenario schema: enums and error matchers.

The fault rules (PluginFault, ApiFault) and their enums live in :mod:`drasim.faults`, the one
fault vocabulary the fake plugin and the API server take too; they are re-exported here.

Every dataclass field carries ``metadata={"description": ...}`` (built with :func:`doc`);
the loader, the JSON Schema and the generated reference in docs/scenarios.md all read it.
YAML keys are the camelCase form of the field names unless ``metadata["yaml"]`` says
otherwise. Durations are *nominal* kubelet seconds: the runner multiplies them by the
kubelet profile's ``timeScale`` before really waiting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from drasim.apiversions import DEFAULT_DRA_SERVICES, DRA_SERVICES, RESOURCE_API_VERSIONS
from drasim.faults import ApiClient, ApiFault, ApiVerb, GrpcCode, PluginFault, Rpc
from drasim.limits import doc
from drasim.profiles import VERSIONS
from drasim.values import KUBELET_HOOK_POINTS

__all__ = [  # the fault vocabulary (drasim.faults) and doc (drasim.limits) are re-exported
    "API_VERSION",
    "CRASH_POINT_MEANING",
    "DEFAULT_SERVICES",
    "KIND",
    "MAX_HEALTH_TIMEOUT_SECONDS",
    "ApiClient",
    "ApiFault",
    "ApiServerMode",
    "ApiVerb",
    "BackendName",
    "BugName",
    "CheckpointCorruption",
    "CrashPoint",
    "ErrorMatch",
    "GrpcCode",
    "Health",
    "KubeletOperation",
    "KubeletService",
    "KubeletVersionName",
    "PluginFault",
    "PodPhase",
    "RePreparePolicy",
    "ResourceApiVersion",
    "Rpc",
    "doc",
]

API_VERSION = "drasim.dev/v1alpha1"
KIND = "Scenario"

if TYPE_CHECKING:
    KubeletService = str
else:  # the decoder and the JSON Schema read the choices from the one table of plugin API versions
    KubeletService = Literal[DRA_SERVICES]
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

if TYPE_CHECKING:
    CrashPoint = str
else:  # the manager's hook points, one list (drasim.values)
    CrashPoint = Literal[KUBELET_HOOK_POINTS]
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

if TYPE_CHECKING:
    ResourceApiVersion = str
else:  # from the one table of API versions (drasim.apiversions)
    ResourceApiVersion = Literal[RESOURCE_API_VERSIONS]
"""resource.k8s.io versions the fake API server can serve (v1alpha3: what kubelet 1.31 reads)."""

if TYPE_CHECKING:
    KubeletVersionName = str
else:  # derived from the profiles, so a new kubelet version is one profile row
    KubeletVersionName = Literal[VERSIONS]
"""Kubelet versions drasim emulates (drasim.profiles; docs/kubelet-versions.md)."""

DEFAULT_SERVICES: tuple[KubeletService, ...] = DEFAULT_DRA_SERVICES


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
