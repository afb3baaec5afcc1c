"""The 1.26-1.30 checkpoint format: ``{"version":"v1","entries":[...],"checksum":N}``.

PURE: no I/O. Kubelets 1.26 to 1.30 stored ``DRAManagerCheckpoint``
(pkg/kubelet/cm/dra/state/checkpoint.go of those releases) and checksummed it with
``checksum.New``: FNV-1a-32 over the go-spew dump of the struct with ``Checksum``
set to 0 (``hashutil.DeepHashObject`` / ``dump.ForHash``). The dump spells out Go
type names, so it differs between type layouts; :class:`LegacyLayout` names the
layouts drasim reproduces. Kubelets from 1.31 cannot read this format at all.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drasim.checkpoint import gojson
from drasim.checkpoint.gojson import JsonObject
from drasim.errors import CorruptCheckpointError

__all__ = [
    "LEGACY_VERSION",
    "LegacyClaimInfoState",
    "LegacyDecoded",
    "LegacyLayout",
    "LegacyResourceHandle",
    "decode_legacy",
    "encode_legacy",
    "fnv1a_32",
    "legacy_entry_to_json",
    "spew_dump",
]

LEGACY_VERSION = "v1"


class LegacyLayout(enum.Enum):
    """A set of Go types whose spew dump a legacy kubelet hashed (newest first)."""

    #: ResourceHandle{DriverName, Data, StructuredData *StructuredResourceHandle} (resource v1alpha2, 1.30).
    V1_30 = "1.30"
    #: ResourceHandle{DriverName, Data} (resource v1alpha2, 1.27-1.29).
    V1_27_29 = "1.27-1.29"
    #: No ResourceHandles field: what 1.26 wrote and what the 1.27-1.30 compatibility
    #: path (``verifyChecksumWithoutResourceHandles``) recomputes.
    V1_26 = "1.26"
    #: As V1_26 but with PodUIDs typed ``sets.String``. Unconfirmed: in case 1.26 used it.
    V1_26_SETS_STRING = "1.26 (sets.String, unconfirmed)"


@dataclass
class LegacyResourceHandle:
    """``resource.k8s.io/v1alpha2`` ResourceHandle (structuredData is not supported)."""

    driver_name: str = ""
    data: str = ""


@dataclass
class LegacyClaimInfoState:
    """One entry of a legacy checkpoint (the old upstream ``ClaimInfoState``)."""

    driver_name: str = ""
    class_name: str = ""
    claim_uid: str = ""
    claim_name: str = ""
    namespace: str = ""
    pod_uids: set[str] | None = None
    resource_handles: list[LegacyResourceHandle] | None = None
    cdi_devices: dict[str, tuple[str, ...] | None] | None = None


@dataclass(frozen=True)
class LegacyDecoded:
    """A parsed legacy file: its fields and the checksum each layout gives."""

    version: str
    entries: list[LegacyClaimInfoState] | None
    stored_checksum: int
    checksums: dict[LegacyLayout, int]

    @property
    def matching_layout(self) -> LegacyLayout | None:
        """The newest layout whose checksum equals the stored one, if any."""
        for layout in LegacyLayout:
            if self.checksums[layout] == self.stored_checksum:
                return layout
        return None


def fnv1a_32(data: bytes) -> int:
    """FNV-1a, 32 bit (Go ``hash/fnv.New32a``)."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def _spew_map(items: dict[str, str] | None) -> str:
    if items is None:
        return "<nil>"
    return "map[" + " ".join(f"{key}:{items[key]}" for key in sorted(items)) + "]"


def _spew_list(items: Sequence[str] | None) -> str:
    return "<nil>" if items is None else "[" + " ".join(items) + "]"


def _spew_handle(handle: LegacyResourceHandle, layout: LegacyLayout) -> str:
    text = f"{{DriverName:(string){handle.driver_name} Data:(string){handle.data}"
    if layout is LegacyLayout.V1_30:
        text += " StructuredData:(*v1alpha2.StructuredResourceHandle)<nil>"
    return text + "}"


