"""Go encoding/json rules of the codec, and one test per error message."""

from __future__ import annotations

import json

import pytest

from drasim.checkpoint import codec, gojson
from drasim.errors import CheckpointError, CorruptCheckpointError
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

HEAD = '{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1","ClaimInfoStateList":'


def wrap(list_json: str) -> bytes:
    """A current-format file with a valid checksum around a raw list JSON."""
    return codec.envelope(HEAD + list_json + "}")


def corrupt(blob: bytes | str, *, verify: bool = True) -> str:
    data = blob.encode() if isinstance(blob, str) else blob
    with pytest.raises(CorruptCheckpointError) as info:
        codec.decode(data, verify=verify)
    return str(info.value)


# --- writing ------------------------------------------------------------------------


def test_html_characters_and_line_separators_are_escaped_like_go():
    state = ClaimInfoState(claim_uid="u", claim_name="<a&b>\u2028\u2029", namespace="ns")
    data = codec.encode_data([state])
    assert '"ClaimName":"\\u003ca\\u0026b\\u003e\\u2028\\u2029"' in data
    blob = codec.encode([state])
    assert b"<" not in blob
    assert b"&" not in blob
    assert b"\\\\u003ca\\\\u0026b" in blob
    assert codec.decode(blob).entries == [state]


def test_control_characters_use_go_escapes():
    assert gojson.go_marshal('\b\f\n\r\t\x00\x1f\x7f"\\é') == '"\\b\\f\\n\\r\\t\\u0000\\u001f\x7f\\"\\\\é"'


def test_null_versus_empty_is_kept():
    states = [
        ClaimInfoState(claim_uid="1", claim_name="a", namespace="n", pod_uids=None, driver_state=None),
        ClaimInfoState(claim_uid="2", claim_name="b", namespace="n", pod_uids=set(), driver_state={}),
        ClaimInfoState(
            claim_uid="3",
            claim_name="c",
            namespace="n",
            driver_state={
                "d": DriverState(devices=[Device("p", "x", request_names=(), cdi_device_ids=None)])
            },
        ),
    ]
    data = codec.encode_data(states)
    assert '"PodUIDs":null,"DriverState":null' in data
    assert '"PodUIDs":{},"DriverState":{}' in data
    assert '"ShareID":null,"RequestNames":[],"CDIDeviceIDs":null' in data
    assert codec.decode(codec.envelope(data)).entries == states


def test_map_keys_are_sorted_and_entries_are_in_the_stated_order():
    states = [
        ClaimInfoState(claim_uid="2", claim_name="a", namespace="ns-b", pod_uids={"z", "a", "m"}),
        ClaimInfoState(claim_uid="9", claim_name="b", namespace="ns-a"),
        ClaimInfoState(claim_uid="1", claim_name="a", namespace="ns-b"),
        ClaimInfoState(
            claim_uid="0",
            claim_name="a",
            namespace="ns-a",
            driver_state={"z.example.com": DriverState(devices=[]), "a.example.com": DriverState(devices=[])},
        ),
    ]
    data = json.loads(codec.encode_data(states))
    keys = [(e["Namespace"], e["ClaimName"], e["ClaimUID"]) for e in data["ClaimInfoStateList"]]
    assert keys == [("ns-a", "a", "0"), ("ns-a", "b", "9"), ("ns-b", "a", "1"), ("ns-b", "a", "2")]
    assert list(data["ClaimInfoStateList"][3]["PodUIDs"]) == ["a", "m", "z"]
    assert list(data["ClaimInfoStateList"][0]["DriverState"]) == ["a.example.com", "z.example.com"]


def test_share_id_is_written_when_set():
    state = ClaimInfoState(
        claim_uid="u",
        claim_name="c",
        namespace="n",
        driver_state={"d": DriverState([Device("p", "x", share_id="s-1")])},
    )
    assert '"ShareID":"s-1"' in codec.encode_data([state])
    assert codec.decode(codec.encode([state])).entries == [state]


def test_writing_a_share_id_without_the_key_is_refused():
    state = ClaimInfoState(
        claim_uid="u",
        claim_name="c",
        namespace="n",
        driver_state={"d": DriverState([Device("p", "x", share_id="s")])},
    )
    with pytest.raises(CheckpointError, match="has ShareID 's'"):
        codec.encode([state], share_id=False)


