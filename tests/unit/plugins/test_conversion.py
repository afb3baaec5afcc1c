"""Protobuf <-> values for the DRA plugin API, both versions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drasim._proto.dra.v1 import api_pb2 as v1
from drasim._proto.dra.v1beta1 import api_pb2 as v1beta1
from drasim.plugins import conversion
from drasim.values import ClaimRef, Device, PrepareResult, UnprepareResult

CLAIMS = [ClaimRef("ns", "u1", "c1"), ClaimRef("ns", "u2", "c2")]


def _entry(key: str, value: bytes | None) -> bytes:
    """One map entry of field 1, written by hand (a Go nil value has no field 2)."""
    body = b"\x0a" + bytes([len(key)]) + key.encode()
    if value is not None:
        body += b"\x12" + bytes([len(value)]) + value
    return b"\x0a" + bytes([len(body)]) + body


def test_method_paths() -> None:
    assert conversion.method_path("v1.DRAPlugin", "NodePrepareResources") == (
        "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
    )
    assert conversion.method_path("v1beta1.DRAPlugin", "NodeUnprepareResources") == (
        "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources"
    )


@pytest.mark.parametrize(("service", "pb"), [("v1.DRAPlugin", v1), ("v1beta1.DRAPlugin", v1beta1)])
def test_requests_carry_namespace_uid_name(service: str, pb: object) -> None:
    for encode, message in (
        (conversion.prepare_request, "NodePrepareResourcesRequest"),
        (conversion.unprepare_request, "NodeUnprepareResourcesRequest"),
    ):
        parsed = getattr(pb, message).FromString(encode(service, CLAIMS))
        assert [(c.namespace, c.uid, c.name) for c in parsed.claims] == [
            ("ns", "u1", "c1"),
            ("ns", "u2", "c2"),
        ]


def test_v1_prepare_response_with_share_id_and_empty_lists() -> None:
    msg = v1.NodePrepareResourcesResponse(
        claims={
            "u1": v1.NodePrepareResourceResponse(
                devices=[
                    v1.Device(pool_name="p", device_name="d1", request_names=["r"], cdi_device_ids=["x/y=z"]),
                    v1.Device(pool_name="p", device_name="d2", share_id=""),
                ]
            ),
            "u2": v1.NodePrepareResourceResponse(error="boom"),
        }
    )
    result = conversion.prepare_response("v1.DRAPlugin", msg.SerializeToString())
    assert result == {
        "u1": PrepareResult(
            devices=(
                Device("p", "d1", ("r",), ("x/y=z",), None),
                Device("p", "d2", None, None, ""),  # optional share_id set to "" is kept
            )
        ),
        "u2": PrepareResult(error="boom"),
    }


def test_v1beta1_ignores_share_id_field() -> None:
    msg = v1beta1.NodePrepareResourcesResponse(
        claims={
            "u1": v1beta1.NodePrepareResourceResponse(
                devices=[v1beta1.Device(pool_name="p", device_name="d")]
            )
        }
    )
    result = conversion.prepare_response("v1beta1.DRAPlugin", msg.SerializeToString())
    assert result == {"u1": PrepareResult(devices=(Device("p", "d"),))}


def test_nil_map_values_become_none() -> None:
    value = v1.NodePrepareResourceResponse(error="x").SerializeToString()
    data = _entry("nil", None) + _entry("set", value) + _entry("empty", b"")
    assert conversion.nil_map_keys(data) == {"nil"}
    assert conversion.prepare_response("v1.DRAPlugin", data) == {
        "nil": None,
        "set": PrepareResult(error="x"),
        "empty": PrepareResult(),
    }
    assert conversion.unprepare_response("v1beta1.DRAPlugin", _entry("nil", None) + _entry("ok", b"")) == {
        "nil": None,
        "ok": UnprepareResult(),
    }


def test_nil_map_keys_skips_unknown_fields_and_rejects_garbage() -> None:
    unknown = b"\x10\x05" + b"\x19" + b"\x00" * 8 + b"\x25" + b"\x00" * 4  # varint, fixed64, fixed32
    assert conversion.nil_map_keys(unknown + _entry("k", None)) == {"k"}
    with pytest.raises(ValueError, match="wire type"):
        conversion.nil_map_keys(b"\x0b")
    with pytest.raises(ValueError, match="truncated"):
        conversion.nil_map_keys(b"\x08\x80")


def test_journal_forms() -> None:
    assert conversion.claims_json(CLAIMS[:1]) == {"claims": [{"namespace": "ns", "uid": "u1", "name": "c1"}]}
    results = {"u1": PrepareResult(devices=(Device("p", "d"),)), "u2": None}
    assert conversion.prepare_json(results) == {
        "claims": {
            "u1": {
                "devices": [
                    {"request_names": None, "pool_name": "p", "device_name": "d", "cdi_device_ids": None}
                ],
                "error": "",
            },
            "u2": None,
        }
    }
    assert conversion.unprepare_json({"u1": UnprepareResult("e"), "u2": None}) == {
        "claims": {"u1": {"error": "e"}, "u2": None}
    }


def test_v1alpha4_round_trip() -> None:
    """v1alpha4 (advertised as v1alpha3.NodeService) is served as /v1alpha3.Node with v1beta1's messages."""
    from drasim._proto.dra.v1alpha4 import api_pb2 as v1alpha4

    service = conversion.V1ALPHA4_SERVICE
    assert conversion.method_path(service, "NodePrepareResources") == "/v1alpha3.Node/NodePrepareResources"
    request = v1alpha4.NodePrepareResourcesRequest.FromString(
        conversion.prepare_request(service, [ClaimRef(namespace="ns", uid="u1", name="c")])
    )
    assert [(c.namespace, c.uid, c.name) for c in request.claims] == [("ns", "u1", "c")]
    reply = v1alpha4.NodePrepareResourcesResponse(
        claims={
            "u1": v1alpha4.NodePrepareResourceResponse(
                devices=[v1alpha4.Device(pool_name="p", device_name="d")]
            )
        }
    )
    (result,) = conversion.prepare_response(service, reply.SerializeToString()).values()
    assert result is not None
    assert result.devices == (Device(pool_name="p", device_name="d"),)


