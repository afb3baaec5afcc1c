"""Which protobuf message carries which Kubernetes kind.

resource.k8s.io ``v1beta2`` has the same wire layout as ``v1`` (``v1`` was
promoted from it), so both are decoded with the ``v1`` messages. ``v1beta1``
differs (devices nest their fields under ``basic``); only its ResourceSlice is
described, which is what drivers write. Other ``v1beta1`` bodies are answered
with 415.
"""

from __future__ import annotations

from google.protobuf import symbol_database
from google.protobuf.message import Message

# Importing the generated modules registers their descriptors.
from drasim._proto.k8s.api.core.v1 import generated_pb2 as _core_v1
from drasim._proto.k8s.api.resource.v1 import generated_pb2 as _resource_v1
from drasim._proto.k8s.api.resource.v1beta1 import generated_pb2 as _resource_v1beta1
from drasim._proto.k8s.apimachinery.pkg.apis.meta.v1 import generated_pb2 as _meta_v1
from drasim._proto.k8s.apimachinery.pkg.runtime import generated_pb2 as _runtime

RESOURCE_GROUP = "resource.k8s.io"
RESOURCE_VERSIONS = ("v1", "v1beta2")
PARTIAL_RESOURCE_VERSIONS = ("v1beta1",)

_RESOURCE_KINDS = (
    "ResourceSlice",
    "ResourceSliceList",
    "ResourceClaim",
    "ResourceClaimList",
    "ResourceClaimTemplate",
    "ResourceClaimTemplateList",
    "DeviceClass",
    "DeviceClassList",
)
_V1BETA1_KINDS = ("ResourceSlice", "ResourceSliceList")
_CORE_KINDS = ("Node", "Namespace")
# Kinds every group version accepts (apimachinery registers them everywhere).
_META_KINDS = ("DeleteOptions", "Status")

_MESSAGES: dict[tuple[str, str, str], str] = {
    **{
        (RESOURCE_GROUP, v, k): f"k8s.io.api.resource.v1.{k}"
        for v in RESOURCE_VERSIONS
        for k in _RESOURCE_KINDS
    },
    **{(RESOURCE_GROUP, "v1beta1", k): f"k8s.io.api.resource.v1beta1.{k}" for k in _V1BETA1_KINDS},
    **{("", "v1", k): f"k8s.io.api.core.v1.{k}" for k in _CORE_KINDS},
}

_ = (_core_v1, _resource_v1, _resource_v1beta1, _meta_v1)
UNKNOWN = _runtime.Unknown


def api_version(group: str, version: str) -> str:
    """``group/version``, or just ``version`` for the core group."""
    return f"{group}/{version}" if group else version


def split_api_version(value: str) -> tuple[str, str]:
    """The inverse of :func:`api_version`."""
    group, _, version = value.rpartition("/")
    return group, version


def message_name(group: str, version: str, kind: str) -> str | None:
    """Full protobuf name of the message for a kind, or None when it is not described."""
    if kind in _META_KINDS:
        return f"k8s.io.apimachinery.pkg.apis.meta.v1.{kind}"
    return _MESSAGES.get((group, version, kind))


def new_message(full_name: str) -> Message:
    """An empty message instance for a registered full name."""
    cls = symbol_database.Default().GetSymbol(full_name)
    return cls()


def supported_kinds() -> list[tuple[str, str, str]]:
    """Every (group, version, kind) with a described message, in a stable order."""
    return sorted(_MESSAGES)
