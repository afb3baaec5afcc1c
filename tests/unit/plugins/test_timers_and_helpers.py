"""Timers, backoff, gRPC error mapping and health helpers."""

from __future__ import annotations

import threading

import grpc
import pytest

from drasim._proto.drahealth.v1 import api_pb2 as h1
from drasim.clock import ScaledClock
from drasim.plugins import DeviceHealthReport, ManualScheduler, ThreadScheduler, pick_health_service
from drasim.plugins.client import channel_options, go_code_name, rpc_error_from
from drasim.plugins.health import (
    DEFAULT_HEALTH_TIMEOUT,
    HEALTH_MESSAGE_MAX_LENGTH,
    convert_response,
    health_check_timeout,
    truncate_health_message,
)
from drasim.plugins.timers import ExponentialBackoff


def test_manual_scheduler_runs_due_callbacks_in_order() -> None:
    scheduler = ManualScheduler()
    ran: list[str] = []
    scheduler.call_later(2, lambda: ran.append("b"))
    scheduler.call_later(1, lambda: ran.append("a"))
    cancelled = scheduler.call_later(1.5, lambda: ran.append("x"))
    cancelled.cancel()
    assert scheduler.pending() == [1, 2]
    assert scheduler.advance(1.9) == 1
    assert ran == ["a"]
    scheduler.call_later(0.05, lambda: ran.append("c"))  # due at 1.95
    assert scheduler.advance(1) == 2
    assert ran == ["a", "c", "b"]
    assert scheduler.now == pytest.approx(2.9)


def test_manual_scheduler_callbacks_may_schedule_more() -> None:
    scheduler = ManualScheduler()
    ran: list[float] = []

    def again() -> None:
        ran.append(scheduler.now)
        if len(ran) < 3:
            scheduler.call_later(1, again)

    scheduler.call_later(1, again)
    scheduler.advance(10)
    assert ran == [1, 2, 3]


def test_thread_scheduler_runs_and_cancels() -> None:
    scheduler = ThreadScheduler()
    fired = threading.Event()
    never = threading.Event()
    scheduler.call_later(0.0, fired.set)
    handle = scheduler.call_later(60, never.set)
    assert fired.wait(5)
    handle.cancel()
    scheduler.stop()
    scheduler.call_later(0.0, never.set)  # ignored after stop
    assert not never.wait(0.05)


def test_goroutinemap_backoff() -> None:
    backoff = ExponentialBackoff()
    assert [backoff.next_delay() for _ in range(10)] == [0.5, 1, 2, 4, 8, 16, 32, 64, 122, 122]
    backoff.reset()
    assert backoff.next_delay() == 0.5


class _FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self._code = code
        self._details = details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (grpc.StatusCode.OK, "OK"),
        (grpc.StatusCode.CANCELLED, "Canceled"),
        (grpc.StatusCode.DEADLINE_EXCEEDED, "DeadlineExceeded"),
        (grpc.StatusCode.UNAVAILABLE, "Unavailable"),
        (grpc.StatusCode.UNIMPLEMENTED, "Unimplemented"),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, "ResourceExhausted"),
        (grpc.StatusCode.FAILED_PRECONDITION, "FailedPrecondition"),
        (None, "Unknown"),
    ],
)
def test_go_code_names(code: grpc.StatusCode | None, name: str) -> None:
    assert go_code_name(code) == name


