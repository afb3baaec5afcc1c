"""Byte equality with every upstream checkpoint test vector (reference §4.3, §4.5)."""

from __future__ import annotations

import pytest

from drasim.checkpoint import codec
from drasim.checkpoint.codec import ENTRIES_KEY, CheckpointFormat
from drasim.checkpoint.legacy import (
    LegacyClaimInfoState,
    LegacyLayout,
    LegacyResourceHandle,
    encode_legacy,
    fnv1a_32,
    spew_dump,
)
from drasim.errors import CorruptCheckpointError
from drasim.state import DriverState

# name of the upstream case -> (golden file, CRC without ShareID, CRC with "ShareID":null)
CURRENT = {
    "single": ("current-single", 1656016162, 2570581864),
    "multiple-devices": ("current-multiple-devices", 3369508096, 1223221469),
    "two-claims": ("current-two-claims", 1582256999, 2820117767),
}
# the same states under the pre-merge "Entries" key
ENTRIES_VARIANT = {"single": 1597924435, "multiple-devices": 1812303514, "two-claims": 3633532417}


@pytest.mark.parametrize("case", sorted(CURRENT))
def test_current_vectors_decode_to_the_upstream_states(case, states, golden):
    name, crc, _ = CURRENT[case]
    decoded = codec.decode(golden(name))
    assert decoded.format is CheckpointFormat.CURRENT
    assert decoded.variant == "ClaimInfoStateList"
    assert decoded.stored_checksum == decoded.computed_checksum == crc
    assert decoded.entries == states[case]
    assert decoded.share_id_written is False
    assert decoded.list_is_null is False


@pytest.mark.parametrize("case", sorted(CURRENT))
def test_current_vectors_are_reproduced_byte_for_byte_without_share_id(case, states, golden):
    name, crc, _ = CURRENT[case]
    blob = codec.encode(states[case], share_id=False)
    assert blob == golden(name)
    assert blob.endswith(f',"Checksum":{crc}}}'.encode())


@pytest.mark.parametrize("case", sorted(CURRENT))
def test_share_id_vectors_have_the_computed_checksums(case, states):
    _, _, crc = CURRENT[case]
    blob = codec.encode(states[case])
    decoded = codec.decode(blob)
    assert decoded.stored_checksum == crc
    assert decoded.share_id_written is True
    assert b'\\"ShareID\\":null' in blob


def test_single_with_share_id_null_matches_the_reference_literal(states, golden):
    assert codec.encode(states["single"]) == golden("current-single-shareid-null")
    assert codec.decode(golden("current-single-shareid-null")).entries == states["single"]


@pytest.mark.parametrize("case", sorted(ENTRIES_VARIANT))
def test_entries_key_variant(case, states):
    blob = codec.encode(states[case], share_id=False, list_key=ENTRIES_KEY)
    decoded = codec.decode(blob)
    assert decoded.stored_checksum == ENTRIES_VARIANT[case]
    assert decoded.variant == "Entries"
    assert decoded.entries == states[case]


def test_entries_variant_single_is_byte_identical(states, golden):
    assert codec.encode(states["single"], share_id=False, list_key=ENTRIES_KEY) == golden("entries-single")
    assert codec.decode(golden("entries-single")).entries == states["single"]


def test_incorrect_checksum_is_corrupted_with_both_values(golden):
    with pytest.raises(CorruptCheckpointError) as info:
        codec.decode(golden("current-incorrect-checksum-entries"))
    assert str(info.value) == (
        "checkpoint is corrupted: checksum mismatch: stored 2930258365, computed 3633532417"
    )


def test_incorrect_checksum_file_still_shows_without_verify(states, golden):
    decoded = codec.decode(golden("current-incorrect-checksum-entries"), verify=False)
    assert not decoded.checksum_ok
    assert (decoded.stored_checksum, decoded.computed_checksum) == (2930258365, 3633532417)
    assert decoded.entries == states["two-claims"]


@pytest.mark.parametrize("content", [b"{", b'{"version":"v1","entries":['])
def test_truncated_json_is_unexpected_end_of_input(content):
    with pytest.raises(CorruptCheckpointError, match="unexpected end of JSON input"):
        codec.decode(content)


def test_fresh_checkpoint_has_a_null_list_and_the_reference_checksum():
    data = codec.encode_data(None)
    assert (
        data
        == '{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1","ClaimInfoStateList":null}'  # noqa: E501
    )
    assert codec.checksum(data) == 4010664294
    decoded = codec.decode(codec.encode(None))
    assert decoded.list_is_null
    assert decoded.entries == []
    assert decoded.share_id_written is None


def test_empty_list_is_written_as_brackets():
    assert codec.checksum(codec.encode_data([])) == 2361995144
    assert codec.decode(codec.encode([])).list_is_null is False


def _wrap(list_json: str) -> bytes:
    data = '{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1","ClaimInfoStateList":'
    return codec.envelope(data + list_json + "}")


