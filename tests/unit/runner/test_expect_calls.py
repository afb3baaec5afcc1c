"""expectCalls and expectConsistentReplies against hand-journaled RPC events."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from drasim.errors import ConfigError
from drasim.runner import expectations
from drasim.runner.context import StepFailure
from drasim.runner.expectations.common import grpc_code
from drasim.scenario.expectations import CallMatch, ExpectCalls, ExpectConsistentReplies

W: Any = sys.modules["drasim_test_checks_world"]  # loaded by tests/conftest.py


@pytest.fixture
def world(tmp_path: Path) -> Any:
    return W.FakeWorld(tmp_path)


def fails(world: Any, args: object, ctx: Any = None) -> StepFailure:
    with pytest.raises(StepFailure) as info:
        expectations.run_check(world, args, ctx or W.context("expectCalls"))
    return info.value


@pytest.mark.parametrize(
    ("given", "normal"),
    [("DeadlineExceeded", "DEADLINE_EXCEEDED"), ("UNAVAILABLE", "UNAVAILABLE"), ("OK", "OK"),
     ("Canceled", "CANCELLED"), ("Unavailable", "UNAVAILABLE"), ("", "")],
)  # fmt: skip
def test_grpc_codes_normalise(given: str, normal: str) -> None:
    assert grpc_code(given) == normal


def test_counts_pass(world: Any) -> None:
    world.kubelet_call("NodePrepareResources", ["default/gpu"])
    world.kubelet_call("NodeUnprepareResources", ["default/gpu"])
    expectations.run_check(
        world,
        ExpectCalls(node_prepare_resources=1, node_unprepare_resources=1, claim="gpu"),
        W.context("expectCalls"),
    )


def test_count_after_mark_fails_with_similar_calls(world: Any) -> None:
    world.kubelet_call("NodeUnprepareResources", ["default/gpu"])
    mark = world.journal.mark()
    world.kubelet_call("NodeUnprepareResources", ["default/other"])
    world.kubelet_call("NodeUnprepareResources", ["default/gpu"], driver=W.NIC)
    args = ExpectCalls(driver=W.GPU, claim="gpu", since="deleted", node_unprepare_resources=1)
    failure = fails(world, args, W.context("expectCalls", deleted=mark))
    assert failure.message == (
        "expected 1 NodeUnprepareResources call to gpu.example.com for claim default/gpu "
        "after mark 'deleted'; found 0"
    )
    assert failure.expected == {"NodeUnprepareResources": 1}
    assert failure.actual == {"NodeUnprepareResources": 0}
    assert [e["seq"] for e in failure.similar] == [mark + 1, mark + 2]


def test_previous_window_and_several_counts(world: Any) -> None:
    for _ in range(9):
        world.kubelet_call("NodePrepareResources", ["default/gpu"])
    # context: the previous expectCalls started at seq 8, so one call is in the window
    expectations.run_check(
        world, ExpectCalls(since="previous", node_prepare_resources=1), W.context("expectCalls")
    )
    failure = fails(world, ExpectCalls(node_prepare_resources=2, node_unprepare_resources=1))
    assert failure.message == (
        "expected 2 NodePrepareResources calls since the start; found 9; "
        "expected 1 NodeUnprepareResources call since the start; found 0"
    )


def test_registration_calls_come_from_the_plugin_side(world: Any) -> None:
    world.plugin_call("GetInfo", code="UNAVAILABLE")
    world.plugin_call("GetInfo")
    world.plugin_call("NotifyRegistrationStatus")
    world.plugin_call("NodeWatchResources")
    world.plugin_call("NodeWatchResources", stream=True)  # a later message, not a new stream
    world.plugin_call("NodePrepareResources")  # plugin side: never counted for DRA methods
    expectations.run_check(
        world,
        ExpectCalls(
            get_info=2, notify_registration_status=1, node_watch_resources=1, node_prepare_resources=0
        ),
        W.context("expectCalls"),
    )


def test_async_count_waits_only_until_it_settles(world: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("drasim.runner.expectations.common.SETTLE_TIMEOUT", 0.05)
    failure = fails(world, ExpectCalls(node_watch_resources=1))
    assert failure.message == (
        "expected 1 NodeWatchResources call since the start; found 0 "
        "(no plugin journals its calls: NodeWatchResources is only observable with the fake plugin)"
    )
    world.plugin_call("GetInfo")
    failure = fails(world, ExpectCalls(node_watch_resources=1))
    assert failure.message == "expected 1 NodeWatchResources call since the start; found 0"


def test_async_count_sees_a_stream_opened_by_another_thread(world: Any) -> None:
    import threading

    opener = threading.Thread(target=world.plugin_call, args=("NodeWatchResources",))
    opener.start()
    expectations.run_check(world, ExpectCalls(node_watch_resources=1), W.context("expectCalls"))
    opener.join()


def test_sequence_in_order(world: Any) -> None:
    world.kubelet_call("NodePrepareResources", ["default/a-gpu"], code="Unavailable")
    world.kubelet_call("NodePrepareResources", ["default/a-gpu"])
    world.kubelet_call("NodeUnprepareResources", ["default/a-gpu"])
    calls = [
        CallMatch(method="NodePrepareResources", claims=["a-gpu"], code="UNAVAILABLE"),
        CallMatch(method="NodePrepareResources", claims=["default/a-gpu"], code="OK", driver=W.GPU),
    ]
    expectations.run_check(world, ExpectCalls(calls=calls), W.context("expectCalls"))
    failure = fails(world, ExpectCalls(calls=list(reversed(calls))))
    assert failure.message == (
        "call 1 since the start: expected NodePrepareResources to gpu.example.com claims=[default/a-gpu] "
        "code=OK; found #1 NodePrepareResources gpu.example.com claims=[default/a-gpu] -> Unavailable"
    )
    assert failure.actual == {
        "calls": [
            {
                "method": "NodePrepareResources",
                "driver": W.GPU,
                "claims": ["default/a-gpu"],
                "code": "UNAVAILABLE",
            },
            {"method": "NodePrepareResources", "driver": W.GPU, "claims": ["default/a-gpu"], "code": "OK"},
        ]
    }


def test_sequence_length_and_unordered(world: Any) -> None:
    world.kubelet_call("NodePrepareResources", ["default/a", "default/b"])
    world.kubelet_call("NodePrepareResources", ["default/c"])
    any_call = CallMatch(method="NodePrepareResources")
    both = CallMatch(method="NodePrepareResources", claims=["b", "a"])
    # greedy matching would pair any_call with the a+b call and fail; bipartite matching passes
    expectations.run_check(
        world, ExpectCalls(calls=[any_call, both], ordered=False), W.context("expectCalls")
    )
    failure = fails(world, ExpectCalls(calls=[any_call]))
    assert failure.message == (
        "expected 1 call of NodePrepareResources since the start; found 2: "
        "#1 NodePrepareResources gpu.example.com claims=[default/a, default/b] -> OK; "
        "#2 NodePrepareResources gpu.example.com claims=[default/c] -> OK"
    )
    only_c = CallMatch(method="NodePrepareResources", claims=["c"])
    failure = fails(world, ExpectCalls(calls=[only_c, only_c], ordered=False))
    assert failure.message.startswith(
        "expected call 2 (NodePrepareResources claims=[default/c]) since the start in any order; "
        "no call left matches it among: #1"
    )


def test_unknown_mark_is_a_config_error(world: Any) -> None:
    with pytest.raises(ConfigError, match="'nope' is not 'start'"):
        expectations.run_check(world, ExpectCalls(since="nope", get_info=0), W.context("expectCalls"))


# ------------------------------------------------------------------ consistent replies


def test_consistent_replies_pass_and_ignore_failed_calls(world: Any) -> None:
    reply = W.prepare_reply("default/gpu", [W.device("gpu-0")])
    world.kubelet_call("NodePrepareResources", ["default/gpu"], response=reply)
    world.kubelet_call("NodePrepareResources", ["default/gpu"], code="Unavailable")
    world.kubelet_call(
        "NodePrepareResources", ["default/gpu"], response=W.prepare_reply("default/gpu", [], error="boom")
    )
    world.kubelet_call("NodePrepareResources", ["default/gpu"], response=reply)
    ctx = W.context("expectConsistentReplies")
    expectations.run_check(world, ExpectConsistentReplies(claim="gpu"), ctx)


def test_consistent_replies_fail_on_different_devices(world: Any) -> None:
    world.kubelet_call(
        "NodePrepareResources", ["default/gpu"], response=W.prepare_reply("default/gpu", [W.device("gpu-0")])
    )
    world.kubelet_call(
        "NodePrepareResources",
        ["default/gpu"],
        response=W.prepare_reply("default/gpu", [W.device("gpu-0", cdi="gpu.example.com/gpu=x-1")]),
    )
    failure = fails(world, ExpectConsistentReplies(claim="gpu"), W.context("expectConsistentReplies"))
    assert failure.message == (
        "expected every successful NodePrepareResources reply for claim default/gpu since the start "
        "to carry the same devices; reply #2 differs from reply #1"
    )
    assert failure.expected["#1"][0]["cdiIDs"] == ["gpu.example.com/gpu=gpu-0"]
    assert failure.actual["#2"][0]["cdiIDs"] == ["gpu.example.com/gpu=x-1"]
    assert [e["seq"] for e in failure.similar] == [1, 2]


def test_consistent_replies_need_enough_replies(world: Any) -> None:
    world.kubelet_call(
        "NodePrepareResources", ["default/gpu"], response=W.prepare_reply("default/gpu", [W.device("gpu-0")])
    )
    world.kubelet_call("NodePrepareResources", ["default/gpu"], code="DeadlineExceeded")
    failure = fails(world, ExpectConsistentReplies(claim="gpu", driver=W.GPU), W.context("x"))
    assert failure.message == (
        "expected at least 2 successful replies to NodePrepareResources for claim default/gpu from "
        "gpu.example.com since the start; found 1 (of 2 calls)"
    )