def test_rpc_error_wording() -> None:
    err = rpc_error_from(_FakeRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"))
    assert (err.code, err.details) == ("DeadlineExceeded", "context deadline exceeded")
    err = rpc_error_from(_FakeRpcError(grpc.StatusCode.INTERNAL, "driver exploded"))
    assert str(err) == "rpc error: code = Internal desc = driver exploded"


def test_channel_options_scale_reconnect_backoff() -> None:
    options = dict(channel_options(ScaledClock(0.01)))
    assert options["grpc.initial_reconnect_backoff_ms"] == 10
    assert options["grpc.max_reconnect_backoff_ms"] == 1200


@pytest.mark.parametrize(
    ("services", "expected"),
    [
        (["v1beta1.DRAPlugin"], ""),
        ([], ""),
        (["v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth"], "v1alpha1.DRAResourceHealth"),
        (["v1.DRAResourceHealth"], "v1.DRAResourceHealth"),
        (["v1alpha1.DRAResourceHealth", "v1.DRAResourceHealth"], "v1.DRAResourceHealth"),
    ],
    ids=["none", "empty", "only-v1alpha1", "only-v1", "both-picks-v1"],
)
def test_pick_health_service(services: list[str], expected: str) -> None:
    assert pick_health_service(services) == expected


def test_convert_health_response() -> None:
    msg = h1.NodeWatchResourcesResponse(
        devices=[
            h1.DeviceHealth(device=h1.DeviceIdentifier(pool_name="p", device_name="d"), health=h1.HEALTHY),
            h1.DeviceHealth(
                device=h1.DeviceIdentifier(pool_name="p", device_name="e"),
                health=h1.UNHEALTHY,
                last_updated_time=5,
                health_check_timeout_seconds=-1,
                message="m",
            ),
            h1.DeviceHealth(device=h1.DeviceIdentifier(pool_name="p", device_name="f")),
        ]
    )
    assert convert_response(msg) == (
        DeviceHealthReport("p", "d", "Healthy"),
        DeviceHealthReport("p", "e", "Unhealthy", 5, -1, "m"),
        DeviceHealthReport("p", "f", "Unknown"),
    )


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(0, 30.0), (-5, 30.0), (1, 1.0), (120, 120.0)],
    ids=["zero-default", "negative-default", "one", "custom"],
)
def test_health_check_timeout(seconds: int, expected: float) -> None:
    assert health_check_timeout(seconds) == expected
    assert DEFAULT_HEALTH_TIMEOUT == 30.0


def test_health_message_up_to_1024_bytes_is_kept() -> None:
    assert HEALTH_MESSAGE_MAX_LENGTH == 1024
    assert truncate_health_message("") == ""
    assert truncate_health_message("x" * 1024) == "x" * 1024
    # 512 two-byte characters are 1024 bytes: kept although Python counts 512.
    assert truncate_health_message("é" * 512) == "é" * 512


def test_long_health_message_keeps_1021_bytes_and_an_ellipsis() -> None:
    out = truncate_health_message("x" * 1000 + "y" * 100)
    assert out == "x" * 1000 + "y" * 21 + "..."
    assert len(out.encode()) == 1024


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a two-byte character starting at byte 1020: its first byte is kept
        ("a" * 1020 + "é" + "b" * 10, "a" * 1020 + "\ufffd..."),
        # a three-byte character starting at byte 1019: two of its bytes are kept
        ("a" * 1019 + "€" + "b" * 10, "a" * 1019 + "\ufffd\ufffd..."),
        # a three-byte character ending at byte 1020 is whole
        ("a" * 1018 + "€" + "b" * 10, "a" * 1018 + "€..."),
        # a four-byte character starting at byte 1018: three of its bytes are kept
        ("a" * 1018 + "😀" + "b" * 10, "a" * 1018 + "\ufffd\ufffd\ufffd..."),
    ],
    ids=["split-2-byte", "split-3-byte", "whole-3-byte", "split-4-byte"],
)
def test_truncation_counts_bytes_like_go(message: str, expected: str) -> None:
    assert truncate_health_message(message) == expected


def test_registration_deadlines_are_scaled_but_at_least_a_real_second() -> None:
    from drasim.clock import ScaledClock
    from drasim.plugins.registration import GET_INFO_TIMEOUT, NOTIFY_TIMEOUT, registration_deadline

    fast, slow = ScaledClock(0.01), ScaledClock(10.0)
    assert registration_deadline(fast, GET_INFO_TIMEOUT) == 1.0  # 10 ms scaled: floored
    assert registration_deadline(fast, NOTIFY_TIMEOUT) == 1.0
    assert registration_deadline(slow, GET_INFO_TIMEOUT) == 10.0  # a slowed run keeps its scale
    assert registration_deadline(fast, 0.5) == 0.5  # never longer than the nominal timeout
