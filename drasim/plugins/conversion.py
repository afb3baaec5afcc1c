"""Protobuf <-> :mod:`drasim.values` for the DRA plugin API (v1, v1beta1 and v1alpha4).

v1beta1 and v1alpha4 messages are v1 without ``Device.share_id``; v1alpha4 (kubelets
1.31-1.33) is advertised as ``v1alpha3.NodeService`` and served as ``/v1alpha3.Node``.
The kubelet wraps a v1beta1
client so that the rest of it sees v1 types (upstream ``V1Beta1ClientWrapper``).
Here the same happens by converting both versions into the same plain values.

A reply map entry without a value (a Go ``nil``) cannot be told apart from an empty
message after protobuf parsing, so :func:`nil_map_keys` reads the raw bytes.
Journal payloads are JSON-ready dicts keyed by the proto field names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drasim.apiversions import DRA_APIS, DRA_V1, DRA_V1ALPHA4, DRA_V1BETA1, dra_api
from drasim.values import ClaimRef, Device, PrepareResult, UnprepareResult

V1_SERVICE = DRA_V1
V1BETA1_SERVICE = DRA_V1BETA1
#: How plugins advertised v1alpha4 (upstream ``v1alpha4.NodeService``, a historical misnomer).
V1ALPHA4_SERVICE = DRA_V1ALPHA4

#: proto package of each DRA service name a plugin may advertise (from :mod:`drasim.apiversions`).
SERVICE_PACKAGES = {api.service: api.proto_package for api in DRA_APIS}
#: gRPC service path of each advertised name.
SERVICE_PATHS = {api.service: api.path for api in DRA_APIS}


def method_path(service: str, method: str) -> str:
    """Full gRPC method path, e.g. ``/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources``."""
    return f"{SERVICE_PATHS[service]}/{method}"


#: The generated message module of each service, looked up once (every call needs it).
_MODULES: dict[str, Any] = {}


def _module(service: str) -> Any:
    module = _MODULES.get(service)
    if module is None:
        module = _MODULES[service] = dra_api(service).messages
    return module


def prepare_request(service: str, claims: Sequence[ClaimRef]) -> bytes:
    """Serialized NodePrepareResourcesRequest."""
    return _serialized(_module(service).NodePrepareResourcesRequest(), claims)


def unprepare_request(service: str, claims: Sequence[ClaimRef]) -> bytes:
    """Serialized NodeUnprepareResourcesRequest."""
    return _serialized(_module(service).NodeUnprepareResourcesRequest(), claims)


def _serialized(msg: Any, claims: Sequence[ClaimRef]) -> bytes:
    add = msg.claims.add  # builds each Claim in place (no message copied into the list)
    for claim in claims:
        add(namespace=claim.namespace, uid=claim.uid, name=claim.name)
    return bytes(msg.SerializeToString())


def prepare_response(service: str, data: bytes) -> dict[str, PrepareResult | None]:
    """Parse a NodePrepareResourcesResponse; nil map values become ``None``."""
    pb = _module(service)
    msg = pb.NodePrepareResourcesResponse.FromString(data)
    nil = nil_map_keys(data)
    has_share_id = dra_api(service).share_id
    out: dict[str, PrepareResult | None] = {}
    for uid, result in msg.claims.items():
        if uid in nil:
            out[uid] = None
            continue
        devices = tuple([_device(has_share_id, d) for d in result.devices])
        out[uid] = PrepareResult(devices=devices, error=result.error)
    return out


def _device(has_share_id: bool, dev: Any) -> Device:
    share_id = dev.share_id if has_share_id and dev.HasField("share_id") else None
    return Device(
        pool_name=dev.pool_name,
        device_name=dev.device_name,
        # An empty repeated field is a nil slice in Go, which the checkpoint writes as null.
        request_names=tuple(dev.request_names) or None,
        cdi_device_ids=tuple(dev.cdi_device_ids) or None,
        share_id=share_id,
    )


def unprepare_response(service: str, data: bytes) -> dict[str, UnprepareResult | None]:
    """Parse a NodeUnprepareResourcesResponse; nil map values become ``None``."""
    pb = _module(service)
    msg = pb.NodeUnprepareResourcesResponse.FromString(data)
    nil = nil_map_keys(data)
    return {uid: None if uid in nil else UnprepareResult(error=r.error) for uid, r in msg.claims.items()}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            msg = "truncated varint"
            raise ValueError(msg)
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int, bytes | int]]:
    """(field number, wire type, payload) for every field of one message."""
    out: list[tuple[int, int, bytes | int]] = []
    pos = 0
    end = len(data)
    while pos < end:
        tag = data[pos]
        if tag < 0x80:  # one-byte tags and lengths (the common case) without a call
            pos += 1
        else:
            tag, pos = _varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 2:
            if pos < end and data[pos] < 0x80:
                length = data[pos]
                pos += 1
            else:
                length, pos = _varint(data, pos)
            out.append((number, wire, data[pos : pos + length]))
            pos += length
        elif wire == 0:
            value, pos = _varint(data, pos)
            out.append((number, wire, value))
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            msg = f"unsupported wire type {wire}"
            raise ValueError(msg)
    return out


def nil_map_keys(data: bytes) -> set[str]:
    """Keys of the ``claims`` map (field 1) whose entry carries no value (field 2)."""
    keys: set[str] = set()
    pos, end = 0, len(data)
    # The usual reply, as Go writes it, read inline: every field is a ``claims`` entry (tag
    # 0x0a) shorter than 128 bytes holding its key (tag 0x0a, shorter than 128 bytes) and
    # then its value (tag 0x12), or the key alone. Anything else takes the general parse.
    while pos < end:
        if data[pos] != 0x0A or pos + 1 >= end or data[pos + 1] >= 0x80:
            return _nil_map_keys(data)
        start, stop = pos + 2, pos + 2 + data[pos + 1]
        if stop > end or stop - start < 2 or data[start] != 0x0A or data[start + 1] >= 0x80:
            return _nil_map_keys(data)
        key_end = start + 2 + data[start + 1]
        if key_end == stop:
            keys.add(data[start + 2 : key_end].decode("utf-8", errors="replace"))
        elif key_end > stop or data[key_end] != 0x12:
            return _nil_map_keys(data)
        pos = stop
    return keys


def _nil_map_keys(data: bytes) -> set[str]:
    """:func:`nil_map_keys` for any encoding: every field parsed."""
    keys: set[str] = set()
    for number, wire, payload in _fields(data):
        if number != 1 or wire != 2 or not isinstance(payload, bytes):
            continue
        key: bytes | None = None
        has_value = False
        for n, w, p in _fields(payload):
            if n == 2:
                has_value = True
                break
            if key is None and n == 1 and w == 2 and isinstance(p, bytes):
                key = p
        if not has_value:
            keys.add((key or b"").decode("utf-8", errors="replace"))
    return keys


def claims_json(claims: Sequence[ClaimRef]) -> dict[str, Any]:
    """Journal form of a prepare/unprepare request (fresh plain values, shared with nobody)."""
    return {"claims": [{"namespace": c.namespace, "uid": c.uid, "name": c.name} for c in claims]}


def device_json(device: Device) -> dict[str, Any]:
    """Journal form of one device; ``share_id`` only when set."""
    out: dict[str, Any] = {
        "request_names": None if device.request_names is None else list(device.request_names),
        "pool_name": device.pool_name,
        "device_name": device.device_name,
        "cdi_device_ids": None if device.cdi_device_ids is None else list(device.cdi_device_ids),
    }
    if device.share_id is not None:
        out["share_id"] = device.share_id
    return out


def prepare_json(results: Mapping[str, PrepareResult | None]) -> dict[str, Any]:
    """Journal form of a NodePrepareResources reply (fresh plain values, shared with nobody)."""
    claims: dict[str, Any] = {}
    for uid, result in results.items():
        claims[uid] = (
            None
            if result is None
            else {"devices": [device_json(d) for d in result.devices], "error": result.error}
        )
    return {"claims": claims}


def unprepare_json(results: Mapping[str, UnprepareResult | None]) -> dict[str, Any]:
    """Journal form of a NodeUnprepareResources reply (fresh plain values, shared with nobody)."""
    return {"claims": {uid: None if r is None else {"error": r.error} for uid, r in results.items()}}