# --- reading: Go decoding semantics ---------------------------------------------------


def test_outer_keys_match_case_insensitively_including_kelvin_sign():
    good = json.loads(codec.encode([]))
    blob = json.dumps({"data": good["Data"], "CHEC\u212aSUM": good["Checksum"]}).encode()
    assert codec.decode(blob).entries == []


def test_unknown_keys_are_ignored_and_the_last_duplicate_wins():
    good = codec.encode([])
    blob = good[:-1] + b',"Extra":1,"Checksum":1}'
    assert "stored 1," in corrupt(blob)
    entry = '[{"ClaimUID":"a","ClaimUID":"b","Unknown":[1,2]}]'
    assert codec.decode(wrap(entry)).entries[0].claim_uid == "b"


def test_null_elements_decode_to_zero_values():
    decoded = codec.decode(wrap('[null,{"DriverState":{"d":null},"PodUIDs":{"p":null}}]')).entries
    assert decoded[0] == ClaimInfoState(
        claim_uid="", claim_name="", namespace="", pod_uids=None, driver_state=None
    )
    assert decoded[1].driver_state == {"d": DriverState()}
    assert decoded[1].pod_uids == {"p"}


def test_lone_surrogates_become_replacement_characters_as_in_go():
    decoded = codec.decode(wrap('[{"ClaimName":"\\ud800x"}]')).entries
    assert decoded[0].claim_name == "\ufffdx"


def test_missing_list_key_means_a_null_list():
    decoded = codec.decode(
        codec.envelope('{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1"}')
    )
    assert decoded.list_is_null
    assert decoded.entries == []


# --- reading: error messages ---------------------------------------------------------


def test_invalid_json_names_the_position():
    assert corrupt('{"Data":x}') == ("invalid JSON in file at line 1 column 9 (char 8): Expecting value")


def test_invalid_json_position_counts_lines():
    assert corrupt('{\n  "Data": "x",\n  oops\n}').startswith(
        "invalid JSON in file at line 3 column 3 (char 19)"
    )


def test_invalid_inner_json_says_data():
    assert corrupt(codec.envelope("{")) == (
        "invalid JSON in Data at line 1 column 2 (char 1): unexpected end of JSON input"
    )


def test_nan_is_not_json():
    assert "invalid JSON in file" in corrupt('{"Data":"","Checksum":NaN}')


def test_invalid_utf8_is_reported_with_the_offset():
    assert corrupt(b'{"Data":"\xff"}') == "not valid UTF-8 at byte 9"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("[]", "expected a JSON object at the top level, got array"),
        ("{}", "not a DRA checkpoint: expected the keys Data and Checksum"),
        ('{"Data":1}', "Data: expected a string, got number 1"),
        ('{"Data":"","Checksum":"5"}', 'Checksum: expected an unsigned 32-bit integer, got string "5"'),
        ('{"Data":"","Checksum":1.0}', "Checksum: expected an unsigned 32-bit integer, got number 1.0"),
        ('{"Data":"","Checksum":-1}', "Checksum: expected an unsigned 32-bit integer, got number -1"),
        ('{"Data":"","Checksum":4294967296}', "Checksum: number 4294967296 overflows uint32"),
    ],
)
def test_outer_structure_errors(document, message):
    assert corrupt(document).startswith(message)


