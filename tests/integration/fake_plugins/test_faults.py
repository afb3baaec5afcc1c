"""Scripted faults, observed over real unix sockets."""

from __future__ import annotations

import threading

import grpc
import pytest

from drasim._proto.dra.v1 import api_pb2 as dra_v1
from fake_plugins import Behaviour, PluginFault
from fake_plugins.state import read_claims_dir


def behaviour(*faults: dict) -> Behaviour:
    return Behaviour.from_dict({"faults": list(faults)})


def rpc_error(call, *args, **kwargs) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        call(*args, **kwargs)
    return err.value


def test_status_code_n_times_then_success(make_driver, wire, claim):
    driver = make_driver(
        behaviour=behaviour({"rpc": "NodePrepareResources", "code": "UNAVAILABLE", "times": 2})
    )
    c = claim("gpu", "uid-1")
    w = wire(driver)
    for _ in range(2):
        err = rpc_error(w.prepare, c)
        assert err.code() == grpc.StatusCode.UNAVAILABLE
        assert err.details() == "fake driver: scripted UNAVAILABLE for NodePrepareResources"
    assert w.prepare(c).claims["uid-1"].error == ""
    assert driver.fault_counts() == [2]
    assert [call.code for call in driver.calls_to("NodePrepareResources")] == [
        "UNAVAILABLE",
        "UNAVAILABLE",
        "OK",
    ]


def test_get_info_fails_once_go_style_code(make_driver, wire):
    driver = make_driver(behaviour=behaviour({"rpc": "GetInfo", "code": "Unavailable", "once": True}))
    w = wire(driver)
    assert rpc_error(w.get_info).code() == grpc.StatusCode.UNAVAILABLE
    assert w.get_info().name == "gpu.example.com"


def test_notify_registration_status_error(make_driver, wire):
    driver = make_driver(
        behaviour=behaviour({"rpc": "NotifyRegistrationStatus", "code": "INTERNAL", "message": "no"})
    )
    err = rpc_error(wire(driver).notify, True)
    assert (err.code(), err.details()) == (grpc.StatusCode.INTERNAL, "no")
    assert driver.registration_status == (True, "")


def test_per_claim_error_only_for_selected_claim(make_driver, wire, claim, env):
    driver = make_driver(
        behaviour=behaviour({"rpc": "NodePrepareResources", "claim": "default/a", "error": "boom"})
    )
    a = claim("a", "uid-a", (("gpu", "gpu-0"),))
    b = claim("b", "uid-b", (("gpu", "gpu-1"),))
    reply = wire(driver).prepare(a, b)
    assert reply.claims["uid-a"].error == "boom"
    assert list(reply.claims["uid-a"].devices) == []
    assert reply.claims["uid-b"].error == ""
    assert set(driver.prepared_claims()) == {"uid-b"}
    assert env.cdi_files() == ["gpu.example.com-claim_uid-b.json"]


def test_unprepare_per_claim_error_keeps_claim_prepared(make_driver, wire, claim, env):
    driver = make_driver(
        behaviour=behaviour({"rpc": "NodeUnprepareResources", "error": "busy", "once": True})
    )
    c = claim("gpu", "uid-1")
    w = wire(driver)
    w.prepare(c)
    assert w.unprepare(c).claims["uid-1"].error == "busy"
    assert env.cdi_files() == ["gpu.example.com-claim_uid-1.json"]
    assert w.unprepare(c).claims["uid-1"].error == ""
    assert env.cdi_files() == []


def test_omitted_claim_and_unknown_uid(make_driver, wire, claim):
    driver = make_driver(
        behaviour=behaviour(
            {"rpc": "NodePrepareResources", "claim": "uid-b", "omit": True, "extraUid": "uid-stranger"},
        )
    )
    a = claim("a", "uid-a", (("gpu", "gpu-0"),))
    b = claim("b", "uid-b", (("gpu", "gpu-1"),))
    reply = wire(driver).prepare(a, b)
    assert sorted(reply.claims) == ["uid-a", "uid-stranger"]


