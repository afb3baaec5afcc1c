"""Device-health stream client (KEP-4680; upstream ``dra_plugin_manager.go`` health goroutine).

For each registered instance that advertises a health service, a thread keeps a
``NodeWatchResources`` server stream open and hands every response, as plain
values, to a callback. When the stream ends or fails it is re-opened after 5 s
(nominal; ``wait.UntilWithContext`` upstream). ``Unimplemented`` stops it for good,
and deregistration cancels it. The service choice is the 1.37-dev
``pickHealthService``: v1 if advertised, else v1alpha1, else no stream.

Values are delivered raw. The kubelet side (``HandleWatchResourcesStream`` and its
``buildDeviceHealth``) is :func:`drasim.runner.health.absorb`, which applies
:func:`health_check_timeout` and :func:`truncate_health_message` below.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from drasim.apiversions import HEALTH_SERVICES, HEALTH_V1, HEALTH_V1ALPHA1, health_api
from drasim.interfaces import Clock, NullRecorder, Recorder
from drasim.plugins.client import go_code_name

__all__ = ["HEALTH_V1", "HEALTH_V1ALPHA1"]  # re-exported names of the table rows, used by callers

#: upstream re-open period of the health stream.
HEALTH_RETRY_PERIOD = 5.0

_HEALTH_NAMES = {1: "Healthy", 2: "Unhealthy"}

#: upstream ``DefaultHealthTimeout`` (healthinfo.go): how long a report stays valid when
#: the plugin sets no positive ``health_check_timeout_seconds``.
DEFAULT_HEALTH_TIMEOUT = 30.0

#: upstream ``v1.ResourceHealthMessageMaxLength`` (k8s.io/api core/v1), in bytes.
HEALTH_MESSAGE_MAX_LENGTH = 1024

_ELLIPSIS = "..."


@dataclass(frozen=True)
class DeviceHealthReport:
    """One ``DeviceHealth`` entry of a ``NodeWatchResourcesResponse``.

    ``health`` is ``Healthy``, ``Unhealthy`` or ``Unknown`` (upstream ``state.DeviceHealthStatus``).
    """

    pool_name: str
    device_name: str
    health: str
    last_updated_time: int = 0
    health_check_timeout_seconds: int = 0
    message: str = ""


#: Receives ``(driver_name, devices)`` for each stream response.
HealthCallback = Callable[[str, tuple[DeviceHealthReport, ...]], None]
HealthEndedCallback = Callable[[str], None]
"""Told the driver name whenever one of its health streams ends (upstream then clears its health)."""


def health_check_timeout(seconds: int) -> float:
    """Seconds a device's report stays valid (upstream ``buildDeviceHealth``).

    A positive ``health_check_timeout_seconds`` is used as is; zero or a negative value
    (which upstream logs at V(4)) means :data:`DEFAULT_HEALTH_TIMEOUT`.
    """
    return float(seconds) if seconds > 0 else DEFAULT_HEALTH_TIMEOUT


def truncate_health_message(message: str) -> str:
    """A health message as the kubelet stores it (upstream ``truncateHealthMessage``).

    Go measures the UTF-8 bytes: a message of at most 1024 bytes is kept; a longer one
    keeps its first 1021 bytes followed by ``...``. The cut may split a multi-byte
    character. Go keeps those bytes, and its JSON encoder turns each one into U+FFFD
    when the status is written, so each byte of a split character becomes one U+FFFD here.
    """
    raw = message.encode("utf-8", errors="surrogatepass")
    if len(raw) <= HEALTH_MESSAGE_MAX_LENGTH:
        return message
    head = raw[: HEALTH_MESSAGE_MAX_LENGTH - len(_ELLIPSIS)]
    dangling = _unfinished_tail(head)
    text = head[: len(head) - dangling].decode("utf-8", errors="surrogatepass")
    return text + "\ufffd" * dangling + _ELLIPSIS


def _unfinished_tail(data: bytes) -> int:
    """How many bytes at the end of ``data`` (cut from valid UTF-8) start an unfinished character."""
    continuation = 0
    while continuation < min(3, len(data)) and data[-1 - continuation] & 0xC0 == 0x80:
        continuation += 1
    if continuation == len(data):
        return 0
    lead = data[-1 - continuation]
    needed = 2 if lead & 0xE0 == 0xC0 else 3 if lead & 0xF0 == 0xE0 else 4 if lead & 0xF8 == 0xF0 else 1
    return continuation + 1 if needed > continuation + 1 else 0


def pick_health_service(supported_services: Sequence[str]) -> str:
    """The health service to use: v1, else v1alpha1, else ``""`` (upstream ``pickHealthService``)."""
    for candidate in HEALTH_SERVICES:
        if candidate in supported_services:
            return candidate
    return ""


def _module(service: str) -> Any:
    return health_api(service).messages


def convert_response(message: Any) -> tuple[DeviceHealthReport, ...]:
    """Plain values from a v1 or v1alpha1 ``NodeWatchResourcesResponse``."""
    return tuple(
        DeviceHealthReport(
            pool_name=d.device.pool_name,
            device_name=d.device.device_name,
            health=_HEALTH_NAMES.get(int(d.health), "Unknown"),
            last_updated_time=int(d.last_updated_time),
            health_check_timeout_seconds=int(d.health_check_timeout_seconds),
            message=d.message,
        )
        for d in message.devices
    )


class HealthStream:
    """Keeps one health stream open against a plugin instance's channel until stopped."""

    def __init__(
        self,
        channel: grpc.Channel,
        driver_name: str,
        endpoint: str,
        service: str,
        callback: HealthCallback,
        *,
        clock: Clock,
        recorder: Recorder | None = None,
        retry_period: float = HEALTH_RETRY_PERIOD,
        on_end: HealthEndedCallback | None = None,
        connected: Callable[[], bool] | None = None,
    ) -> None:
        self._channel = channel
        self._on_end = on_end
        self._connected = connected
        self.driver_name = driver_name
        self.endpoint = endpoint
        self.service = service
        self._callback = callback
        self._clock = clock
        self._recorder = recorder if recorder is not None else NullRecorder()
        self._retry_period = retry_period
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._streaming = False  # from opening a call until its end has been reported
        self._call: Any = None
        self.opened = 0
        self._thread = threading.Thread(target=self._run, name=f"health-{driver_name}", daemon=True)

    @property
    def path(self) -> str:
        """Full method path, e.g. ``/v1.DRAResourceHealth/NodeWatchResources``."""
        return f"/{self.service}/NodeWatchResources"

    def start(self) -> None:
        """Start the background thread (counted as streaming from here: it opens one at once)."""
        with self._lock:
            self._streaming = True  # else wait_idle could see "idle" before the thread first runs
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel the stream and wait for the thread to end."""
        self._stop.set()
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no stream is open (an ended one has been reported); True if so in time."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._streaming or not self._thread.is_alive(), timeout)

    def wait_stopped(self, timeout: float) -> bool:
        """Wait for the thread to end (after :meth:`stop` or Unimplemented); True if it did."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        """Whether the thread is still alive (False after Unimplemented or stop)."""
        return self._thread.is_alive()

    def _run(self) -> None:
        pb = _module(self.service)
        open_stream = self._channel.unary_stream(
            self.path,
            request_serializer=pb.NodeWatchResourcesRequest.SerializeToString,
            response_deserializer=pb.NodeWatchResourcesResponse.FromString,
        )
        try:
            while not self._stop.is_set():
                code = self._one_stream(open_stream, pb)
                if code == "Unimplemented" or self._stop.is_set():
                    break
                self._stop.wait(self._clock.scaled(self._retry_period))
        finally:
            with self._idle:  # whoever waits in wait_idle re-checks that the thread has ended
                self._idle.notify_all()

    def _one_stream(self, open_stream: Any, pb: Any) -> str:
        with self._lock:
            self._streaming = True
        try:
            set_up = self._connected is None or self._connected()
            try:
                call = open_stream(pb.NodeWatchResourcesRequest())
            except ValueError as exc:  # grpcio: the channel was closed; there is nothing left to watch
                self._stop.set()
                self._record_end("Canceled", str(exc))
                return "Canceled"
            with self._lock:
                self._call = call
                self.opened += 1
            if self._stop.is_set():
                call.cancel()
            code, error, received = self._consume(call)
            self._record_end(code, error)
            if self._on_end is not None and (set_up or received or code != "Unavailable"):
                self._report_end()
            return code
        finally:
            with self._idle:
                self._streaming = False
                self._idle.notify_all()

    def _record_end(self, code: str, error: str | None) -> None:
        self._recorder.record(
            "kubelet",
            operation="health-stream-ended",
            driver=self.driver_name,
            endpoint=self.endpoint,
            method=self.path,
            code=code,
            error=error,
        )

    def _consume(self, call: Any) -> tuple[str, str | None, bool]:
        """Deliver every response; (Go code name the stream ended with, error, any response seen)."""
        code, error, received = "OK", None, False
        try:
            for response in call:
                received = True
                self._callback(self.driver_name, convert_response(response))
        except grpc.RpcError as exc:
            code_fn = getattr(exc, "code", None)
            code = go_code_name(code_fn() if callable(code_fn) else None)
            error = str(exc)
        except Exception as exc:  # a failing callback ends this stream; it is re-opened later
            call.cancel()
            code, error = "Unknown", f"health callback failed: {exc!r}"
        finally:
            with self._lock:
                self._call = None
        return code, error, received

    def _report_end(self) -> None:
        """Upstream ``HandleWatchResourcesStream`` defers ``clearDriver``: tell the listener.

        Only for a stream that was set up. Upstream opens the stream first and gives up
        quietly when that fails (a plugin that is gone: Unavailable), so nothing is cleared
        then. grpcio has no separate open: a stream that was opened while the channel was
        not connected and ended Unavailable before any response counts as never set up.
        """
        assert self._on_end is not None
        try:
            self._on_end(self.driver_name)
        except Exception as exc:  # a failing listener must not end the retry loop
            self._recorder.record(
                "kubelet", operation="health-clear", driver=self.driver_name, error=repr(exc)
            )
