"""The proxy's rule bookkeeping and its reading and rewriting of messages (no sockets)."""

from __future__ import annotations

import threading
from pathlib import Path

from drasim._proto.dra.v1 import api_pb2 as v1
from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim.faults import UNKNOWN_UID, PluginFault
from drasim.plugins import conversion
from drasim.proxy import Proxy, ProxyConfig, wire
from drasim.proxy.rules import FaultRules
from drasim.values import ClaimRef

A = ClaimRef(namespace="default", uid="uid-a", name="a")
B = ClaimRef(namespace="default", uid="uid-b", name="b")
PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"


def test_first_matching_rule_with_uses_left_applies_after_its_skips() -> None:
    first = PluginFault(rpc="NodePrepareResources", claim="default/a", code="INTERNAL", times=1, after=1)
    second = PluginFault(rpc="*", code="UNAVAILABLE", times=2)
    rules = FaultRules([first, second])
    assert rules.select("NodePrepareResources", [B]) is second  # first does not match claim b
    assert rules.select("NodePrepareResources", [A]) is second  # first lets one call through
    assert rules.select("NodePrepareResources", [A]) is first
    assert rules.select("GetInfo") is None  # second used up
    assert rules.fired() == [1, 2]


def test_a_claim_is_selected_by_uid_too() -> None:
    rules = FaultRules([PluginFault(rpc="NodeUnprepareResources", claim="uid-b", error="x")])
    assert rules.select("NodeUnprepareResources", [A]) is None
    assert rules.select("NodeUnprepareResources", [A, B]) is not None


def test_held_calls_are_released_by_release_and_by_stop() -> None:
    rules = FaultRules()
    outcomes: list[bool] = []
    threads = [threading.Thread(target=lambda: outcomes.append(rules.hold())) for _ in range(2)]
    for t in threads:
        t.start()
    assert rules.wait_held(2, timeout=5)
    rules.release()
    for t in threads:
        t.join(5)
    assert outcomes == [False, False]
    assert rules.held() == 0
    gave_up = threading.Event()
    waiter = threading.Thread(target=lambda: outcomes.append(rules.hold(gave_up.is_set)))
    waiter.start()
    assert rules.wait_held(1, timeout=5)
    gave_up.set()
    rules.wake()
    waiter.join(5)
    assert outcomes[-1] is True  # the caller gave up first
    rules.stop()
    assert rules.hold() is False  # a stopped proxy holds nothing


def _reply() -> bytes:
    device = v1.Device(pool_name="node-1", device_name="gpu-0", request_names=["r"], cdi_device_ids=["x/g=0"])
    return bytes(
        v1.NodePrepareResourcesResponse(
            claims={
                "uid-a": v1.NodePrepareResourceResponse(devices=[device]),
                "uid-b": v1.NodePrepareResourceResponse(devices=[device]),
            }
        ).SerializeToString()
    )


def test_reply_shaping() -> None:
    claims = (A, B)
    rule = PluginFault(rpc="NodePrepareResources", claim="default/a", error="boom")
    shaped = conversion.prepare_response(
        "v1.DRAPlugin", wire.shape_reply("v1.DRAPlugin", "NodePrepareResources", _reply(), claims, rule)
    )
    a, b = shaped["uid-a"], shaped["uid-b"]
    assert a is not None
    assert b is not None
    assert (a.error, a.devices, bool(b.devices)) == ("boom", (), True)
    rule = PluginFault(rpc="NodePrepareResources", missing_claim=True, unknown_uid=True)
    shaped = conversion.prepare_response(
        "v1.DRAPlugin", wire.shape_reply("v1.DRAPlugin", "NodePrepareResources", _reply(), claims, rule)
    )
    assert set(shaped) == {UNKNOWN_UID}
    rule = PluginFault(rpc="NodePrepareResources", claim="default/b", nil_entry=True)
    shaped = conversion.prepare_response(
        "v1.DRAPlugin", wire.shape_reply("v1.DRAPlugin", "NodePrepareResources", _reply(), claims, rule)
    )
    b = shaped["uid-b"]
    assert b is not None
    assert (b.error, b.devices) == ("", ())


def test_request_claims_and_reply_journal_form_match_the_kubelet_client() -> None:
    request = conversion.prepare_request("v1beta1.DRAPlugin", [A, B])
    assert wire.request_claims("v1beta1.DRAPlugin", request) == (A, B)
    assert wire.reply_json("v1.DRAPlugin", "NodePrepareResources", _reply()) == conversion.prepare_json(
        conversion.prepare_response("v1.DRAPlugin", _reply())
    )


def test_get_info_advertises_the_given_services_and_calls_go_to_one_the_driver_offers(tmp_path: Path) -> None:
    proxy = Proxy(
        ProxyConfig(
            registry_dir=tmp_path / "r",
            driver_registry_dir=tmp_path / "d",
            socket_dir=tmp_path / "s",
            advertise=["v1alpha3.NodeService"],
        )
    )

    class Registration:
        upstream = tmp_path / "d" / "gpu-reg.sock"
        listen = tmp_path / "r" / "gpu-reg.sock"

    info = reg_pb.PluginInfo(
        type="DRAPlugin",
        name="gpu.example.com",
        endpoint="",  # the DRA service on the registration socket: no DRA socket of the proxy's
        supported_versions=["v1beta1.DRAPlugin", "v1.DRAPlugin", "v1alpha1.DRAResourceHealth"],
    )
    rewritten = reg_pb.PluginInfo.FromString(proxy.on_get_info(Registration(), info.SerializeToString()))  # type: ignore[arg-type]
    assert list(rewritten.supported_versions) == ["v1alpha3.NodeService", "v1alpha1.DRAResourceHealth"]
    assert proxy.driver_name == "gpu.example.com"
    # The kubelet calls v1alpha4 (served as /v1alpha3.Node); the driver offered v1 first.
    assert proxy.upstream_path("/v1alpha3.Node/NodePrepareResources") == PREPARE
    assert proxy.upstream_path(PREPARE) == PREPARE
    assert (
        proxy.upstream_path("/pluginregistration.Registration/GetInfo")
        == "/pluginregistration.Registration/GetInfo"
    )
