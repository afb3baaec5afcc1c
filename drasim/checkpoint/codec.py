"""Encode and decode the kubelet's ``dra_manager_state`` checkpoint, byte for byte.

PURE: no I/O. The current format (kubelet 1.31 and later; pkg/kubelet/cm/dra/state
``checkpoint.go``) is an envelope ``{"Data":"<inner JSON>","Checksum":<crc32>}``
whose checksum is CRC-32/IEEE over the UTF-8 bytes of ``Data``; the inner JSON is
``{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1",
"ClaimInfoStateList":[...]}``. Both levels are written with Go ``encoding/json``
rules (:mod:`drasim.checkpoint.gojson`).

Entry order: the kubelet walks a Go map, so its order is unspecified. drasim writes
entries sorted by namespace, then claim name, then claim UID, so equal states give
equal bytes. Readers never depend on the order.

The 1.26-1.30 format is recognised and decoded too (:mod:`drasim.checkpoint.legacy`);
the current kubelet refuses it, and so does :class:`~drasim.checkpoint.store.FileCheckpointStore`.
"""

from __future__ import annotations

import enum
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from drasim.checkpoint import gojson
from drasim.checkpoint.gojson import JsonObject
from drasim.checkpoint.legacy import LegacyClaimInfoState, LegacyLayout, decode_legacy
from drasim.errors import CheckpointError, CorruptCheckpointError
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

__all__ = [
    "CHECKPOINT_API_GROUP",
    "CHECKPOINT_API_VERSION",
    "CHECKPOINT_KIND",
    "CHECKPOINT_VERSION",
    "ENTRIES_KEY",
    "LIST_KEY",
    "CheckpointFormat",
    "DecodedCheckpoint",
    "checksum",
    "decode",
    "encode",
    "encode_data",
    "entry_sort_key",
    "entry_to_json",
    "envelope",
]

CHECKPOINT_KIND = "DRACheckpoint"
CHECKPOINT_API_GROUP = "checkpoint.dra.kubelet.k8s.io"
CHECKPOINT_VERSION = "v1"
CHECKPOINT_API_VERSION = f"{CHECKPOINT_API_GROUP}/{CHECKPOINT_VERSION}"
#: The list key of the merged upstream code (``CheckpointData.ClaimInfoStateList``).
LIST_KEY = "ClaimInfoStateList"
#: The list key of a pre-merge iteration (``CheckpointData.Entries``), found in some upstream tests.
ENTRIES_KEY = "Entries"


class CheckpointFormat(enum.Enum):
    """Which on-disk format a file has."""

    #: ``{"Data":...,"Checksum":crc32}``, kubelet 1.31 and later.
    CURRENT = "current"
    #: ``{"version":"v1","entries":...,"checksum":fnv}``, kubelet 1.26-1.30.
    LEGACY = "legacy"


@dataclass(frozen=True)
class DecodedCheckpoint:
    """What :func:`decode` found in a file.

    ``variant`` is the list key (:data:`LIST_KEY` or :data:`ENTRIES_KEY`) for the
    current format, and the :class:`LegacyLayout` value whose checksum matched (or
    the newest one, when none did) for the legacy format. ``entries`` holds the
    current-format states; ``legacy_entries`` the legacy ones. ``list_is_null``
    tells a ``null`` list (a fresh checkpoint) from ``[]``. ``share_id_written`` is
    whether devices carry the 1.35+ ``ShareID`` key (``None``: the file has no
    devices, so it cannot tell). ``data`` is the inner JSON of a current-format file.
    """

    format: CheckpointFormat
    variant: str
    stored_checksum: int
    computed_checksum: int
    entries: list[ClaimInfoState] = field(default_factory=list)
    legacy_entries: list[LegacyClaimInfoState] = field(default_factory=list)
    list_is_null: bool = False
    share_id_written: bool | None = None
    data: str = ""

    @property
    def checksum_ok(self) -> bool:
        """Whether the stored checksum is the one computed from the content."""
        return self.stored_checksum == self.computed_checksum


def checksum(data: str) -> int:
    """CRC-32/IEEE of the UTF-8 bytes of ``data`` (Go ``crc32.ChecksumIEEE``)."""
    return zlib.crc32(data.encode("utf-8"))


def entry_sort_key(state: ClaimInfoState) -> tuple[str, str, str]:
    """drasim's stated entry order: namespace, then claim name, then claim UID."""
    return (state.namespace, state.claim_name, state.claim_uid)


def _device_json(device: Device, share_id: bool) -> dict[str, Any]:
    if device.share_id is not None and not share_id:
        raise CheckpointError(
            f"device {device.pool_name}/{device.device_name} has ShareID {device.share_id!r}, "
            "which a checkpoint written without the ShareID key cannot hold"
        )
    result: dict[str, Any] = {
        "PoolName": gojson.go_string(device.pool_name),
        "DeviceName": gojson.go_string(device.device_name),
    }
    if share_id:
        result["ShareID"] = None if device.share_id is None else gojson.go_string(device.share_id)
    result["RequestNames"] = _strings(device.request_names)
    result["CDIDeviceIDs"] = _strings(device.cdi_device_ids)
    return result


