"""HealthStream's end-of-stream reporting and wait_idle, with a scripted channel (no sockets)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from drasim._proto.drahealth.v1 import api_pb2 as h1
from drasim.clock import ScaledClock
from drasim.plugins.health import HealthStream

DRIVER = "gpu.example.com"


class Unavailable(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE


class ScriptedCall:
    """One stream: yields the scripted responses, then raises the scripted error."""

    def __init__(self, responses: list[Any], error: BaseException | None) -> None:
        self._responses = responses
        self._error = error
        self.cancelled = threading.Event()

    def __iter__(self) -> Iterator[Any]:
        yield from self._responses
        if self._error is not None:
            raise self._error

    def cancel(self) -> None:
        self.cancelled.set()


class ScriptedChannel:
    """``unary_stream`` hands out the next scripted call; an exception in the script is raised by the open."""

    def __init__(self, script: list[ScriptedCall | BaseException]) -> None:
        self.script = queue.Queue[ScriptedCall | BaseException]()
        for item in script:
            self.script.put(item)
        self.opens = 0

    def unary_stream(self, path: str, **_: Any) -> Callable[[Any], ScriptedCall]:
        def open_stream(request: Any) -> ScriptedCall:
            self.opens += 1
            item = self.script.get(timeout=5)
            if isinstance(item, BaseException):
                raise item
            return item

        return open_stream


def stream(channel: ScriptedChannel, ended: list[str], *, connected: bool) -> HealthStream:
    return HealthStream(
        channel,  # type: ignore[arg-type]
        DRIVER,
        "/plug/dra.sock",
        "v1.DRAResourceHealth",
        lambda driver, reports: None,
        clock=ScaledClock(0.001),
        on_end=ended.append,
        connected=lambda: connected,
    )


def response() -> Any:
    return h1.NodeWatchResourcesResponse(
        devices=[h1.DeviceHealth(device=h1.DeviceIdentifier(pool_name="p", device_name="gpu-0"), health=1)]
    )


@pytest.mark.parametrize(
    ("connected", "responses", "cleared"),
    [
        (False, [], False),  # never set up: a plugin that is gone; upstream clears nothing
        (True, [], True),  # set up on a connected channel, then the plugin died
        (False, ["r"], True),  # a response arrived: it was set up
    ],
    ids=["open-failed", "connected-then-died", "had-responses"],
)
def test_end_is_reported_only_for_a_stream_that_was_set_up(
    connected: bool, responses: list[str], cleared: bool
) -> None:
    ended: list[str] = []
    call = ScriptedCall([response() for _ in responses], Unavailable())
    channel = ScriptedChannel([call, ValueError("Cannot invoke RPC: Channel closed!")])
    health = stream(channel, ended, connected=connected)
    health.start()
    assert health.wait_stopped(5)  # the second open raises: the thread ends
    assert ended == ([DRIVER] if cleared else [])


def test_a_cancelled_stream_is_reported_even_when_disconnected() -> None:
    class Cancelled(grpc.RpcError):
        def code(self) -> grpc.StatusCode:
            return grpc.StatusCode.CANCELLED

    ended: list[str] = []
    channel = ScriptedChannel([ScriptedCall([], Cancelled()), ValueError("closed")])
    health = stream(channel, ended, connected=False)
    health.start()
    assert health.wait_stopped(5)
    assert ended == [DRIVER]


def test_wait_idle_returns_as_soon_as_the_thread_ends() -> None:
    # An open on a closed channel ends the thread; wait_idle must not sit out its timeout.
    ended: list[str] = []
    gate = threading.Event()

    class SlowChannel(ScriptedChannel):
        def unary_stream(self, path: str, **_: Any) -> Callable[[Any], ScriptedCall]:
            def open_stream(request: Any) -> ScriptedCall:
                gate.wait(5)
                raise ValueError("Cannot invoke RPC: Channel closed!")

            return open_stream

    health = stream(SlowChannel([]), ended, connected=True)
    health.start()
    waiter: queue.Queue[bool] = queue.Queue()
    threading.Thread(target=lambda: waiter.put(health.wait_idle(60)), daemon=True).start()
    gate.set()
    assert waiter.get(timeout=10) is True  # well before the 60 s timeout
    assert not health.running


def test_wait_idle_waits_until_the_end_was_reported() -> None:
    ended: list[str] = []
    release = threading.Event()

    class HeldCall(ScriptedCall):
        def __iter__(self) -> Iterator[Any]:
            release.wait(5)
            raise Unavailable()

    channel = ScriptedChannel([HeldCall([], None), ValueError("closed")])
    health = stream(channel, ended, connected=True)
    health.start()
    assert health.wait_idle(0.05) is False  # the stream is open
    release.set()
    assert health.wait_idle(5) is True
    assert ended == [DRIVER]  # reported before wait_idle returned