def test_only_the_first_matching_rule_fires(make_driver, wire, claim):
    driver = make_driver(
        behaviour=behaviour(
            {"rpc": "NodePrepareResources", "claim": "uid-b", "omit": True},
            {"rpc": "NodePrepareResources", "extraUid": "uid-stranger"},
        )
    )
    a = claim("a", "uid-a", (("gpu", "gpu-0"),))
    b = claim("b", "uid-b", (("gpu", "gpu-1"),))
    assert sorted(wire(driver).prepare(a, b).claims) == ["uid-a"]
    assert sorted(wire(driver).prepare(a).claims) == ["uid-a", "uid-stranger"]
    assert driver.fault_counts() == [1, 1]


def test_added_faults_do_not_rearm_used_up_rules(make_driver, wire, claim):
    driver = make_driver()
    c = claim("gpu", "uid-1")
    w = wire(driver)
    driver.add_faults([{"rpc": "NodePrepareResources", "code": "ABORTED", "once": True}])
    assert rpc_error(w.prepare, c).code() == grpc.StatusCode.ABORTED
    driver.add_faults([PluginFault(rpc="NodeUnprepareResources", code="INTERNAL", times=1)])
    assert w.prepare(c).claims["uid-1"].error == ""  # the ABORTED rule stays used up
    assert driver.fault_counts() == [1, 0]
    driver.clear_faults()
    assert driver.behaviour.faults == []
    assert driver.fault_counts() == []


def test_skip_then_fire_once(make_driver, wire, claim):
    driver = make_driver(behaviour=behaviour({"rpc": "*", "error": "third time", "skip": 1, "once": True}))
    c = claim("gpu", "uid-1")
    w = wire(driver)
    assert [w.prepare(c).claims["uid-1"].error for _ in range(3)] == ["", "third time", ""]


def test_set_behaviour_replaces_faults_and_resets_counters(make_driver, wire, claim):
    driver = make_driver()
    c = claim("gpu", "uid-1")
    w = wire(driver)
    driver.set_behaviour({"faults": [{"rpc": "NodePrepareResources", "code": "ABORTED", "once": True}]})
    assert rpc_error(w.prepare, c).code() == grpc.StatusCode.ABORTED
    driver.set_behaviour(Behaviour(faults=[PluginFault(rpc="NodePrepareResources", code="ABORTED", times=1)]))
    assert rpc_error(w.prepare, c).code() == grpc.StatusCode.ABORTED
    assert w.prepare(c).claims["uid-1"].error == ""


def test_delay_beyond_client_deadline(make_driver, wire, claim):
    driver = make_driver(behaviour=behaviour({"rpc": "NodePrepareResources", "delay": 0.3, "once": True}))
    c = claim("gpu", "uid-1")
    assert rpc_error(wire(driver).prepare, c, timeout=0.05).code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert driver.journal.wait_for(lambda calls: len(calls) == 1, timeout=5)
    (call,) = driver.calls
    assert call.code == "OK"
    assert call.duration >= 0.3


def test_hang_ends_when_the_caller_gives_up(make_driver, wire, claim):
    """Like a Go driver whose context is cancelled: the hung call ends when the deadline passes."""
    driver = make_driver(behaviour=behaviour({"rpc": "NodePrepareResources", "hang": True, "once": True}))
    c = claim("gpu", "uid-1")
    w = wire(driver)
    assert rpc_error(w.prepare, c, timeout=0.1).code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert driver.journal.wait_for(lambda calls: len(calls) == 1, timeout=5)
    assert driver.calls[0].code == "CANCELLED"
    assert driver.prepared_claims() == {}
    assert w.prepare(c).claims["uid-1"].error == ""


def test_hang_until_released(make_driver, wire, claim):
    driver = make_driver(behaviour=behaviour({"rpc": "NodePrepareResources", "hang": True, "once": True}))
    c = claim("gpu", "uid-1")
    w = wire(driver)
    replies: list[object] = []
    caller = threading.Thread(target=lambda: replies.append(w.prepare(c, timeout=30)), daemon=True)
    caller.start()
    assert driver.wait_hung(1)
    assert driver.calls == []
    driver.release_hangs()
    caller.join(10)
    assert len(replies) == 1
    assert driver.calls[0].code == "OK"
    assert replies[0].claims["uid-1"].error == ""