def _strings(values: Sequence[str] | None) -> list[str] | None:
    return None if values is None else list(map(gojson.go_string, values))


def _driver_json(state: DriverState, share_id: bool) -> dict[str, Any]:
    devices = state.devices
    result: dict[str, Any] = {
        "Devices": None if devices is None else [_device_json(d, share_id) for d in devices]
    }
    if state.skip_node_operations:
        result["skipNodeOperations"] = gojson.go_string(state.skip_node_operations)
    return result


def entry_to_json(state: ClaimInfoState, *, share_id: bool = True) -> dict[str, Any]:
    """One ``ClaimInfoStateList`` element as JSON-ready dicts, keys in Go field order, maps sorted."""
    pods = state.pod_uids
    drivers = state.driver_state
    return {
        "ClaimUID": gojson.go_string(state.claim_uid),
        "ClaimName": gojson.go_string(state.claim_name),
        "Namespace": gojson.go_string(state.namespace),
        "PodUIDs": None if pods is None else {uid: {} for uid in sorted(map(gojson.go_string, pods))},
        "DriverState": None
        if drivers is None
        else {gojson.go_string(name): _driver_json(drivers[name], share_id) for name in sorted(drivers)},
    }


def encode_data(
    entries: Sequence[ClaimInfoState] | None, *, share_id: bool = True, list_key: str = LIST_KEY
) -> str:
    """The inner JSON (``Data``): ``None`` gives ``null`` (a fresh checkpoint), ``[]`` gives ``[]``."""
    return data_from_items(entries_to_json(entries, share_id=share_id), list_key=list_key)


def entries_to_json(
    entries: Sequence[ClaimInfoState] | None, *, share_id: bool = True
) -> list[dict[str, Any]] | None:
    """Every entry as :func:`entry_to_json`, in the order the file lists them (``None`` stays ``None``)."""
    if entries is None:
        return None
    return [entry_to_json(e, share_id=share_id) for e in sorted(entries, key=entry_sort_key)]


def data_from_items(items: list[dict[str, Any]] | None, *, list_key: str = LIST_KEY) -> str:
    """The inner JSON (``Data``) for entries already in :func:`entries_to_json` form."""
    return gojson.go_marshal({"kind": CHECKPOINT_KIND, "apiVersion": CHECKPOINT_API_VERSION, list_key: items})


def envelope(data: str) -> bytes:
    """The file bytes for inner JSON ``data``: ``{"Data":...,"Checksum":crc32}``."""
    return gojson.go_marshal({"Data": data, "Checksum": checksum(data)}).encode("utf-8")


def encode(
    entries: Sequence[ClaimInfoState] | None, *, share_id: bool = True, list_key: str = LIST_KEY
) -> bytes:
    """The file bytes a current kubelet writes for ``entries`` (sorted; see the module doc).

    ``share_id=False`` writes devices without the ``ShareID`` key, as kubelets
    1.31-1.34 do. ``list_key`` may be :data:`ENTRIES_KEY` to reproduce that variant.
    """
    return envelope(encode_data(entries, share_id=share_id, list_key=list_key))


def decode(blob: bytes, *, verify: bool = True) -> DecodedCheckpoint:
    """Decode a checkpoint file of either format.

    With ``verify`` (the default) a checksum mismatch raises; without it the result
    records both checksums so that a tool can show a damaged file. Every problem
    raises :class:`~drasim.errors.CorruptCheckpointError` saying what is wrong.
    """
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CorruptCheckpointError(f"not valid UTF-8 at byte {err.start}") from None
    document = gojson.parse(text, "file")
    if not isinstance(document, JsonObject):
        raise CorruptCheckpointError(
            f"expected a JSON object at the top level, got {gojson.describe(document)}"
        )
    keys = {gojson.fold_name(key) for key, _ in document}
    if "data" in keys:
        return _decode_current(document, verify)
    if keys & {"version", "entries"}:
        return _decode_legacy(document, verify)
    raise CorruptCheckpointError(
        "not a DRA checkpoint: expected the keys Data and Checksum "
        "(or version, entries and checksum of the 1.26-1.30 format)"
    )


def _mismatch(stored: int, computed: int, detail: str = "") -> CorruptCheckpointError:
    return CorruptCheckpointError(
        f"checkpoint is corrupted: checksum mismatch: stored {stored}, computed {computed}{detail}"
    )


def _decode_legacy(document: JsonObject, verify: bool) -> DecodedCheckpoint:
    legacy = decode_legacy(document)
    layout = legacy.matching_layout
    if layout is None:
        if verify:
            others = ", ".join(f"{lay.value}: {value}" for lay, value in legacy.checksums.items())
            raise _mismatch(
                legacy.stored_checksum,
                legacy.checksums[LegacyLayout.V1_30],
                f" (legacy 1.26-1.30 format; by type layout {others})",
            )
        layout = LegacyLayout.V1_30
    return DecodedCheckpoint(
        format=CheckpointFormat.LEGACY,
        variant=layout.value,
        stored_checksum=legacy.stored_checksum,
        computed_checksum=legacy.checksums[layout],
        legacy_entries=list(legacy.entries or []),
        list_is_null=legacy.entries is None,
    )


