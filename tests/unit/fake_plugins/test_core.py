"""The protocol-neutral driver core, claim sources, driver checkpoint and journal file."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from drasim.errors import ApiError, CheckpointError
from drasim.values import ClaimRef, Device, PrepareResult, UnprepareResult
from fake_plugins import Behaviour, FakeDriverConfig, PluginFault
from fake_plugins.claims import FileClaimSource, allocated_devices, base_request
from fake_plugins.core import CallError, DriverCore
from fake_plugins.journal import Journal, read_journal
from fake_plugins.state import DriverState

REF = ClaimRef("default", "uid-1", "gpu")


class NoEffects:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def before(self, faults: Sequence[PluginFault]) -> None:
        self.seen.append("before")

    def after(self, faults: Sequence[PluginFault]) -> None:
        self.seen.append("after")


def claim(uid: str = "uid-1", results: list[dict] | None = None, **meta: str) -> dict:
    if results is None:
        results = [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]
    return {
        "kind": "ResourceClaim",
        "metadata": {"namespace": "default", "name": "gpu", "uid": uid, **meta},
        "status": {"allocation": {"devices": {"results": results}}},
    }


def make_core(tmp_path: Path, obj: dict | None = None, **behaviour: list) -> tuple[DriverCore, NoEffects]:
    config = FakeDriverConfig(plugin_dir=str(tmp_path / "plug"), cdi_dir=str(tmp_path / "cdi"))
    effects = NoEffects()
    source = (lambda ns, name: obj) if obj is not None else None
    core = DriverCore(config, claim_source=source, effects=effects, behaviour=Behaviour.from_dict(behaviour))
    return core, effects


def test_prepare_only_this_drivers_results_and_strips_subrequests(tmp_path):
    obj = claim(
        results=[
            {
                "request": "a/sub",
                "driver": "gpu.example.com",
                "pool": "p",
                "device": "gpu-1",
                "shareID": "s1",
            },
            {"request": "b", "driver": "other.example.com", "pool": "p", "device": "x"},
        ]
    )
    core, effects = make_core(tmp_path, obj)
    result = core.prepare([REF], [])
    assert result == {
        "uid-1": PrepareResult(devices=(Device("p", "gpu-1", ("a",), ("gpu.example.com/gpu=gpu-1",), "s1"),))
    }
    assert effects.seen == ["before", "after"]


def test_claim_with_no_results_of_this_driver_prepares_nothing(tmp_path):
    core, _ = make_core(tmp_path, claim(results=[]))
    assert core.prepare([REF], []) == {"uid-1": PrepareResult()}


def test_no_claim_source_fails_the_call(tmp_path):
    core, effects = make_core(tmp_path)
    with pytest.raises(CallError, match="retrieve claim default/gpu: no claim source configured"):
        core.prepare([REF], [])
    assert effects.seen == []  # the whole call failed before the lock


def test_state_survives_a_new_core(tmp_path):
    core, _ = make_core(tmp_path, claim())
    first = core.prepare([REF], [])
    again, _ = make_core(tmp_path, claim())
    assert again.prepared_claims()["uid-1"].devices == first["uid-1"].devices
    assert again.unprepare([REF], []) == {"uid-1": UnprepareResult()}
    assert make_core(tmp_path)[0].prepared_claims() == {}
    assert list((tmp_path / "cdi").iterdir()) == []


def test_scripted_code_from_effects_propagates(tmp_path):
    class Failing(NoEffects):
        def before(self, faults):
            raise CallError("UNAVAILABLE", "down")

    config = FakeDriverConfig(plugin_dir=str(tmp_path / "plug"), cdi_dir=str(tmp_path / "cdi"))
    core = DriverCore(config, claim_source=lambda ns, n: claim(), effects=Failing())
    with pytest.raises(CallError) as err:
        core.prepare([REF], [])
    assert (err.value.code, err.value.details) == ("UNAVAILABLE", "down")
    assert core.prepared_claims() == {}


def test_corrupted_driver_checkpoint_is_loud(tmp_path):
    folder = tmp_path / "prepared-claims"
    folder.mkdir()
    path = folder / "u.json"
    path.write_text('{"kind": "Something"}')
    with pytest.raises(CheckpointError, match="fake driver checkpoint is corrupted"):
        DriverState.load("gpu.example.com", tmp_path)
    path.write_text("not json")
    with pytest.raises(CheckpointError, match=str(path)):
        DriverState.load("gpu.example.com", tmp_path)


def test_checkpoint_round_trip(tmp_path):
    state = DriverState("gpu.example.com", tmp_path)
    from fake_plugins.state import PreparedClaim

    state.claims["u"] = PreparedClaim("ns", "n", (Device("p", "d", ("r",), ("k=d",), None),))
    state.save()
    loaded = DriverState.load("gpu.example.com", tmp_path)
    assert loaded.claims == state.claims
    # one file per claim, no temp files left behind
    assert [p.name for p in (tmp_path / "prepared-claims").iterdir()] == ["u.json"]


def test_helpers():
    assert base_request("main/sub") == "main"
    assert base_request("main") == "main"
    assert allocated_devices({"status": {}}, "gpu.example.com") == []


def test_file_claim_source(tmp_path):
    (tmp_path / "one.json").write_text(json.dumps(claim("uid-json")))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "many.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {kind: ResourceClaim, metadata: {name: a, namespace: team, uid: uid-a}}\n"
        "---\n"
        "kind: ResourceClaim\nmetadata: {name: b, uid: uid-b}\n"
    )
    (tmp_path / "notes.txt").write_text("ignored")
    source = FileClaimSource(tmp_path)
    assert source("default", "gpu")["metadata"]["uid"] == "uid-json"
    assert source("team", "a")["metadata"]["uid"] == "uid-a"
    assert source("default", "b")["metadata"]["uid"] == "uid-b"
    with pytest.raises(ApiError) as err:
        source("default", "nope")
    assert err.value.code == 404
    assert str(err.value) == 'resourceclaims.resource.k8s.io "nope" not found'


def test_journal_file_and_torn_line(tmp_path):
    path = tmp_path / "j" / "journal.jsonl"
    journal = Journal("gpu.example.com", path=path)
    journal.record(
        "/pluginregistration.Registration/GetInfo", {}, {"name": "x"}, code="OK", start=1.0, duration=0.5
    )
    journal.close()
    with path.open("a") as f:
        f.write('{"torn": ')
    (record,) = read_journal(path)
    assert record["method"] == "/pluginregistration.Registration/GetInfo"
    assert record["seq"] == 1
    assert record["side"] == "plugin"
    assert journal.calls[0].rpc == "GetInfo"