@pytest.mark.parametrize(
    ("entry", "nil"),
    [
        (b"\x0a\x01k", True),  # key alone: the fast path
        (b"\x0a\x01k\x12\x00", False),  # key, empty value: the fast path
        (b"\x12\x00\x0a\x01k", False),  # value before key: the general parse
        (b"\x0a\x01k\x18\x01", True),  # key and an unknown field, no value
        (b"\x0a\x01k\x18\x01\x12\x00", False),  # the value after an unknown field
        (b"\x0a\x01k\x0a\x01j", True),  # a repeated key: the first one counts
        (b"\x0a\x81\x01" + b"k" * 129, True),  # a two-byte key length: the general parse
        (b"", True),  # an empty entry: key ""
    ],
)
def test_nil_map_keys_fast_and_general_paths_agree(entry: bytes, nil: bool) -> None:
    size = len(entry)
    length = bytes([size]) if size < 0x80 else bytes([size & 0x7F | 0x80, size >> 7])
    data = b"\x0a" + length + entry
    key = "k" * 129 if len(entry) > 100 else ("" if not entry else "k")
    assert conversion.nil_map_keys(data) == ({key} if nil else set())


# Map entries as any encoder might write them: key and value in either order, long lengths
# (two-byte varints), unknown fields inside an entry, and nil values (no field 2).
_entry_parts = st.lists(st.sampled_from(["key", "value", "unknown"]), min_size=0, max_size=3).map(tuple)


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        byte = number & 0x7F
        number >>= 7
        out.append(byte | (0x80 if number else 0))
        if not number:
            return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    return bytes([tag]) + _varint(len(payload)) + payload


@given(
    entries=st.lists(st.tuples(st.text(max_size=140), _entry_parts, st.binary(max_size=140)), max_size=4),
    lead=st.sampled_from([b"", b"\x10\x05"]),
)
def test_the_inline_read_of_nil_map_keys_equals_the_general_parse(entries, lead) -> None:
    data = bytearray(lead)
    for key, parts, value in entries:
        body = b"".join(
            _field(0x0A, key.encode("utf-8", "surrogatepass"))
            if part == "key"
            else _field(0x12, value)
            if part == "value"
            else b"\x18\x01"
            for part in parts
        )
        data += _field(0x0A, body)
    assert conversion.nil_map_keys(bytes(data)) == conversion._nil_map_keys(bytes(data))
    usual = [(k, p, v) for k, p, v in entries if p in {("key",), ("key", "value")}]
    if not lead and len(usual) == len(entries):
        expected = {
            k.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
            for k, p, _ in usual
            if p == ("key",)
        }
        assert conversion.nil_map_keys(bytes(data)) == expected