def _spew_entry(entry: LegacyClaimInfoState, layout: LegacyLayout) -> str:
    set_type = "sets.String" if layout is LegacyLayout.V1_26_SETS_STRING else "sets.Set[string]"
    pods = None if entry.pod_uids is None else dict.fromkeys(entry.pod_uids, "{}")
    parts = [
        f"DriverName:(string){entry.driver_name}",
        f"ClassName:(string){entry.class_name}",
        f"ClaimUID:(types.UID){entry.claim_uid}",
        f"ClaimName:(string){entry.claim_name}",
        f"Namespace:(string){entry.namespace}",
        f"PodUIDs:({set_type}){_spew_map(pods)}",
    ]
    if layout in (LegacyLayout.V1_30, LegacyLayout.V1_27_29):
        handles = entry.resource_handles
        rendered = None if handles is None else [_spew_handle(h, layout) for h in handles]
        parts.append(f"ResourceHandles:([]v1alpha2.ResourceHandle){_spew_list(rendered)}")
    cdi = entry.cdi_devices
    cdi_rendered = None if cdi is None else {k: _spew_list(v) for k, v in cdi.items()}
    parts.append(f"CDIDevices:(map[string][]string){_spew_map(cdi_rendered)}")
    return "{" + " ".join(parts) + "}"


def spew_dump(version: str, entries: Sequence[LegacyClaimInfoState] | None, layout: LegacyLayout) -> str:
    """``dump.ForHash(&checkpoint)`` with Checksum 0, for ``layout``.

    The 1.26 layouts reproduce the compatibility path exactly: it always writes
    version ``v1`` and a non-nil (possibly empty) entry list.
    """
    if layout in (LegacyLayout.V1_26, LegacyLayout.V1_26_SETS_STRING):
        version = LEGACY_VERSION
        entries = list(entries or [])
    rendered = None if entries is None else [_spew_entry(e, layout) for e in entries]
    return (
        f"(*state.DRAManagerCheckpoint){{Version:(string){version} "
        f"Entries:(state.ClaimInfoStateList){_spew_list(rendered)} "
        "Checksum:(checksum.Checksum)0}"
    )


def legacy_checksum(
    version: str, entries: Sequence[LegacyClaimInfoState] | None, layout: LegacyLayout
) -> int:
    """The checksum a legacy kubelet with ``layout`` computes (``checksum.New``)."""
    return fnv1a_32(spew_dump(version, entries, layout).encode("utf-8"))


def legacy_entry_to_json(
    entry: LegacyClaimInfoState, layout: LegacyLayout = LegacyLayout.V1_30
) -> dict[str, Any]:
    """One legacy entry as JSON-ready dicts, keys in Go field order (``ResourceHandles`` per layout)."""
    pods: dict[str, dict[str, Any]] | None = None
    if entry.pod_uids is not None:
        pods = {uid: {} for uid in sorted(entry.pod_uids)}
    result: dict[str, Any] = {
        "DriverName": entry.driver_name,
        "ClassName": entry.class_name,
        "ClaimUID": entry.claim_uid,
        "ClaimName": entry.claim_name,
        "Namespace": entry.namespace,
        "PodUIDs": pods,
    }
    if layout in (LegacyLayout.V1_30, LegacyLayout.V1_27_29):
        handles = entry.resource_handles
        result["ResourceHandles"] = None if handles is None else [_handle_json(h) for h in handles]
    cdi = entry.cdi_devices
    result["CDIDevices"] = (
        None if cdi is None else {k: None if cdi[k] is None else list(cdi[k] or ()) for k in sorted(cdi)}
    )
    return result


def _handle_json(handle: LegacyResourceHandle) -> dict[str, str]:
    result = {}
    if handle.driver_name:
        result["driverName"] = handle.driver_name
    if handle.data:
        result["data"] = handle.data
    return result


