"""expectCheckpoint, expectCdiDevices and expectCdiSpecs against real files in tmp_path."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from drasim.checkpoint.store import FileCheckpointStore
from drasim.runner import expectations
from drasim.runner.context import StepFailure
from drasim.runner.expectations.cdi import spec_problems
from drasim.scenario.common import ErrorMatch
from drasim.scenario.expectations import (
    ClaimCheckpoint,
    DeviceMatch,
    DriverCheckpoint,
    ExpectCdiDevices,
    ExpectCdiSpecs,
    ExpectCheckpoint,
)
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

W: Any = sys.modules["drasim_test_checks_world"]  # loaded by tests/conftest.py
GPU0 = "gpu.example.com/gpu=gpu-0"


@pytest.fixture
def world(tmp_path: Path) -> Any:
    w = W.FakeWorld(tmp_path)
    w.add_pod("a", ["gpu"])
    w.add_pod("b", ["gpu"])
    return w


def fails(world: Any, args: object) -> StepFailure:
    with pytest.raises(StepFailure) as info:
        expectations.run_check(world, args, W.context("expect"))
    return info.value


def entry(name: str, pods: set[str], devices: list[Device], driver: str = W.GPU) -> ClaimInfoState:
    return ClaimInfoState(
        claim_uid=f"uid-{name}",
        claim_name=name,
        namespace="default",
        pod_uids=pods,
        driver_state={driver: DriverState(devices=devices)},
    )


def gpu(name: str = "gpu-0", cdi: tuple[str, ...] | None = (GPU0,)) -> Device:
    return Device(pool_name="pool-a", device_name=name, request_names=("req-0",), cdi_device_ids=cdi)


def write_checkpoint(world: Any, entries: list[ClaimInfoState]) -> None:
    FileCheckpointStore(world.workspace.checkpoint_path, recorder=world.journal).store(entries)


# ------------------------------------------------------------------ checkpoint


def test_checkpoint_contents_pass(world: Any) -> None:
    write_checkpoint(world, [entry("gpu", {"uid-a", "uid-b"}, [gpu()])])
    want = ClaimCheckpoint(
        uid="uid-gpu",
        pods=["a", "default/b"],
        device_count=1,
        drivers={
            W.GPU: DriverCheckpoint(
                device_count=1,
                devices=[DeviceMatch(device="gpu-0", pool="pool-a", requests=["req-0"], cdi_ids=[GPU0])],
            )
        },
    )
    expectations.run_check(
        world, ExpectCheckpoint(entries=1, claims={"gpu": want}, absent=["other"]), W.context("expect")
    )


def test_checkpoint_contents_fail_with_every_difference(world: Any) -> None:
    write_checkpoint(world, [entry("gpu", {"uid-a", "uid-zz"}, [gpu(), gpu()])])
    want = ClaimCheckpoint(
        pods=["a"],
        device_count=1,
        drivers={W.GPU: DriverCheckpoint(devices=[DeviceMatch(device="gpu-0"), DeviceMatch(device="gpu-1")])},
    )
    failure = fails(world, ExpectCheckpoint(entries=2, claims={"gpu": want, "nic": ClaimCheckpoint()}))
    assert failure.message == (
        "expected 2 checkpoint entries; found 1 (claims: default/gpu); "
        "claim default/gpu: expected pods [default/a]; found [default/a, uid:uid-zz]; "
        "claim default/gpu: expected 1 device over all drivers; found 2; "
        "claim default/gpu driver gpu.example.com device 2: expected device 'gpu-1'; found 'gpu-0'; "
        "expected a checkpoint entry for claim default/nic; found none (claims: default/gpu)"
    )
    assert failure.expected["claims"]["default/gpu"]["pods"] == ["default/a"]
    assert failure.actual["claims"]["default/gpu"]["pods"] == ["default/a", "uid:uid-zz"]
    assert failure.actual["claims"]["default/nic"] is None
    assert [e["kind"] for e in failure.similar] == ["checkpoint"]
    assert failure.similar[0]["entries"][0]["ClaimName"] == "gpu"


def test_checkpoint_driver_keys_and_absent(world: Any) -> None:
    write_checkpoint(world, [entry("gpu", {"uid-a"}, [gpu()], driver=W.NIC)])
    failure = fails(
        world,
        ExpectCheckpoint(
            claims={"gpu": ClaimCheckpoint(drivers={W.GPU: DriverCheckpoint()})}, absent=["gpu"]
        ),
    )
    assert failure.message == (
        "claim default/gpu: expected drivers [gpu.example.com]; found [nic.example.com]; "
        "expected no checkpoint entry for claim default/gpu; found one"
    )


def test_checkpoint_missing_or_corrupt_is_not_valid(world: Any) -> None:
    path = world.workspace.checkpoint_path
    expectations.run_check(world, ExpectCheckpoint(valid=False), W.context("expect"))
    failure = fails(world, ExpectCheckpoint())
    assert failure.message == f"expected a valid checkpoint; {path}: no such file"
    write_checkpoint(world, [])
    path.write_bytes(path.read_bytes().replace(b'"Checksum":', b'"Checksum":1'))
    expectations.run_check(world, ExpectCheckpoint(valid=False), W.context("expect"))
    assert fails(world, ExpectCheckpoint(entries=0)).message.startswith(
        f"expected a valid checkpoint; {path}: "
    )


def test_checkpoint_legacy_format_is_not_valid(world: Any) -> None:
    path = world.workspace.checkpoint_path
    path.parent.mkdir(parents=True, exist_ok=True)
    golden = Path(__file__).parents[1] / "checkpoint" / "golden" / "legacy-1.30-multiple-claims.json"
    path.write_bytes(golden.read_bytes())
    expectations.run_check(world, ExpectCheckpoint(valid=False), W.context("expect"))
    assert fails(world, ExpectCheckpoint()).message == (
        f"expected a valid checkpoint; {path}: legacy checkpoint format (1.30), which the kubelet refuses"
    )


def test_checkpoint_valid_false_fails_on_a_good_file(world: Any) -> None:
    write_checkpoint(world, [entry("gpu", {"uid-a"}, [gpu()])])
    failure = fails(world, ExpectCheckpoint(valid=False))
    assert failure.message == (
        f"expected the checkpoint {world.workspace.checkpoint_path} to be missing or not to decode; "
        "it decodes with 1 entry"
    )


# ------------------------------------------------------------------ CDI devices


def test_cdi_devices_now_from_the_kubelet(world: Any) -> None:
    world.manager.resources[("uid-a", "ctr")] = [(GPU0,), ("gpu.example.com/gpu=gpu-1",)]
    args = ExpectCdiDevices(
        pod="a", ids=[GPU0, "gpu.example.com/gpu=gpu-1"], count=2, devices=2, unique=True, well_formed=True
    )
    expectations.run_check(world, args, W.context("expect"))


def test_cdi_devices_fail(world: Any) -> None:
    world.manager.resources[("uid-a", "ctr")] = [(GPU0, GPU0), ("bad-id",)]
    failure = fails(world, ExpectCdiDevices(pod="a", container="ctr", count=1, unique=True, well_formed=True))
    assert failure.message == (
        "CDI devices of container ctr of pod default/a: expected 1 ID; found 3; "
        "expected no duplicate IDs; device 1 lists gpu.example.com/gpu=gpu-0 twice; "
        "expected every ID to be 'vendor/class=name'; malformed: ['bad-id']"
    )
    assert failure.actual == {"ids": [GPU0, GPU0, "bad-id"], "devices": [[GPU0, GPU0], ["bad-id"]]}
    assert failure.expected == {"count": 1, "unique": True, "wellFormed": True}


COMMON = "k8s.gpu.example.com/gpu=common"


def test_cdi_devices_an_id_common_to_every_device_is_not_a_duplicate(world: Any) -> None:
    # The example driver hands every device its own ID plus one common to all of them.
    world.manager.resources[("uid-a", "ctr")] = [
        (COMMON, "k8s.gpu.example.com/gpu=u-gpu-0"),
        (COMMON, "k8s.gpu.example.com/gpu=u-gpu-1"),
    ]
    expectations.run_check(world, ExpectCdiDevices(pod="a", devices=2, unique=True), W.context("expect"))
    failure = fails(world, ExpectCdiDevices(pod="a", count=2))
    assert failure.message == "CDI devices of container ctr of pod default/a: expected 2 IDs; found 4"


def test_cdi_devices_a_device_without_an_id_of_its_own_is_a_duplicate(world: Any) -> None:
    world.manager.resources[("uid-a", "ctr")] = [(COMMON, GPU0), (COMMON, GPU0)]
    failure = fails(world, ExpectCdiDevices(pod="a", unique=True))
    assert failure.message == (
        "CDI devices of container ctr of pod default/a: expected no duplicate IDs; "
        f"device 1 has no ID of its own ({COMMON}, {GPU0}); device 2 has no ID of its own ({COMMON}, {GPU0})"
    )
    expectations.run_check(world, ExpectCdiDevices(pod="a", unique=False), W.context("expect"))


def test_cdi_devices_counts_devices_and_wants_an_id_for_each(world: Any) -> None:
    world.manager.resources[("uid-a", "ctr")] = [(GPU0,), ()]
    failure = fails(world, ExpectCdiDevices(pod="a", devices=1))
    assert failure.message == (
        "CDI devices of container ctr of pod default/a: expected 1 device with CDI IDs; found 2; "
        "expected every device to have a CDI ID; device 2 has none"
    )
    assert failure.actual == {"ids": [GPU0], "devices": [[GPU0], []]}


def test_cdi_devices_from_the_record_when_the_kubelet_is_stopped(world: Any) -> None:
    world.stop_kubelet()
    world.pods["default/a"].cdi["ctr"] = [(GPU0,)]
    expectations.run_check(world, ExpectCdiDevices(pod="a", ids=[GPU0], devices=1), W.context("expect"))
    failure = fails(world, ExpectCdiDevices(pod="a", ids=[]))
    assert (
        failure.message
        == "CDI devices of container ctr of pod default/a: expected []; found ['gpu.example.com/gpu=gpu-0']"
    )


def test_cdi_devices_expect_error(world: Any) -> None:
    match = ErrorMatch(contains="unable to get claim info")
    expectations.run_check(world, ExpectCdiDevices(pod="b", expect_error=match), W.context("expect"))
    world.manager.resources[("uid-a", "ctr")] = [(GPU0,)]
    failure = fails(world, ExpectCdiDevices(pod="a", expect_error="unable"))
    assert failure.message == (
        "expected GetResources for container ctr of pod default/a to fail with an error containing "
        "'unable'; it returned ['gpu.example.com/gpu=gpu-0']"
    )
    failure = fails(world, ExpectCdiDevices(pod="b", count=0))
    assert failure.message == (
        "expected the CDI devices of container ctr of pod default/b; GetResources failed: "
        "unable to get claim info for claim of pod b"
    )


def test_cdi_devices_unknown_pod_or_container(world: Any) -> None:
    assert fails(world, ExpectCdiDevices(pod="zz")).message == (
        "pod default/zz is unknown: no startPod created it (pods: default/a, default/b)"
    )
    assert fails(world, ExpectCdiDevices(pod="a", container="x")).message == (
        "pod default/a has no container 'x' (containers: ctr)"
    )


# ------------------------------------------------------------------ CDI specs


def spec(kind: str = "gpu.example.com/gpu", names: tuple[str, ...] = ("gpu-0",)) -> dict[str, Any]:
    return {
        "cdiVersion": "0.6.0",
        "kind": kind,
        "devices": [{"name": n, "containerEdits": {"env": [f"DEV={n}"]}} for n in names],
    }


def write_spec(world: Any, name: str, document: Any) -> Path:
    path = world.workspace.cdi_dir / name
    path.write_text(json.dumps(document) if name.endswith(".json") else _yaml(document))
    return path


def _yaml(document: Any) -> str:
    import yaml

    return yaml.safe_dump(document)


def test_cdi_specs_pass(world: Any) -> None:
    write_spec(world, "gpu.example.com-claim_uid-gpu.json", spec())
    write_spec(world, "other.yaml", spec("vendor.io/nic", ("nic-0", "nic:1")))
    (world.workspace.cdi_dir / "notes.txt").write_text("not a spec")
    world.manager.resources[("uid-a", "ctr")] = [(GPU0,), ("vendor.io/nic=nic:1",)]
    world.manager.resources[("uid-b", "ctr")] = [("never/resolved=x",)]
    world.pods["default/b"].phase = "Terminating"
    args = ExpectCdiSpecs(
        present=["gpu.example.com-*.json"], absent=["*claim_uid-zz*"], count=2, resolvable=True
    )
    expectations.run_check(world, args, W.context("expect"))


def test_cdi_specs_fail_on_files(world: Any) -> None:
    write_spec(world, "gpu.example.com-claim_uid-gpu.json", spec())
    failure = fails(world, ExpectCdiSpecs(present=["nic-*"], absent=["gpu.*"], count=0))
    assert failure.message == (
        f"CDI specs in {world.workspace.cdi_dir}: expected a spec file matching 'nic-*'; found none; "
        "expected no file matching 'gpu.*'; found ['gpu.example.com-claim_uid-gpu.json']; "
        "expected 0 spec files; found 1 ['gpu.example.com-claim_uid-gpu.json']"
    )
    assert failure.actual["count"] == 1


def test_cdi_specs_invalid(world: Any) -> None:
    write_spec(world, "a.json", {"kind": "gpu", "devices": [{"name": "-x", "containerEdits": {}}]})
    (world.workspace.cdi_dir / "b.yaml").write_text("cdiVersion: [unclosed\n")
    failure = fails(world, ExpectCdiSpecs())
    assert failure.message.startswith(
        f"CDI specs in {world.workspace.cdi_dir}: spec a.json cdiVersion is missing; kind 'gpu' is not "
        "'vendor/class'; devices[0] name '-x' is not a valid device name; devices[0] (-x) has empty "
        "containerEdits; spec b.yaml does not parse: "
    )
    expectations.run_check(world, ExpectCdiSpecs(valid=False), W.context("expect"))


def test_cdi_specs_valid_false_needs_an_invalid_spec(world: Any) -> None:
    write_spec(world, "a.json", spec())
    assert fails(world, ExpectCdiSpecs(valid=False)).message == (
        f"CDI specs in {world.workspace.cdi_dir}: expected some invalid spec file; all 1 are valid"
    )


def test_cdi_specs_unresolvable(world: Any) -> None:
    write_spec(world, "a.json", spec())
    world.manager.resources[("uid-a", "ctr")] = [(GPU0,), ("gpu.example.com/gpu=gpu-9",)]
    failure = fails(world, ExpectCdiSpecs(resolvable=True))
    assert failure.message == (
        f"CDI specs in {world.workspace.cdi_dir}: expected every CDI ID of a Running pod's containers to "
        "name a device in a valid spec; unresolved: pod default/a container ctr: gpu.example.com/gpu=gpu-9, "
        "pod default/b container ctr: GetResources failed: unable to get claim info for claim of pod b"
    )
    assert failure.actual["devices"] == [GPU0]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({**spec(), "cdiVersion": "v1"}, "cdiVersion 'v1' is not a version like 0.6.0"),
        ({**spec(), "kind": "1vendor/gpu"}, "kind '1vendor/gpu' is not 'vendor/class'"),
        ({**spec(), "kind": "vendor/gpu/x"}, "kind 'vendor/gpu/x' is not 'vendor/class'"),
        ({**spec(), "devices": []}, "has no devices"),
        (spec(names=("a", "a")), "device 'a' is defined twice"),
    ],
)
def test_cdi_spec_rules(document: dict[str, Any], problem: str) -> None:
    assert spec_problems(document) == [problem]
    assert spec_problems(spec(names=("0", "gpu_0.a:b"))) == []