def _decode_current(document: JsonObject, verify: bool) -> DecodedCheckpoint:
    fields = gojson.struct_fields(document, ("Data", "Checksum"))
    data = gojson.as_string(fields.get("Data"), "Data")
    stored = gojson.as_uint(fields.get("Checksum"), 32, "Checksum")
    computed = checksum(data)
    if verify and stored != computed:
        raise _mismatch(stored, computed)
    inner = gojson.parse(data, "Data")
    if not isinstance(inner, JsonObject):
        raise CorruptCheckpointError(f"Data: expected a JSON object, got {gojson.describe(inner)}")
    body = gojson.struct_fields(inner, ("kind", "apiVersion", LIST_KEY, ENTRIES_KEY))
    _check_type_meta(body, "kind", CHECKPOINT_KIND)
    _check_type_meta(body, "apiVersion", CHECKPOINT_API_VERSION)
    list_key = ENTRIES_KEY if ENTRIES_KEY in body and LIST_KEY not in body else LIST_KEY
    path = f"Data.{list_key}"
    items = gojson.as_list(body.get(list_key), path)
    reader = _StateReader()
    entries = [] if items is None else [reader.state(v, p) for p, v in gojson.elements(items, path)]
    return DecodedCheckpoint(
        format=CheckpointFormat.CURRENT,
        variant=list_key,
        stored_checksum=stored,
        computed_checksum=computed,
        entries=entries,
        list_is_null=items is None,
        share_id_written=reader.share_id_written,
        data=data,
    )


def _check_type_meta(body: dict[str, Any], name: str, expected: str) -> None:
    if name not in body:
        raise CorruptCheckpointError(f'Data: missing {name} (expected "{expected}")')
    value = gojson.as_string(body[name], f"Data.{name}")
    if value != expected:
        raise CorruptCheckpointError(f'Data.{name}: expected "{expected}", got {gojson.describe(value)}')


_STATE_FIELDS = ("ClaimUID", "ClaimName", "Namespace", "PodUIDs", "DriverState")
_DRIVER_FIELDS = ("Devices", "skipNodeOperations")
_DEVICE_FIELDS = ("PoolName", "DeviceName", "ShareID", "RequestNames", "CDIDeviceIDs")


class _StateReader:
    """Decodes ``ClaimInfoState`` values as ``json.Unmarshal`` would, noting ShareID keys."""

    def __init__(self) -> None:
        self.share_id_written: bool | None = None

    def state(self, value: Any, path: str) -> ClaimInfoState:
        fields = gojson.struct_fields(gojson.as_object(value, path) or JsonObject(), _STATE_FIELDS)
        state = ClaimInfoState(
            claim_uid=gojson.as_string(fields.get("ClaimUID"), f"{path}.ClaimUID"),
            claim_name=gojson.as_string(fields.get("ClaimName"), f"{path}.ClaimName"),
            namespace=gojson.as_string(fields.get("Namespace"), f"{path}.Namespace"),
            pod_uids=None,
            driver_state=None,
        )
        pods = gojson.as_object(fields.get("PodUIDs"), f"{path}.PodUIDs")
        if pods is not None:
            state.pod_uids = set()
            for uid, member in pods:
                gojson.as_object(member, gojson.key_path(f"{path}.PodUIDs", uid))
                state.pod_uids.add(uid)
        drivers = gojson.as_object(fields.get("DriverState"), f"{path}.DriverState")
        if drivers is not None:
            state.driver_state = {
                name: self.driver(v, gojson.key_path(f"{path}.DriverState", name)) for name, v in drivers
            }
        return state

    def driver(self, value: Any, path: str) -> DriverState:
        fields = gojson.struct_fields(gojson.as_object(value, path) or JsonObject(), _DRIVER_FIELDS)
        items = gojson.as_list(fields.get("Devices"), f"{path}.Devices")
        return DriverState(
            devices=None
            if items is None
            else [self.device(v, p) for p, v in gojson.elements(items, f"{path}.Devices")],
            skip_node_operations=gojson.as_string(
                fields.get("skipNodeOperations"), f"{path}.skipNodeOperations"
            ),
        )

    def device(self, value: Any, path: str) -> Device:
        fields = gojson.struct_fields(gojson.as_object(value, path) or JsonObject(), _DEVICE_FIELDS)
        has_share_id = "ShareID" in fields
        self.share_id_written = has_share_id or bool(self.share_id_written)
        return Device(
            pool_name=gojson.as_string(fields.get("PoolName"), f"{path}.PoolName"),
            device_name=gojson.as_string(fields.get("DeviceName"), f"{path}.DeviceName"),
            request_names=gojson.as_string_list(fields.get("RequestNames"), f"{path}.RequestNames"),
            cdi_device_ids=gojson.as_string_list(fields.get("CDIDeviceIDs"), f"{path}.CDIDeviceIDs"),
            share_id=gojson.as_optional_string(fields.get("ShareID"), f"{path}.ShareID"),
        )