def encode_legacy(
    entries: Sequence[LegacyClaimInfoState] | None,
    *,
    layout: LegacyLayout = LegacyLayout.V1_30,
    version: str = LEGACY_VERSION,
) -> bytes:
    """The bytes a legacy kubelet of ``layout`` writes (``DRAManagerCheckpoint.MarshalCheckpoint``).

    Entries are written in the order given (upstream kept a slice).
    """
    document: dict[str, Any] = {"version": version}
    if entries:
        document["entries"] = [legacy_entry_to_json(e, layout) for e in entries]
    document["checksum"] = legacy_checksum(version, entries, layout)
    return gojson.go_marshal(document).encode("utf-8")


_ENTRY_FIELDS = (
    "DriverName",
    "ClassName",
    "ClaimUID",
    "ClaimName",
    "Namespace",
    "PodUIDs",
    "ResourceHandles",
    "CDIDevices",
)


def _decode_handle(value: Any, path: str) -> LegacyResourceHandle:
    obj = gojson.as_object(value, path) or JsonObject()
    fields = gojson.struct_fields(obj, ("driverName", "data", "structuredData"))
    if fields.get("structuredData") is not None:
        raise CorruptCheckpointError(
            f"{path}.structuredData: structured resource handles are not supported; "
            "drasim cannot compute this legacy checksum"
        )
    return LegacyResourceHandle(
        driver_name=gojson.as_string(fields.get("driverName"), f"{path}.driverName"),
        data=gojson.as_string(fields.get("data"), f"{path}.data"),
    )


def _decode_entry(value: Any, path: str) -> LegacyClaimInfoState:
    obj = gojson.as_object(value, path) or JsonObject()
    fields = gojson.struct_fields(obj, _ENTRY_FIELDS)
    text = {name: gojson.as_string(fields.get(name), f"{path}.{name}") for name in _ENTRY_FIELDS[:5]}
    entry = LegacyClaimInfoState(
        driver_name=text["DriverName"],
        class_name=text["ClassName"],
        claim_uid=text["ClaimUID"],
        claim_name=text["ClaimName"],
        namespace=text["Namespace"],
    )
    pods = gojson.as_object(fields.get("PodUIDs"), f"{path}.PodUIDs")
    if pods is not None:
        entry.pod_uids = set()
        for uid, member in pods:
            gojson.as_object(member, gojson.key_path(f"{path}.PodUIDs", uid))
            entry.pod_uids.add(uid)
    handles = gojson.as_list(fields.get("ResourceHandles"), f"{path}.ResourceHandles")
    if handles is not None:
        entry.resource_handles = [
            _decode_handle(h, p) for p, h in gojson.elements(handles, f"{path}.ResourceHandles")
        ]
    cdi = gojson.as_object(fields.get("CDIDevices"), f"{path}.CDIDevices")
    if cdi is not None:
        entry.cdi_devices = {
            driver: gojson.as_string_list(ids, gojson.key_path(f"{path}.CDIDevices", driver))
            for driver, ids in cdi
        }
    return entry


def decode_legacy(obj: JsonObject) -> LegacyDecoded:
    """Decode the top-level object of a legacy file and compute every layout's checksum."""
    fields = gojson.struct_fields(obj, ("version", "entries", "checksum"))
    version = gojson.as_string(fields.get("version"), "version")
    if version != LEGACY_VERSION:
        raise CorruptCheckpointError(f'version: expected "{LEGACY_VERSION}", got {gojson.describe(version)}')
    stored = gojson.as_uint(fields.get("checksum"), 64, "checksum")
    entries: list[LegacyClaimInfoState] | None = []  # NewDRAManagerCheckpoint: empty, not nil
    if "entries" in fields:
        items = gojson.as_list(fields["entries"], "entries")
        entries = (
            None if items is None else [_decode_entry(v, p) for p, v in gojson.elements(items, "entries")]
        )
    checksums = {layout: legacy_checksum(version, entries, layout) for layout in LegacyLayout}
    return LegacyDecoded(version=version, entries=entries, stored_checksum=stored, checksums=checksums)
