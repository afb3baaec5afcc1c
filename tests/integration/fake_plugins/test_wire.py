"""The fake driver over real unix sockets: registration, prepare/unprepare, restart, CDI, journal."""

from __future__ import annotations

import json
import socket
from typing import Any

import grpc
import pytest

from fake_plugins import read_journal
from fake_plugins.config import HEALTH_V1ALPHA1

V1_PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
V1BETA1_PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources"


class ListRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def record(self, kind: str, **fields: Any) -> None:
        self.events.append((kind, fields))


# --- registration -----------------------------------------------------------------


def test_sockets_and_get_info(make_driver, wire, env):
    driver = make_driver()
    assert (env.plugin / "dra.sock").exists()
    assert (env.registry / "gpu.example.com-reg.sock").exists()
    info = wire(driver).get_info()
    assert info.type == "DRAPlugin"
    assert info.name == "gpu.example.com"
    assert info.endpoint == str(env.plugin / "dra.sock")
    assert list(info.supported_versions) == ["v1.DRAPlugin", "v1beta1.DRAPlugin"]


def test_health_service_is_advertised_and_advertise_overrides(make_driver, wire):
    driver = make_driver(services=["v1.DRAPlugin", "v1beta1.DRAPlugin", HEALTH_V1ALPHA1])
    assert list(wire(driver).get_info().supported_versions) == [
        "v1.DRAPlugin",
        "v1beta1.DRAPlugin",
        HEALTH_V1ALPHA1,
    ]
    driver.stop()
    other = make_driver(advertise=["v1beta1.DRAPlugin", "v1.DRAPlugin", "1.0.0"])
    assert list(wire(other).get_info().supported_versions) == ["v1beta1.DRAPlugin", "v1.DRAPlugin", "1.0.0"]


def test_notify_registration_status(make_driver, wire):
    driver = make_driver()
    w = wire(driver)
    w.notify(True)
    assert driver.registered.is_set()
    assert driver.registration_status == (True, "")
    with pytest.raises(grpc.RpcError) as err:
        w.notify(False, "no handler for DRAPlugin")
    assert err.value.code() == grpc.StatusCode.UNKNOWN
    assert err.value.details() == "failed registration process: no handler for DRAPlugin"
    assert driver.registration_status == (False, "no handler for DRAPlugin")
    assert not driver.registered.is_set()


# --- prepare / unprepare -------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_prepare_and_unprepare(make_driver, wire, claim, env, version):
    driver = make_driver()
    c = claim("gpu", "uid-1", (("main/sub", "gpu-1"), ("other", "gpu-2")))
    w = wire(driver)
    reply = w.prepare(c, version=version)
    assert w.devices(reply, "uid-1") == [
        (("main",), "node-1", "gpu-1", ("gpu.example.com/gpu=gpu-1",)),
        (("other",), "node-1", "gpu-2", ("gpu.example.com/gpu=gpu-2",)),
    ]
    assert reply.claims["uid-1"].error == ""
    spec_file = env.cdi / "gpu.example.com-claim_uid-1.json"
    spec = env.read_json(spec_file)
    assert spec["cdiVersion"] == "0.6.0"
    assert spec["kind"] == "gpu.example.com/gpu"
    assert [d["name"] for d in spec["devices"]] == ["gpu-1", "gpu-2"]
    assert "DRA_CLAIM_UID=uid-1" in spec["devices"][0]["containerEdits"]["env"]
    state_file = env.plugin / "prepared-claims" / "uid-1.json"
    checkpoint = env.read_json(state_file)
    assert checkpoint["kind"] == "FakeDriverPreparedClaim"
    assert (checkpoint["uid"], checkpoint["name"]) == ("uid-1", "gpu")
    assert [d["deviceName"] for d in checkpoint["devices"]] == ["gpu-1", "gpu-2"]
    assert sorted(p.name for p in state_file.parent.iterdir()) == ["uid-1.json"]
    assert set(driver.prepared_claims()) == {"uid-1"}

    reply = w.unprepare(c, version=version)
    assert reply.claims["uid-1"].error == ""
    assert not spec_file.exists()
    assert list(state_file.parent.iterdir()) == []
    expected_method = V1_PREPARE if version == "v1" else V1BETA1_PREPARE
    assert driver.calls_to("NodePrepareResources")[0].method == expected_method


def test_unprepare_unknown_claim_succeeds(make_driver, wire, claims):
    driver = make_driver()
    ghost = {"metadata": {"namespace": "default", "name": "ghost", "uid": "uid-ghost"}}
    reply = wire(driver).unprepare(ghost)
    assert list(reply.claims) == ["uid-ghost"]
    assert reply.claims["uid-ghost"].error == ""