def test_hang_ends_when_driver_stops(make_driver, wire, claim):
    driver = make_driver(behaviour=behaviour({"rpc": "NodeUnprepareResources", "hang": True}))
    c = claim("gpu", "uid-1")
    future = wire(driver).v1.NodeUnprepareResources.future(
        dra_v1.NodeUnprepareResourcesRequest(
            claims=[dra_v1.Claim(namespace="default", uid="uid-1", name="gpu")]
        )
    )
    assert driver.wait_hung(1)
    driver.stop()
    assert future.exception(timeout=5) is not None
    assert driver.journal.wait_for(lambda calls: len(calls) == 1, timeout=5)
    assert driver.calls[0].code == "UNAVAILABLE"
    del c


@pytest.mark.parametrize("serialize", [True, False])
def test_calls_are_serialized_by_default(make_driver, wire, claim, serialize):
    driver = make_driver(
        serialize=serialize, behaviour=behaviour({"rpc": "NodePrepareResources", "hang": True, "once": True})
    )
    a = claim("a", "uid-a", (("gpu", "gpu-0"),))
    w = wire(driver)
    request = dra_v1.NodePrepareResourcesRequest(
        claims=[dra_v1.Claim(namespace="default", uid="uid-a", name="a")]
    )
    hung = w.v1.NodePrepareResources.future(request, timeout=10)
    assert driver.wait_hung(1)
    if serialize:
        assert rpc_error(w.unprepare, a, timeout=0.3).code() == grpc.StatusCode.DEADLINE_EXCEEDED
    else:
        assert w.unprepare(a, timeout=5).claims["uid-a"].error == ""
    driver.release_hangs()
    assert hung.result(timeout=5).claims["uid-a"].error == ""


def test_crash_before_side_effects_in_process(make_driver, wire, claim, env):
    driver = make_driver(behaviour=behaviour({"rpc": "NodePrepareResources", "crash": "before"}))
    c = claim("gpu", "uid-1")
    err = rpc_error(wire(driver).prepare, c)
    assert err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
    assert driver.crashed.is_set()
    assert driver.stopped.wait(5)
    assert not driver.running
    assert (env.plugin / "dra.sock").is_socket()  # stale, nobody listening
    assert (env.registry / "gpu.example.com-reg.sock").is_socket()
    assert env.cdi_files() == []
    assert not (env.plugin / "prepared-claims").exists()
    assert driver.calls[-1].code == "CRASHED"


def test_crash_after_state_write_then_restart_returns_same_devices(make_driver, wire, claim, env):
    driver = make_driver(behaviour=behaviour({"rpc": "NodePrepareResources", "crash": "after", "once": True}))
    c = claim("gpu", "uid-1", (("gpu", "gpu-2"),))
    rpc_error(wire(driver).prepare, c)
    assert driver.stopped.wait(5)
    assert driver.crashed.is_set()
    assert env.cdi_files() == ["gpu.example.com-claim_uid-1.json"]
    assert list(read_claims_dir(env.plugin / "prepared-claims")) == ["uid-1"]
    driver.start()
    w = wire(driver)
    assert w.devices(w.prepare(c), "uid-1") == [(("gpu",), "node-1", "gpu-2", ("gpu.example.com/gpu=gpu-2",))]


def test_block_outlives_the_caller_and_does_the_work_once_released(make_driver, wire, claim):
    """Unlike hang, a blocked call is not ended by the caller's deadline; released, it prepares."""
    driver = make_driver(behaviour=behaviour({"rpc": "NodePrepareResources", "block": True, "once": True}))
    c = claim("gpu", "uid-1")
    w = wire(driver)
    assert rpc_error(w.prepare, c, timeout=0.1).code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert driver.held_calls() == 1
    assert driver.calls == []
    driver.release_hangs()
    assert driver.journal.wait_for(lambda calls: len(calls) == 1, timeout=5)
    assert driver.calls[0].code == "OK"
    assert list(driver.prepared_claims()) == ["uid-1"]
    assert driver.held_calls() == 0


def test_nil_entry_answers_without_devices_but_prepares(make_driver, wire, claim):
    driver = make_driver(behaviour=behaviour({"rpc": "NodePrepareResources", "nilEntry": True, "once": True}))
    c = claim("gpu", "uid-1")
    entry = wire(driver).prepare(c).claims["uid-1"]
    assert list(entry.devices) == []
    assert entry.error == ""
    assert list(driver.prepared_claims()) == ["uid-1"]
    assert len(wire(driver).prepare(c).claims["uid-1"].devices) == 1
