"""The kubelet-side gRPC client against a scripted plugin (grpcio-testing): no socket, no real-time wait.

Each call is made on a thread; the test takes the invocation from the testing channel and
answers it: every gRPC status code, and replies that leave claims out, add unknown ones,
carry per-claim errors or nil entries.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import grpc
import grpc_testing
import pytest

from drasim._proto.dra.v1 import api_pb2
from drasim.clock import RealClock
from drasim.errors import RpcError
from drasim.plugins.client import GrpcDriverClient, go_code_name
from drasim.values import ClaimRef, Device, PrepareResult, UnprepareResult

SERVICE = "v1.DRAPlugin"
DESCRIPTOR = api_pb2.DESCRIPTOR.services_by_name["DRAPlugin"]
PREPARE = DESCRIPTOR.methods_by_name["NodePrepareResources"]
UNPREPARE = DESCRIPTOR.methods_by_name["NodeUnprepareResources"]
A = ClaimRef("default", "uid-a", "a")
B = ClaimRef("default", "uid-b", "b")
WAIT = 10.0


class Events:
    def __init__(self) -> None:
        self.rpcs: list[dict[str, Any]] = []

    def record(self, kind: str, **fields: Any) -> None:
        if kind == "rpc":
            self.rpcs.append(fields)


@pytest.fixture
def scripted(tmp_path) -> Iterator[tuple[GrpcDriverClient, Any, Events]]:
    events = Events()
    client = GrpcDriverClient(
        "gpu.example.com", str(tmp_path / "absent.sock"), SERVICE, clock=RealClock(), recorder=events
    )
    channel = grpc_testing.channel([DESCRIPTOR], grpc_testing.strict_real_time())
    real, client.channel = client.channel, channel
    try:
        yield client, channel, events
    finally:
        client.channel = real
        client.close()


def call_in_thread(fn, *args) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = fn(*args)
        except RpcError as err:
            outcome["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def answer(channel, method, response, code=grpc.StatusCode.OK, details="") -> Any:
    _metadata, request, rpc = channel.take_unary_unary(method)
    rpc.terminate(response.SerializeToString() if response is not None else b"", (), code, details)
    return request


ERROR_CODES = [code for code in grpc.StatusCode if code is not grpc.StatusCode.OK]


@pytest.mark.parametrize("code", ERROR_CODES, ids=[c.name for c in ERROR_CODES])
def test_every_status_code_becomes_an_rpc_error_with_the_go_name(scripted, code):
    client, channel, events = scripted
    thread, outcome = call_in_thread(client.node_prepare_resources, [A])
    request = answer(channel, PREPARE, None, code, f"plugin says {code.name}")
    thread.join(WAIT)
    assert not thread.is_alive()
    error = outcome["error"]
    assert error.code == go_code_name(code)
    assert error.details == f"plugin says {code.name}"
    assert str(error) == f"rpc error: code = {go_code_name(code)} desc = plugin says {code.name}"
    assert api_pb2.NodePrepareResourcesRequest.FromString(request).claims[0].uid == "uid-a"
    assert events.rpcs[-1]["code"] == go_code_name(code)
    assert events.rpcs[-1]["response"] is None


def test_a_reply_that_leaves_a_claim_out_is_returned_without_it(scripted):
    client, channel, _ = scripted
    thread, outcome = call_in_thread(client.node_prepare_resources, [A, B])
    reply = api_pb2.NodePrepareResourcesResponse()
    reply.claims["uid-a"].devices.add(
        pool_name="p", device_name="d", request_names=["r"], cdi_device_ids=["x=y"]
    )
    answer(channel, PREPARE, reply)
    thread.join(WAIT)
    assert outcome["result"] == {"uid-a": PrepareResult(devices=(Device("p", "d", ("r",), ("x=y",), None),))}


def test_a_reply_with_an_unknown_claim_and_a_per_claim_error_is_returned_as_sent(scripted):
    client, channel, _ = scripted
    thread, outcome = call_in_thread(client.node_prepare_resources, [A])
    reply = api_pb2.NodePrepareResourcesResponse()
    reply.claims["uid-a"].error = "device busy"
    reply.claims["uid-ghost"].SetInParent()
    answer(channel, PREPARE, reply)
    thread.join(WAIT)
    assert outcome["result"] == {"uid-a": PrepareResult(error="device busy"), "uid-ghost": PrepareResult()}


def test_an_empty_reply_has_no_claims(scripted):
    client, channel, events = scripted
    thread, outcome = call_in_thread(client.node_unprepare_resources, [A, B])
    answer(channel, UNPREPARE, api_pb2.NodeUnprepareResourcesResponse())
    thread.join(WAIT)
    assert outcome["result"] == {}
    assert events.rpcs[-1]["code"] == "OK"


def test_unprepare_per_claim_errors(scripted):
    client, channel, _ = scripted
    thread, outcome = call_in_thread(client.node_unprepare_resources, [A, B])
    reply = api_pb2.NodeUnprepareResourcesResponse()
    reply.claims["uid-a"].error = "still in use"
    reply.claims["uid-b"].SetInParent()
    answer(channel, UNPREPARE, reply)
    thread.join(WAIT)
    assert outcome["result"] == {"uid-a": UnprepareResult(error="still in use"), "uid-b": UnprepareResult()}