def test_share_id_only_on_v1(make_driver, wire, claim):
    driver = make_driver()
    c = claim("shared", "uid-s", share_id="share-1")
    w = wire(driver)
    v1_device = w.prepare(c).claims["uid-s"].devices[0]
    assert v1_device.HasField("share_id")
    assert v1_device.share_id == "share-1"
    v1beta1_device = w.prepare(c, version="v1beta1").claims["uid-s"].devices[0]
    assert "share_id" not in v1beta1_device.DESCRIPTOR.fields_by_name
    assert v1beta1_device.device_name == "gpu-0"


def test_only_v1beta1_served(make_driver, wire, claim):
    driver = make_driver(services=["v1beta1.DRAPlugin"])
    w = wire(driver)
    c = claim("gpu", "uid-1")
    assert list(w.get_info().supported_versions) == ["v1beta1.DRAPlugin"]
    assert w.prepare(c, version="v1beta1").claims["uid-1"].error == ""
    with pytest.raises(grpc.RpcError) as err:
        w.prepare(c, version="v1")
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED


@pytest.mark.parametrize(
    ("setup", "details"),
    [
        ("unallocated", "get resource claims: claim default/bad not allocated"),
        ("replaced", "get resource claims: claim default/bad got replaced"),
        (
            "missing",
            'get resource claims: retrieve claim default/bad: resourceclaims.resource.k8s.io "bad" not found',
        ),
    ],
)
def test_bad_claim_fails_the_whole_call(make_driver, wire, claim, claims, env, setup, details):  # noqa: PLR0917
    driver = make_driver()
    good = claim("good", "uid-good")
    if setup == "unallocated":
        bad = claim("bad", "uid-bad", allocated=False)
    elif setup == "replaced":
        bad = claim("bad", "uid-bad")
        claims[("default", "bad")] = {**bad, "metadata": {**bad["metadata"], "uid": "uid-new"}}
    else:
        bad = {"metadata": {"namespace": "default", "name": "bad", "uid": "uid-bad"}}
    with pytest.raises(grpc.RpcError) as err:
        wire(driver).prepare(good, bad)
    assert err.value.code() == grpc.StatusCode.UNKNOWN
    assert err.value.details() == details
    assert env.cdi_files() == []
    assert driver.prepared_claims() == {}
    assert driver.calls_to("NodePrepareResources")[0].code == "UNKNOWN"


def test_repeated_prepare_and_restart_are_idempotent(make_driver, wire, claim, env):
    driver = make_driver()
    c = claim("gpu", "uid-1", (("gpu", "gpu-3"),))
    first = wire(driver).prepare(c)
    state_file = env.plugin / "prepared-claims" / "uid-1.json"
    checkpoint = state_file.read_bytes()
    assert wire(driver).prepare(c) == first
    assert state_file.read_bytes() == checkpoint

    driver.restart()
    assert set(driver.prepared_claims()) == {"uid-1"}
    assert wire(driver).prepare(c) == first
    assert state_file.read_bytes() == checkpoint


def test_unprepare_after_restart_removes_spec_prepared_before(make_driver, wire, claim, env):
    driver = make_driver()
    c = claim("gpu", "uid-1")
    wire(driver).prepare(c)
    driver.restart(kill=True)
    assert env.cdi_files() == ["gpu.example.com-claim_uid-1.json"]
    assert wire(driver).unprepare(c).claims["uid-1"].error == ""
    assert env.cdi_files() == []
    assert driver.prepared_claims() == {}


def test_prepare_recreates_missing_cdi_spec(make_driver, wire, claim, env):
    driver = make_driver()
    c = claim("gpu", "uid-1")
    wire(driver).prepare(c)
    (env.cdi / "gpu.example.com-claim_uid-1.json").unlink()  # a reboot cleared the tmpfs
    driver.restart()
    wire(driver).prepare(c)
    assert env.cdi_files() == ["gpu.example.com-claim_uid-1.json"]


def test_device_in_use_by_another_claim_is_refused(make_driver, wire, claim):
    driver = make_driver()
    a = claim("a", "uid-a", (("gpu", "gpu-0"),))
    b = claim("b", "uid-b", (("gpu", "gpu-0"),))
    reply = wire(driver).prepare(a, b)
    assert reply.claims["uid-a"].error == ""
    assert reply.claims["uid-b"].error == "device node-1/gpu-0 is already in use by claim default/a (uid-a)"
    assert list(reply.claims["uid-b"].devices) == []
    assert set(driver.prepared_claims()) == {"uid-a"}


# --- lifecycle ----------------------------------------------------------------------


