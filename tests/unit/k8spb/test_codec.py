"""decode_request_body / encode_object: round trips, Go-style bodies, hand-built wire bytes, errors."""

from __future__ import annotations

import copy
import sys
from typing import Any

import pytest

from drasim.apiserver.k8spb import MAGIC, decode_request_body, encode_object
from drasim.errors import ApiError, ConfigError

objects: Any = sys.modules["k8spb_test_objects"]  # loaded by tests/conftest.py
RESOURCE = {"group": "resource.k8s.io", "version": "v1"}


def _roundtrip(obj: dict[str, Any], **target: str) -> dict[str, Any]:
    group, _, version = obj["apiVersion"].rpartition("/")
    where = target or {"group": group, "version": version}
    return decode_request_body(encode_object(obj), kind=obj["kind"], **where)


@pytest.mark.parametrize(
    "factory",
    [
        objects.example_driver_slice,
        objects.full_resource_slice,
        objects.counters_slice,
        objects.allocated_claim,
        objects.device_class,
        objects.claim_template,
        objects.node,
        objects.delete_options,
    ],
)
def test_roundtrip_is_identity(factory: Any) -> None:
    obj = factory()
    assert _roundtrip(copy.deepcopy(obj)) == obj


def test_example_driver_slice_keeps_every_device_and_attribute() -> None:
    decoded = _roundtrip(objects.example_driver_slice())
    devices = decoded["spec"]["devices"]
    assert [d["name"] for d in devices] == [f"gpu-{i}" for i in range(8)]
    assert devices[3]["attributes"]["index"] == {"int": 3}
    assert devices[3]["attributes"]["driverVersion"] == {"version": "1.0.0"}
    assert devices[3]["capacity"] == {"memory": {"value": "80Gi"}}
    assert decoded["metadata"]["ownerReferences"][0]["controller"] is True


def test_zero_valued_pointers_survive() -> None:
    decoded = _roundtrip(objects.full_resource_slice())
    part0 = decoded["spec"]["devices"][0]
    assert part0["attributes"]["healthy"] == {"bool": False}
    assert part0["attributes"]["index"] == {"int": 0}
    assert part0["bindsToNode"] is False
    assert decoded["spec"]["pool"]["generation"] == 0


def test_go_style_zero_fields_are_dropped_like_json_omitempty() -> None:
    """Go writes every non-pointer scalar (and zero Time structs); the JSON view omits them."""
    obj = objects.example_driver_slice()
    plain = encode_object(obj)
    go_style = encode_object(obj, go_zero_fields=True)
    assert len(go_style) > len(plain)
    assert decode_request_body(go_style, kind="ResourceSlice", **RESOURCE) == obj


def test_go_style_keeps_required_zero_fields() -> None:
    obj = objects.example_driver_slice()
    obj["spec"]["pool"] = {"name": "node-1"}
    decoded = decode_request_body(encode_object(obj, go_zero_fields=True), kind="ResourceSlice", **RESOURCE)
    assert decoded["spec"]["pool"] == {"name": "node-1", "generation": 0, "resourceSliceCount": 0}
    assert "uid" not in decoded["metadata"]
    assert "creationTimestamp" not in decoded["metadata"]


def test_inline_device_configuration_is_flat_in_json() -> None:
    decoded = _roundtrip(objects.allocated_claim())
    config = decoded["spec"]["devices"]["config"][0]
    assert set(config) == {"requests", "opaque"}
    assert config["opaque"]["parameters"]["kind"] == "GpuConfig"


def test_v1beta2_bodies_decode_with_the_same_layout() -> None:
    obj = objects.example_driver_slice()
    obj["apiVersion"] = "resource.k8s.io/v1beta2"
    decoded = decode_request_body(
        encode_object(obj), group="resource.k8s.io", version="v1beta2", kind="ResourceSlice"
    )
    assert decoded == obj


@pytest.mark.parametrize("api_version", ["meta.k8s.io/v1", "resource.k8s.io/v1", "v1"])
def test_delete_options_from_any_group_version(api_version: str) -> None:
    """client-go labels DeleteOptions with its own group version; the server may expect core v1."""
    obj = objects.delete_options()
    obj["apiVersion"] = api_version
    body = encode_object(obj)
    decoded = decode_request_body(body, group="", version="v1", kind="DeleteOptions")
    assert decoded["apiVersion"] == api_version
    assert decoded["preconditions"] == {
        "uid": "0b7d4c8e-1111-4a55-8d9e-2f4a7b0c9d01",
        "resourceVersion": "42",
    }
    assert decoded["gracePeriodSeconds"] == 0


