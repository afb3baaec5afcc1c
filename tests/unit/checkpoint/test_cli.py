"""``drasim checkpoint show|verify`` through drasim.cli.main."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from drasim.checkpoint import codec
from drasim.cli import main
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

GOLDEN = Path(__file__).parent / "golden"


def copy(tmp_path: Path, name: str) -> str:
    target = tmp_path / "dra_manager_state"
    shutil.copyfile(GOLDEN / f"{name}.json", target)
    return str(target)


def test_show_prints_format_checksum_and_a_claim_table(tmp_path, capsys):
    path = copy(tmp_path, "current-two-claims")
    assert main(["checkpoint", "show", path]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"File:      {path}"
    assert lines[1].startswith("Format:    current (ClaimInfoStateList list), without ShareID")
    assert lines[2] == "Checksum:  OK (CRC-32 1582256999)"
    assert lines[3] == "Claims:    2"
    assert lines[5].split() == ["NAMESPACE", "CLAIM", "UID", "PODS", "DRIVER", "DEVICE", "CDI", "IDS"]
    assert lines[6].split() == [
        "default",
        "example-1",
        "067798be-454e-4be4-9047-1aa06aea63f7",
        "139cdb46-f989-4f17-9561-ca10cfb509a6",
        "test-driver.cdi.k8s.io",
        "worker-1/dev-1",
        "example.com/example=cdi-example",
    ]
    assert lines[7].split()[-2:] == ["worker-1/dev-2", "-"]


def test_show_lists_every_device_and_share_ids(tmp_path, capsys):
    state = ClaimInfoState(
        claim_uid="u1",
        claim_name="gpu",
        namespace="team-a",
        pod_uids={"p2", "p1"},
        driver_state={
            "gpu.example.com": DriverState(
                [Device("node-1", "gpu-0", ("gpu",), ("a=b", "c=d"), "share-1"), Device("node-1", "gpu-1")]
            ),
            "nic.example.com": DriverState(devices=None, skip_node_operations="All"),
        },
    )
    path = tmp_path / "state"
    path.write_bytes(codec.encode([state]))
    assert main(["checkpoint", "show", str(path)]) == 0
    rows = capsys.readouterr().out.splitlines()[6:]
    assert rows[0].split() == [
        "team-a",
        "gpu",
        "u1",
        "p1,p2",
        "gpu.example.com",
        "node-1/gpu-0",
        "(share",
        "share-1)",
        "a=b,c=d",
    ]
    assert rows[1].split() == ["gpu.example.com", "node-1/gpu-1", "-"]
    assert rows[2].split() == ["nic.example.com", "(skip", "All)", "-", "-"]


def test_show_json(tmp_path, capsys):
    path = copy(tmp_path, "current-single-shareid-null")
    assert main(["checkpoint", "show", "--json", path]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["format"] == "current"
    assert shown["variant"] == "ClaimInfoStateList"
    assert shown["checksum"] == {"stored": 2570581864, "computed": 2570581864, "ok": True}
    assert shown["shareIdWritten"] is True
    data = json.loads(json.loads((GOLDEN / "current-single-shareid-null.json").read_text())["Data"])
    assert shown["claims"] == data["ClaimInfoStateList"]


def test_show_marks_a_checksum_mismatch_but_still_shows_the_claims(tmp_path, capsys):
    path = copy(tmp_path, "current-incorrect-checksum-entries")
    assert main(["checkpoint", "show", path]) == 0
    out = capsys.readouterr().out
    assert "Checksum:  MISMATCH (stored 2930258365, computed 3633532417, CRC-32)" in out
    assert "example-2" in out


def test_show_legacy(tmp_path, capsys):
    path = copy(tmp_path, "legacy-1.30-multiple-devices")
    assert main(["checkpoint", "show", path]) == 0
    out = capsys.readouterr().out
    assert "Format:    legacy 1.26-1.30 (version v1, 1.30 layout); a kubelet 1.31 or later refuses it" in out
    assert "Checksum:  OK (FNV-1a-32 1466990255)" in out
    assert "test-driver-2.cdi.k8s.io  example-2.com/example-2=cdi-example-2" in out


def test_verify_ok_prints_one_line(tmp_path, capsys):
    path = copy(tmp_path, "current-single")
    assert main(["checkpoint", "verify", path]) == 0
    captured = capsys.readouterr()
    assert (
        captured.out == f"OK: {path}: current format (ClaimInfoStateList), 1 claim(s), checksum 1656016162\n"
    )
    assert captured.err == ""


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            (GOLDEN / "current-incorrect-checksum-entries.json").read_bytes(),
            "checkpoint is corrupted: checksum mismatch",
        ),
        (b"{", "invalid JSON in file at line 1 column 2 (char 1): unexpected end of JSON input"),
        (codec.envelope('{"kind":"X"}'), 'Data.kind: expected "DRACheckpoint", got string "X"'),
        (
            (GOLDEN / "legacy-1.30-single.json").read_bytes(),
            "legacy 1.26-1.30 format (1.30 layout), 1 claim(s): a kubelet",
        ),
    ],
)
def test_verify_fails_with_a_clear_message_and_no_traceback(tmp_path, capsys, content, message):
    path = tmp_path / "dra_manager_state"
    path.write_bytes(content)
    assert main(["checkpoint", "verify", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"FAIL: {path}")
    assert message in captured.err
    assert "Traceback" not in captured.err


def test_verify_legacy_ok(tmp_path, capsys):
    path = copy(tmp_path, "legacy-1.26-no-resource-handles")
    assert main(["checkpoint", "verify", "--legacy-ok", path]) == 0
    assert capsys.readouterr().out.startswith(
        f"OK: {path}: legacy 1.26-1.30 format (1.26 layout), 1 claim(s)"
    )


@pytest.mark.parametrize("action", ["show", "verify"])
def test_missing_file_is_an_input_error(tmp_path, capsys, action):
    missing = tmp_path / "nope"
    assert main(["checkpoint", action, str(missing)]) == 2
    assert capsys.readouterr().err == f"drasim checkpoint: error: {missing}: no such file\n"


def test_an_action_is_required(capsys):
    with pytest.raises(SystemExit) as info:
        main(["checkpoint"])
    assert info.value.code == 2
    assert "ACTION" in capsys.readouterr().err
