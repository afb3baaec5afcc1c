"""Property tests: round trips, single-byte corruption and decoder fuzzing."""

from __future__ import annotations

import contextlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from drasim.checkpoint import codec
from drasim.checkpoint.codec import CheckpointFormat
from drasim.checkpoint.legacy import (
    LegacyClaimInfoState,
    LegacyLayout,
    LegacyResourceHandle,
    encode_legacy,
)
from drasim.errors import CorruptCheckpointError
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

SETTINGS = settings(max_examples=100)  # the rest: tests/conftest.py's profile

# Any Unicode a Go string can hold (no surrogates), biased towards the characters Go escapes.
SPECIAL = st.sampled_from(
    ["<", ">", "&", "\u2028", "\u2029", '"', "\\", "\x00", "\x1f", "\x7f", "é", "😀", "K"]
)
text = st.lists(st.one_of(SPECIAL, st.characters(blacklist_categories=("Cs",))), max_size=8).map("".join)


def optional_strings() -> st.SearchStrategy[tuple[str, ...] | None]:
    return st.none() | st.lists(text, max_size=3).map(tuple)


def devices(share_id: bool) -> st.SearchStrategy[Device]:
    return st.builds(
        Device,
        pool_name=text,
        device_name=text,
        request_names=optional_strings(),
        cdi_device_ids=optional_strings(),
        share_id=(st.none() | text) if share_id else st.none(),
    )


def driver_states(share_id: bool) -> st.SearchStrategy[DriverState]:
    return st.builds(
        DriverState,
        devices=st.none() | st.lists(devices(share_id), max_size=3),
        skip_node_operations=st.sampled_from(["", "All", "Unprepare"]) | text,
    )


def claim_states(share_id: bool = True) -> st.SearchStrategy[ClaimInfoState]:
    return st.builds(
        ClaimInfoState,
        claim_uid=text,
        claim_name=text,
        namespace=text,
        pod_uids=st.none() | st.sets(text, max_size=3),
        driver_state=st.none() | st.dictionaries(text, driver_states(share_id), max_size=3),
    )


state_lists = st.none() | st.lists(claim_states(), max_size=4)


@SETTINGS
@given(state_lists, st.booleans())
def test_encode_then_decode_is_identity(entries, share_id):
    if not share_id:
        entries = [_without_share_ids(e) for e in entries or []] if entries is not None else None
    blob = codec.encode(entries, share_id=share_id)
    decoded = codec.decode(blob)
    assert decoded.format is CheckpointFormat.CURRENT
    assert decoded.checksum_ok
    assert decoded.list_is_null is (entries is None)
    assert decoded.entries == sorted(entries or [], key=codec.entry_sort_key)
    # re-encoding what was read gives the same bytes
    assert codec.encode(None if decoded.list_is_null else decoded.entries, share_id=share_id) == blob
    # the file is plain JSON whose Data is what was checksummed
    assert json.loads(blob)["Data"] == decoded.data


def _without_share_ids(state: ClaimInfoState) -> ClaimInfoState:
    for driver in (state.driver_state or {}).values():
        if driver.devices:
            driver.devices = [
                Device(d.pool_name, d.device_name, d.request_names, d.cdi_device_ids) for d in driver.devices
            ]
    return state


@SETTINGS
@given(st.lists(claim_states(), min_size=1, max_size=3), st.data())
def test_any_single_byte_change_is_detected(entries, data):
    blob = codec.encode(entries)
    index = data.draw(st.integers(0, len(blob) - 1), label="index")
    value = data.draw(st.integers(0, 255).filter(lambda b: b != blob[index]), label="byte")
    damaged = blob[:index] + bytes([value]) + blob[index + 1 :]
    try:
        decoded = codec.decode(damaged)
    except CorruptCheckpointError:
        return
    # Only a change Go's reader cannot see may pass: e.g. \u003c -> \u003C, or a key's case.
    assert decoded.format is CheckpointFormat.CURRENT
    assert decoded.entries == sorted(entries, key=codec.entry_sort_key)


@SETTINGS
@given(st.binary(max_size=300))
def test_decoder_fuzz_with_arbitrary_bytes_raises_only_corrupt_checkpoint(blob):
    for verify in (True, False):
        with contextlib.suppress(CorruptCheckpointError):
            codec.decode(blob, verify=verify)


FIELD_NAMES = [
    "Data", "data", "Checksum", "kind", "apiVersion", "ClaimInfoStateList", "Entries", "ClaimUID", "claimUID",
    "ClaimName", "Namespace", "PodUIDs", "DriverState", "Devices", "skipNodeOperations", "PoolName",
    "DeviceName", "ShareID", "RequestNames", "CDIDeviceIDs", "version", "entries", "checksum", "DriverName",
    "ClassName", "ResourceHandles", "CDIDevices", "driverName", "structuredData",
]  # fmt: skip
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | text,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(FIELD_NAMES) | text, inner, max_size=5)
    ),
    max_leaves=25,
)


@SETTINGS
@given(json_values)
def test_decoder_fuzz_with_json_documents(value):
    with contextlib.suppress(CorruptCheckpointError):
        codec.decode(json.dumps(value).encode())


@SETTINGS
@given(json_values)
def test_decoder_fuzz_with_well_checksummed_random_lists(value):
    inner = json.dumps(
        {
            "kind": "DRACheckpoint",
            "apiVersion": "checkpoint.dra.kubelet.k8s.io/v1",
            "ClaimInfoStateList": value,
        }
    )
    try:
        decoded = codec.decode(codec.envelope(inner))
    except CorruptCheckpointError:
        return
    # whatever decoded must be writable again
    codec.encode(decoded.entries)


@SETTINGS
@given(json_values)
def test_decoder_fuzz_with_random_legacy_entries(value):
    document = json.dumps({"version": "v1", "entries": value, "checksum": 0})
    with contextlib.suppress(CorruptCheckpointError):
        codec.decode(document.encode(), verify=False)


legacy_entries = st.builds(
    LegacyClaimInfoState,
    driver_name=text,
    class_name=text,
    claim_uid=text,
    claim_name=text,
    namespace=text,
    pod_uids=st.none() | st.sets(text, max_size=3),
    resource_handles=st.none()
    | st.lists(st.builds(LegacyResourceHandle, driver_name=text, data=text), max_size=2),
    cdi_devices=st.none() | st.dictionaries(text, optional_strings(), max_size=2),
)


@SETTINGS
@given(st.lists(legacy_entries, max_size=3), st.sampled_from([LegacyLayout.V1_30, LegacyLayout.V1_27_29]))
def test_legacy_encode_then_decode_is_identity(entries, layout):
    decoded = codec.decode(encode_legacy(entries, layout=layout))
    assert decoded.format is CheckpointFormat.LEGACY
    assert decoded.checksum_ok
    assert decoded.legacy_entries == entries