def test_status_roundtrip() -> None:
    status = {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": 'resourceslices "x" not found',
        "reason": "NotFound",
        "details": {"name": "x", "group": "resource.k8s.io", "kind": "resourceslices"},
        "code": 404,
    }
    expected = {k: v for k, v in status.items() if k != "metadata"}
    assert _roundtrip(status) == {**expected, "metadata": {}}


def test_time_is_rfc3339_seconds() -> None:
    obj = objects.example_driver_slice()
    obj["metadata"]["creationTimestamp"] = "2026-03-04T05:06:07.891+00:00"
    decoded = _roundtrip(obj)
    assert decoded["metadata"]["creationTimestamp"] == "2026-03-04T05:06:07Z"


# ------------------------------------------------------------- hand-built wire bytes


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _ld(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _vi(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _s(field: int, text: str) -> bytes:
    return _ld(field, text.encode())


def _handmade_slice_body(extra_device_bytes: bytes = b"", *, empty_time: bool = True) -> bytes:
    """A ResourceSlice written byte by byte from upstream's field numbers, not from our encoder.

    Like Go, it writes map entries sorted by key; with ``empty_time`` it also writes
    the zero ``creationTimestamp`` as an empty message, as Go does.
    """
    meta = _s(2, "node-1-gpu.example.com-")  # generateName
    if empty_time:
        meta += _ld(8, b"")
    attr_ver = _ld(2, _s(1, "driverVersion") + _ld(2, _s(5, "1.0.0")))
    attr_int = _ld(2, _s(1, "index") + _ld(2, _vi(2, 0)))  # attributes["index"] = {int: 0}
    capacity = _ld(3, _s(1, "memory") + _ld(2, _ld(1, _s(1, "80Gi"))))
    device = _s(1, "gpu-0") + attr_ver + attr_int + capacity + extra_device_bytes
    pool = _s(1, "node-1") + _vi(2, 1) + _vi(3, 1)
    spec = _s(1, "gpu.example.com") + _ld(2, pool) + _s(3, "node-1") + _ld(6, device)
    raw = _ld(1, meta) + _ld(2, spec)
    type_meta = _s(1, "resource.k8s.io/v1") + _s(2, "ResourceSlice")
    return MAGIC + _ld(1, type_meta) + _ld(2, raw) + _s(3, "") + _s(4, "")


def test_decodes_handmade_wire_bytes() -> None:
    decoded = decode_request_body(_handmade_slice_body(), kind="ResourceSlice", **RESOURCE)
    assert decoded == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"generateName": "node-1-gpu.example.com-"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "node-1",
            "devices": [
                {
                    "name": "gpu-0",
                    "attributes": {"driverVersion": {"version": "1.0.0"}, "index": {"int": 0}},
                    "capacity": {"memory": {"value": "80Gi"}},
                }
            ],
        },
    }


def test_our_encoder_matches_handmade_bytes() -> None:
    obj = decode_request_body(_handmade_slice_body(), kind="ResourceSlice", **RESOURCE)
    assert encode_object(obj) == _handmade_slice_body(empty_time=False)


def test_unknown_fields_are_skipped_not_fatal() -> None:
    body = _handmade_slice_body(extra_device_bytes=_s(99, "future-field") + _vi(98, 7))
    decoded = decode_request_body(body, kind="ResourceSlice", **RESOURCE)
    assert decoded["spec"]["devices"][0]["name"] == "gpu-0"


# ------------------------------------------------------------- errors