def test_stop_removes_sockets_and_kill_leaves_stale_ones(make_driver, wire, env):
    driver = make_driver()
    driver.stop()
    assert not (env.plugin / "dra.sock").exists()
    assert not (env.registry / "gpu.example.com-reg.sock").exists()

    driver.start()
    driver.kill()
    for path in (env.plugin / "dra.sock", env.registry / "gpu.example.com-reg.sock"):
        assert path.is_socket()
        with socket.socket(socket.AF_UNIX) as sock, pytest.raises(ConnectionRefusedError):
            sock.connect(str(path))
    with pytest.raises(grpc.RpcError) as err:
        wire(driver).get_info(timeout=2)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE

    driver.start()  # over the stale files; a new channel, the old one is in reconnect backoff
    assert wire(driver).get_info().name == "gpu.example.com"


def test_kill_leaves_the_visible_socket_files_untouched(make_driver, env):
    """gRPC listens on a hidden second name; a kill removes only that one, so the visible files
    keep their inode and modification time (no watcher, polling or inotify, sees a change), and a
    stop removes both names."""
    driver = make_driver()
    paths = (env.plugin / "dra.sock", env.registry / "gpu.example.com-reg.sock")
    before = [(p.stat().st_ino, p.stat().st_mtime_ns) for p in paths]
    assert all(p.with_name(f".{p.name}.live").is_socket() for p in paths)
    driver.kill()
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in paths] == before
    driver.start()
    assert [p.stat().st_ino for p in paths] != [ino for ino, _ in before]  # new sockets, one rename each
    driver.stop()
    for path in paths:
        assert not path.exists()
        assert not path.with_name(f".{path.name}.live").exists()


def test_journal_file_recorder_and_memory(make_driver, wire, claim, env):
    recorder = ListRecorder()
    journal = env.root / "journal.jsonl"
    driver = make_driver(recorder=recorder, journal=str(journal))
    c = claim("gpu", "uid-1")
    w = wire(driver)
    w.get_info()
    w.prepare(c)
    with pytest.raises(grpc.RpcError):
        w.notify(False, "nope")
    records = read_journal(journal)
    assert [(r["method"].rsplit("/", 1)[1], r["code"]) for r in records] == [
        ("GetInfo", "OK"),
        ("NodePrepareResources", "OK"),
        ("NotifyRegistrationStatus", "UNKNOWN"),
    ]
    assert records[1]["request"] == {"claims": [{"namespace": "default", "uid": "uid-1", "name": "gpu"}]}
    assert records[1]["response"]["claims"]["uid-1"]["devices"][0]["deviceName"] == "gpu-0"
    assert records[1]["kind"] == "rpc"
    assert records[1]["side"] == "plugin"
    assert all(json.dumps(r) for r in records)
    assert [kind for kind, _ in recorder.events] == ["rpc"] * 3
    assert recorder.events[1][1]["side"] == "plugin"
    assert recorder.events[1][1]["method"] == V1_PREPARE
    assert [c.seq for c in driver.calls] == [1, 2, 3]


def test_publishes_resource_slice(make_driver):
    published: list[list[dict[str, Any]]] = []
    make_driver(publisher=published.append, devices=2, node_name="worker-7")
    (slices,) = published
    (slice_,) = slices
    assert slice_["kind"] == "ResourceSlice"
    assert slice_["spec"]["driver"] == "gpu.example.com"
    assert slice_["spec"]["nodeName"] == "worker-7"
    assert slice_["spec"]["pool"] == {"name": "worker-7", "generation": 1, "resourceSliceCount": 1}
    assert [d["name"] for d in slice_["spec"]["devices"]] == ["gpu-0", "gpu-1"]


def test_claim_source_transport_error_fails_the_call(env, wire):
    from fake_plugins import FakeDriver

    def unreachable(namespace: str, name: str) -> dict[str, Any]:
        raise ConnectionError("connection refused")

    with FakeDriver(env.config(), claim_source=unreachable) as driver:
        c = {"metadata": {"namespace": "default", "name": "gpu", "uid": "uid-1"}}
        with pytest.raises(grpc.RpcError) as err:
            wire(driver).prepare(c)
    assert err.value.code() == grpc.StatusCode.UNKNOWN
    assert err.value.details() == "get resource claims: retrieve claim default/gpu: connection refused"


def test_failed_publish_leaves_no_half_started_driver(make_driver, env):
    def broken(slices: list[dict[str, Any]]) -> None:
        raise RuntimeError("API server down")

    driver = make_driver(publisher=broken, start=False)
    with pytest.raises(RuntimeError, match="API server down"):
        driver.start()
    assert not driver.running
    assert not (env.plugin / "dra.sock").exists()
    assert not (env.registry / "gpu.example.com-reg.sock").exists()