@pytest.mark.parametrize(
    ("inner", "message"),
    [
        ("[]", "Data: expected a JSON object, got array"),
        (
            '{"apiVersion":"checkpoint.dra.kubelet.k8s.io/v1"}',
            'Data: missing kind (expected "DRACheckpoint")',
        ),
        ('{"kind":"Other","apiVersion":"x"}', 'Data.kind: expected "DRACheckpoint", got string "Other"'),
        (
            '{"kind":"DRACheckpoint"}',
            'Data: missing apiVersion (expected "checkpoint.dra.kubelet.k8s.io/v1")',
        ),
        (
            '{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v2"}',
            'Data.apiVersion: expected "checkpoint.dra.kubelet.k8s.io/v1", got string',
        ),
        ('{"kind":true}', "Data.kind: expected a string, got boolean true"),
    ],
)
def test_type_meta_errors(inner, message):
    assert corrupt(codec.envelope(inner)).startswith(message)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ("{}", "Data.ClaimInfoStateList: expected an array or null, got object"),
        ("[5]", "Data.ClaimInfoStateList[0]: expected an object or null, got number 5"),
        ('[{"ClaimUID":5}]', "Data.ClaimInfoStateList[0].ClaimUID: expected a string, got number 5"),
        ('[{},{"PodUIDs":[]}]', "Data.ClaimInfoStateList[1].PodUIDs: expected an object or null, got array"),
        (
            '[{"PodUIDs":{"p":1}}]',
            'Data.ClaimInfoStateList[0].PodUIDs["p"]: expected an object or null, got number 1',
        ),
        (
            '[{"DriverState":{"d":{"Devices":{}}}}]',
            'Data.ClaimInfoStateList[0].DriverState["d"].Devices: expected an array or null, got object',
        ),
        (
            '[{"DriverState":{"d":{"Devices":[{"RequestNames":["a",1]}]}}}]',
            'Data.ClaimInfoStateList[0].DriverState["d"].Devices[0].RequestNames[1]: expected a string, got number 1',  # noqa: E501
        ),
        (
            '[{"DriverState":{"d":{"Devices":[{"ShareID":7}]}}}]',
            'Data.ClaimInfoStateList[0].DriverState["d"].Devices[0].ShareID: expected a string or null, got number 7',  # noqa: E501
        ),
        (
            '[{"DriverState":{"d":{"skipNodeOperations":["All"]}}}]',
            'Data.ClaimInfoStateList[0].DriverState["d"].skipNodeOperations: expected a string, got array',
        ),
    ],
)
def test_entry_type_errors_name_the_json_path(entries, message):
    assert corrupt(wrap(entries)) == message


def test_entries_variant_paths_use_its_key():
    blob = codec.envelope(
        '{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1","Entries":[1]}'
    )
    assert corrupt(blob).startswith("Data.Entries[0]:")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ('{"version":"v2","checksum":0}', 'version: expected "v1", got string "v2"'),
        ('{"version":"v1","entries":{}}', "entries: expected an array or null, got object"),
        ('{"version":"v1","entries":[{"PodUIDs":{"p":"x"}}]}', 'entries[0].PodUIDs["p"]: expected an object'),
        (
            '{"version":"v1","entries":[{"ResourceHandles":[{"structuredData":{}}]}]}',
            "entries[0].ResourceHandles[0].structuredData: structured resource handles are not supported",
        ),
        (
            '{"version":"v1","checksum":18446744073709551616}',
            "checksum: number 18446744073709551616 overflows uint64",
        ),
    ],
)
def test_legacy_structure_errors(document, message):
    assert corrupt(document).startswith(message)


def test_legacy_file_with_a_null_entry_list():
    from drasim.checkpoint.legacy import LegacyLayout, legacy_checksum

    stored = legacy_checksum("v1", None, LegacyLayout.V1_30)
    decoded = codec.decode(f'{{"version":"v1","entries":null,"checksum":{stored}}}'.encode())
    assert decoded.list_is_null
    assert decoded.variant == "1.30"
    # an absent list is an empty (non-nil) one, as NewDRAManagerCheckpoint starts with
    stored = legacy_checksum("v1", [], LegacyLayout.V1_30)
    assert codec.decode(f'{{"version":"v1","checksum":{stored}}}'.encode()).list_is_null is False


@pytest.mark.parametrize("depth", [10, 985, 5000])
@pytest.mark.parametrize("leaf", ["1", '"\\ud800"'])
def test_deep_nesting_is_a_clear_error(depth, leaf):
    message = corrupt("[" * depth + leaf + "]" * depth)
    assert message in (
        "expected a JSON object at the top level, got array",
        "invalid JSON in file: nested too deeply",
    )
    inner_message = corrupt(wrap("[" * depth + leaf + "]" * depth))
    assert inner_message.startswith(
        ("Data.ClaimInfoStateList[0]: expected an object", "invalid JSON in Data: nested")
    )