def _error(body: bytes, **where: str) -> ApiError:
    target = {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceSlice", **where}
    with pytest.raises(ApiError) as info:
        decode_request_body(body, **target)  # type: ignore[arg-type]
    return info.value


def test_bad_magic_is_400() -> None:
    err = _error(b'{"kind": "ResourceSlice"}')
    assert (err.code, err.reason) == (400, "BadRequest")
    assert "magic" in err.message


def test_truncated_body_is_400() -> None:
    body = encode_object(objects.example_driver_slice())
    err = _error(body[:-7])
    assert (err.code, err.reason) == (400, "BadRequest")
    assert "cannot decode protobuf" in err.message


def test_wrong_kind_is_400() -> None:
    err = _error(encode_object(objects.device_class()))
    assert err.code == 400
    assert "'DeviceClass'" in err.message
    assert "'ResourceSlice'" in err.message


def test_wrong_version_is_400() -> None:
    obj = objects.example_driver_slice()
    obj["apiVersion"] = "resource.k8s.io/v1beta2"
    err = _error(encode_object(obj))
    assert err.code == 400
    assert "resource.k8s.io/v1beta2" in err.message


def test_unknown_kind_is_415() -> None:
    body = MAGIC + _ld(1, _s(1, "v1") + _s(2, "Pod")) + _ld(2, b"")
    err = _error(body, group="", version="v1", kind="Pod")
    assert (err.code, err.reason) == (415, "UnsupportedMediaType")
    assert "v1 Pod" in err.message


def test_v1beta1_claim_is_415_with_reason() -> None:
    body = MAGIC + _ld(1, _s(1, "resource.k8s.io/v1beta1") + _s(2, "ResourceClaim")) + _ld(2, b"")
    err = _error(body, version="v1beta1", kind="ResourceClaim")
    assert err.code == 415
    assert "resource.k8s.io/v1beta1 ResourceSlice only, not ResourceClaim" in err.message


def test_v1beta1_slice_nests_devices_under_basic() -> None:
    v1 = objects.example_driver_slice()
    beta = copy.deepcopy(v1)
    beta["apiVersion"] = "resource.k8s.io/v1beta1"
    beta["spec"]["devices"] = [
        {"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
        for d in v1["spec"]["devices"]
    ]
    beta["spec"]["devices"][0]["basic"]["bindsToNode"] = False
    body = encode_object(beta, go_zero_fields=True)
    assert decode_request_body(body, group="resource.k8s.io", version="v1beta1", kind="ResourceSlice") == beta
    # Same wire bytes for the shared parts: basic (field 2) holds what v1 puts in the device itself.
    attrs = beta["spec"]["devices"][1]["basic"]["attributes"]
    assert attrs["driverVersion"] == {"version": "1.0.0"}


def test_list_type_attributes_round_trip() -> None:
    obj = objects.example_driver_slice(devices=1)
    obj["spec"]["devices"][0]["attributes"]["links"] = {"ints": [0, 2]}
    obj["spec"]["devices"][0]["attributes"]["models"] = {"strings": ["a", "b"]}
    assert _roundtrip(obj) == obj


def test_content_encoding_is_415() -> None:
    body = MAGIC + _ld(1, _s(1, "resource.k8s.io/v1") + _s(2, "ResourceSlice")) + _ld(2, b"") + _s(3, "gzip")
    assert _error(body).code == 415


def test_bad_embedded_json_is_400() -> None:
    config = _ld(1, _ld(1, _s(1, "gpu.example.com") + _ld(2, _ld(1, b"{not json"))))
    spec = _ld(2, config)
    body = MAGIC + _ld(1, _s(1, "resource.k8s.io/v1") + _s(2, "DeviceClass")) + _ld(2, _ld(2, spec))
    err = _error(body, kind="DeviceClass")
    assert err.code == 400
    assert "parameters" in err.message


def test_empty_type_meta_is_filled_from_the_url() -> None:
    raw = _ld(2, _s(1, "gpu.example.com"))
    decoded = decode_request_body(MAGIC + _ld(2, raw), kind="ResourceSlice", **RESOURCE)
    assert decoded == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "spec": {"driver": "gpu.example.com"},
    }


@pytest.mark.parametrize(
    ("obj", "needle"),
    [
        ({"kind": "ResourceSlice"}, "apiVersion and kind"),
        ({"apiVersion": "v1", "kind": "Pod"}, "no protobuf description"),
        ({**objects.example_driver_slice(), "spec": {"drivr": "x"}}, "spec.drivr: unknown field"),
        ({**objects.example_driver_slice(), "spec": {"pool": {"generation": "1"}}}, "expected an integer"),
        ({**objects.example_driver_slice(), "metadata": {"creationTimestamp": "yesterday"}}, "RFC 3339"),
    ],
)
def test_encode_rejects_bad_objects(obj: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        encode_object(obj)


def test_node_with_fields_we_do_not_describe() -> None:
    """A Node from a newer client (images, daemonEndpoints, features...) decodes without them."""
    image = _ld(1, _s(1, "registry.k8s.io/pause:3.10")) + _vi(2, 321_000)
    status = _ld(8, image) + _ld(6, _ld(1, _vi(1, 10250))) + _s(3, "Running")
    raw = _ld(1, _s(1, "n1") + _s(5, "node-uid")) + _ld(2, b"") + _ld(3, status)
    body = MAGIC + _ld(1, _s(1, "v1") + _s(2, "Node")) + _ld(2, raw)
    decoded = decode_request_body(body, group="", version="v1", kind="Node")
    assert decoded == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "uid": "node-uid"},
        "spec": {},
        "status": {"phase": "Running"},
    }