def test_claiminfo_test_lowercase_literals_decode_case_insensitively(golden):
    first, second = golden("claiminfo-test-lowercase-lists.txt").decode().splitlines()
    one = codec.decode(_wrap(first)).entries
    assert [(s.claim_uid, s.claim_name, s.namespace) for s in one] == [("uid-1", "claim-1", "default")]
    assert one[0].pod_uids is None
    assert one[0].driver_state == {"gpu.com": DriverState(devices=None, skip_node_operations="All")}
    two = codec.decode(_wrap(second)).entries
    assert two[0].driver_state == {"gpu.com": DriverState(devices=[])}


def test_skip_node_operations_round_trips_and_is_omitted_when_empty(golden):
    first, second = golden("claiminfo-test-lowercase-lists.txt").decode().splitlines()
    one = codec.encode_data(codec.decode(_wrap(first)).entries)
    assert '"DriverState":{"gpu.com":{"Devices":null,"skipNodeOperations":"All"}}' in one
    two = codec.encode_data(codec.decode(_wrap(second)).entries)
    assert '"DriverState":{"gpu.com":{"Devices":[]}}' in two


# --- legacy (1.26-1.30) -------------------------------------------------------------

LEGACY_130 = {
    "legacy-1.30-single": 113577689,
    "legacy-1.30-multiple-devices": 1466990255,
    "legacy-1.30-multiple-claims": 471181742,
    "legacy-1.30-restored-remarshalled": 453625682,
}


@pytest.mark.parametrize("name", sorted(LEGACY_130))
def test_legacy_130_vectors_verify_and_reencode_byte_for_byte(name, golden):
    decoded = codec.decode(golden(name))
    assert decoded.format is CheckpointFormat.LEGACY
    assert decoded.variant == "1.30"
    assert decoded.stored_checksum == decoded.computed_checksum == LEGACY_130[name]
    assert encode_legacy(decoded.legacy_entries, layout=LegacyLayout.V1_30) == golden(name)


def _legacy_single(with_handles: bool) -> LegacyClaimInfoState:
    return LegacyClaimInfoState(
        driver_name="test-driver.cdi.k8s.io",
        class_name="class-name",
        claim_uid="067798be-454e-4be4-9047-1aa06aea63f7",
        claim_name="example",
        namespace="default",
        pod_uids={"139cdb46-f989-4f17-9561-ca10cfb509a6"},
        resource_handles=[LegacyResourceHandle("test-driver.cdi.k8s.io", '{"a": "b"}')]
        if with_handles
        else None,
        cdi_devices={"test-driver.cdi.k8s.io": ("example.com/example=cdi-example",)},
    )


def test_legacy_single_decodes_to_the_upstream_state(golden):
    assert codec.decode(golden("legacy-1.30-single")).legacy_entries == [_legacy_single(True)]


def test_legacy_store_output_matches_upstream(golden):
    # TestCheckpointStateStore (legacy): Store(single) marshals to the 113577689 literal.
    assert encode_legacy([_legacy_single(True)]) == golden("legacy-1.30-single")


def test_spew_dumps_match_the_reference_strings(golden):
    dump_126 = spew_dump("v1", [_legacy_single(False)], LegacyLayout.V1_26)
    assert dump_126 == golden("spew-1.26-no-resource-handles.txt").decode()
    assert fnv1a_32(dump_126.encode()) == 153446146
    dump_130 = spew_dump("v1", [_legacy_single(True)], LegacyLayout.V1_30)
    assert dump_130 == golden("spew-1.30-single.txt").decode()
    assert fnv1a_32(dump_130.encode()) == 113577689


def test_old_checkpoint_restore_uses_the_compatibility_path(golden):
    # TestOldCheckpointRestore: a 1.26 file verifies without ResourceHandles, then re-marshals as 453625682.
    decoded = codec.decode(golden("legacy-1.26-no-resource-handles"))
    assert decoded.variant == "1.26"
    assert decoded.stored_checksum == 153446146
    assert encode_legacy(decoded.legacy_entries, layout=LegacyLayout.V1_26) == golden(
        "legacy-1.26-no-resource-handles"
    )
    assert encode_legacy(decoded.legacy_entries) == golden("legacy-1.30-restored-remarshalled")


def test_1_26_sets_string_layout_checksum():
    assert (
        fnv1a_32(spew_dump("v1", [_legacy_single(False)], LegacyLayout.V1_26_SETS_STRING).encode())
        == 112334432
    )


def test_1_27_layout_differs_from_1_30_only_with_handles():
    entries = [_legacy_single(True)]
    blob = encode_legacy(entries, layout=LegacyLayout.V1_27_29)
    decoded = codec.decode(blob)
    assert decoded.variant == "1.27-1.29"
    assert decoded.stored_checksum != 113577689


def test_legacy_invalid_checksum_is_corrupted(golden):
    with pytest.raises(CorruptCheckpointError) as info:
        codec.decode(golden("legacy-invalid-checksum"))
    message = str(info.value)
    assert message.startswith(
        "checkpoint is corrupted: checksum mismatch: stored 1988120168, computed 453625682"
    )
    assert "1.26: 153446146" in message


def test_fnv1a_32_known_values():
    assert fnv1a_32(b"") == 0x811C9DC5
    assert fnv1a_32(b"a") == 0xE40C292C
