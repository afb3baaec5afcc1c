"""Plain, immutable values passed between layers.

They hold no behaviour and do no I/O. Adapters convert them to and from protobuf
messages and Kubernetes JSON objects at the edges.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The points in the kubelet manager's PrepareResources / UnprepareResources where a test hook
#: runs, in the order they are passed: the vocabulary of a scenario's ``restartKubelet.crashAt``
#: and of :data:`drasim.kubelet.manager.HOOK_POINTS`.
KUBELET_HOOK_POINTS: tuple[str, ...] = (
    "prepare:after-validation",
    "prepare:after-pod-reference-checkpoint",
    "prepare:after-batch",
    "prepare:after-rpc",
    "unprepare:after-claim-selection",
    "unprepare:after-batch",
    "unprepare:after-rpc",
)


@dataclass(frozen=True)
class ClaimRef:
    """A ResourceClaim as named in NodePrepareResources / NodeUnprepareResources (``Claim``)."""

    namespace: str
    uid: str
    name: str


@dataclass(frozen=True)
class Device:
    """One prepared device, as in the plugin reply and in the kubelet checkpoint.

    ``None`` and an empty tuple are different on purpose: the kubelet checkpoint
    writes ``null`` for the first and ``[]`` for the second.
    """

    pool_name: str
    device_name: str
    request_names: tuple[str, ...] | None = None
    cdi_device_ids: tuple[str, ...] | None = None
    share_id: str | None = None


@dataclass(frozen=True)
class PrepareResult:
    """One claim's entry in a NodePrepareResources reply (``NodePrepareResourceResponse``)."""

    devices: tuple[Device, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class UnprepareResult:
    """One claim's entry in a NodeUnprepareResources reply (``NodeUnprepareResourceResponse``)."""

    error: str = ""
