"""gRPC client for one registered DRA plugin instance (upstream ``plugin/dra_plugin.go``).

One long-lived channel to ``unix:<endpoint>`` serves every call, as with upstream's
``grpc.NewClient``. Each call gets the instance's timeout (45 s nominal,
``defaultClientCallTimeout``), is timed into ``dra_grpc_operations_duration_seconds``
(upstream ``newMetricsInterceptor``) and journaled as an ``rpc`` event. Channel
connectivity is tracked like upstream's stats handler: READY is "connected", and
when a connection ends a reconnect is requested so a restarted plugin is noticed.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import grpc

from drasim.errors import RpcError
from drasim.interfaces import Clock, NullRecorder, Recorder, ready_recording
from drasim.metrics import HistogramVec, Metrics
from drasim.plugins import conversion
from drasim.values import ClaimRef, PrepareResult, UnprepareResult

#: upstream ``defaultClientCallTimeout``: half of the kubelet retry period.
DEFAULT_CALL_TIMEOUT = 45.0

GRPC_METRIC = "dra_grpc_operations_duration_seconds"
GRPC_METRIC_HELP = "[ALPHA] Duration in seconds of the DRA gRPC operations"

_GO_CODE_NAMES = {
    grpc.StatusCode.OK: "OK",
    grpc.StatusCode.CANCELLED: "Canceled",
    grpc.StatusCode.UNKNOWN: "Unknown",
    grpc.StatusCode.INVALID_ARGUMENT: "InvalidArgument",
    grpc.StatusCode.DEADLINE_EXCEEDED: "DeadlineExceeded",
    grpc.StatusCode.NOT_FOUND: "NotFound",
    grpc.StatusCode.ALREADY_EXISTS: "AlreadyExists",
    grpc.StatusCode.PERMISSION_DENIED: "PermissionDenied",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "ResourceExhausted",
    grpc.StatusCode.FAILED_PRECONDITION: "FailedPrecondition",
    grpc.StatusCode.ABORTED: "Aborted",
    grpc.StatusCode.OUT_OF_RANGE: "OutOfRange",
    grpc.StatusCode.UNIMPLEMENTED: "Unimplemented",
    grpc.StatusCode.INTERNAL: "Internal",
    grpc.StatusCode.UNAVAILABLE: "Unavailable",
    grpc.StatusCode.DATA_LOSS: "DataLoss",
    grpc.StatusCode.UNAUTHENTICATED: "Unauthenticated",
}

# Python's wording for errors raised on the client side, and what grpc-go says instead.
_GO_DETAILS = {
    "Deadline Exceeded": "context deadline exceeded",
    "Locally cancelled by application!": "context canceled",
}

# grpc C-core's wording for a unix socket it could not connect to, and grpc-go's (the kubelet's
# client: google.golang.org/grpc internal/transport, "Error while dialing", with Go's lowercase
# syscall error text), so a pod's error reads as it does on a real node.
_CORE_CONNECT = re.compile(
    r"^failed to connect to all addresses; last error: [A-Z_]+: unix:(?P<path>\S+): "
    r"connect failed: addr: unix:\S+ error: (?P<why>.+)$"
)

T = TypeVar("T")


def go_code_name(code: grpc.StatusCode | None) -> str:
    """The Go ``codes.Code.String()`` name of a Python status code."""
    return _GO_CODE_NAMES.get(code, "Unknown") if code is not None else "Unknown"


def rpc_error_from(exc: grpc.RpcError) -> RpcError:
    """Turn a grpc exception into :class:`drasim.errors.RpcError` with Go-style code and details."""
    code_fn = getattr(exc, "code", None)
    details_fn = getattr(exc, "details", None)
    code = code_fn() if callable(code_fn) else None
    details = details_fn() if callable(details_fn) else None
    text = str(details) if details is not None else str(exc)
    return RpcError(go_code_name(code), go_details(text))


def go_details(text: str) -> str:
    """grpc-go's wording of a client-side error that grpcio words differently (else ``text``)."""
    if text in _GO_DETAILS:
        return _GO_DETAILS[text]
    connect = _CORE_CONNECT.match(text)
    if connect is not None:
        why = connect["why"][:1].lower() + connect["why"][1:]
        dialing = f"dial unix {connect['path']}: connect: {why}"
        return f'connection error: desc = "transport: Error while dialing: {dialing}"'
    return text


#: The shortest real gRPC deadline drasim uses. Scaled kubelet timeouts (GetInfo's 1 s at a
#: time scale of 0.01 would be 10 ms) are not meaningful below this on a loaded machine.
MIN_REAL_DEADLINE = 0.25


def real_deadline(clock: Clock, nominal_seconds: float, floor: float = MIN_REAL_DEADLINE) -> float:
    """A gRPC deadline in real seconds for a kubelet timeout of ``nominal_seconds``: scaled, but
    never under ``floor`` (nor over the nominal timeout)."""
    return max(clock.scaled(nominal_seconds), min(nominal_seconds, floor))


def channel_options(clock: Clock) -> list[tuple[str, Any]]:
    """Reconnect backoff scaled like every other kubelet timer (gRPC default 1 s, max 120 s)."""
    initial = max(10, int(clock.scaled(1.0) * 1000))
    maximum = max(initial, int(clock.scaled(120.0) * 1000))
    return [
        # Each channel gets its own subchannels, as each Go ClientConn does. With the global
        # pool a new channel to a re-created socket inherits the old subchannel's backoff
        # and fails with "failed to connect" right after a plugin restart.
        ("grpc.use_local_subchannel_pool", 1),
        ("grpc.initial_reconnect_backoff_ms", initial),
        ("grpc.min_reconnect_backoff_ms", initial),
        ("grpc.max_reconnect_backoff_ms", maximum),
    ]


class GrpcDriverClient:
    """A :class:`drasim.interfaces.DriverClient` over one reused gRPC channel.

    ``service`` is the negotiated service (``v1.DRAPlugin`` or ``v1beta1.DRAPlugin``);
    ``call_timeout`` is nominal seconds, turned into a real deadline with ``clock.scaled``.
    ``on_connected`` is told every change of the connected flag.
    """

    def __init__(
        self,
        driver_name: str,
        endpoint: str,
        service: str,
        *,
        clock: Clock,
        recorder: Recorder | None = None,
        metrics: Metrics | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        on_connected: Callable[[bool], None] | None = None,
    ) -> None:
        if service not in conversion.SERVICE_PACKAGES:
            msg = f"internal error: unsupported chosen service: {service!r}"
            raise ValueError(msg)
        self._driver_name = driver_name
        self._endpoint = endpoint
        self.service = service
        self.call_timeout = call_timeout
        self._clock = clock
        self._recorder = recorder if recorder is not None else NullRecorder()
        self._record_ready = ready_recording(self._recorder)
        self._durations: HistogramVec | None = None
        if metrics is not None:
            metrics.describe(GRPC_METRIC, kind="histogram", help_text=GRPC_METRIC_HELP)
            self._durations = metrics.histogram_vec(
                GRPC_METRIC, "driver_name", "method_name", "grpc_status_code"
            )
        self._on_connected = on_connected
        self._lock = threading.Lock()
        self._connected = False
        self._closed = False
        self.channel = grpc.insecure_channel("unix:" + endpoint, options=channel_options(clock))
        self._recorder.record("kubelet", operation="grpc-channel", driver=driver_name, endpoint=endpoint)
        # method name -> (full method path, its callable on the channel)
        self._callables: dict[str, tuple[str, grpc.UnaryUnaryMultiCallable[bytes, bytes]]] = {}
        # Like upstream's conn.Connect(): start connecting now so availability is known early.
        self.channel.subscribe(self._on_state, try_to_connect=True)

    @property
    def driver_name(self) -> str:
        """The DRA driver name this instance registered under."""
        return self._driver_name

    @property
    def endpoint(self) -> str:
        """The DRA service socket path."""
        return self._endpoint

    @property
    def connected(self) -> bool:
        """Whether the channel currently has a ready connection."""
        with self._lock:
            return self._connected

    def _on_state(self, state: grpc.ChannelConnectivity) -> None:
        connected = state == grpc.ChannelConnectivity.READY
        with self._lock:
            if self._closed:
                return
            changed = connected != self._connected
            self._connected = connected
        if state == grpc.ChannelConnectivity.IDLE:
            self._request_connect()
        if changed:
            operation = "grpc-connected" if connected else "grpc-disconnected"
            self._recorder.record(
                "kubelet", operation=operation, driver=self._driver_name, endpoint=self._endpoint
            )
        if changed and self._on_connected is not None:
            self._on_connected(connected)

    def _request_connect(self) -> None:
        """Ask gRPC to reconnect after a connection ended (upstream: ``go conn.Connect()``).

        grpcio has no public ``Connect``; its core channel's ``check_connectivity_state(True)``
        is exactly that. It is called under the lock so it never races :meth:`close`.
        """
        with self._lock:
            if self._closed:
                return
            check = getattr(getattr(self.channel, "_channel", None), "check_connectivity_state", None)
            if callable(check):
                with contextlib.suppress(ValueError):
                    check(True)
                return

        def kick(_: grpc.ChannelConnectivity) -> None:
            return None

        with contextlib.suppress(ValueError):  # fallback for other grpcio versions
            self.channel.subscribe(kick, try_to_connect=True)
            self.channel.unsubscribe(kick)

    def close(self) -> None:
        """Close the channel; the instance is unusable afterwards.

        grpcio's connectivity-polling thread fails noisily if the channel closes under it,
        so the close itself happens in the background once that thread has seen the
        unsubscription (within ~0.2 s).
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            was_connected, self._connected = self._connected, False
        if was_connected:  # closing ends the connection (upstream's stats handler sees ConnEnd)
            self._recorder.record(
                "kubelet", operation="grpc-disconnected", driver=self._driver_name, endpoint=self._endpoint
            )
        with contextlib.suppress(ValueError):
            self.channel.unsubscribe(self._on_state)
        threading.Thread(
            target=close_when_idle, args=(self.channel,), name="close-channel", daemon=True
        ).start()

    def node_prepare_resources(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult | None]:
        """NodePrepareResources; the reply is keyed by claim UID."""
        return self._call(
            "NodePrepareResources",
            claims,
            conversion.prepare_request,
            conversion.prepare_response,
            conversion.prepare_json,
        )

    def node_unprepare_resources(self, claims: Sequence[ClaimRef]) -> Mapping[str, UnprepareResult | None]:
        """NodeUnprepareResources; the reply is keyed by claim UID."""
        return self._call(
            "NodeUnprepareResources",
            claims,
            conversion.unprepare_request,
            conversion.unprepare_response,
            conversion.unprepare_json,
        )

    def _call(
        self,
        method: str,
        claims: Sequence[ClaimRef],
        encode: Callable[[str, Sequence[ClaimRef]], bytes],
        decode: Callable[[str, bytes], dict[str, T]],
        to_json: Callable[[Mapping[str, T]], dict[str, Any]],
    ) -> dict[str, T]:
        found = self._callables.get(method)
        if found is None:
            path = conversion.method_path(self.service, method)
            callable_ = self.channel.unary_unary(path, request_serializer=None, response_deserializer=None)
            found = self._callables[method] = (path, callable_)
        path, callable_ = found
        request = encode(self.service, claims)
        start = time.monotonic()
        try:
            raw = callable_(request, timeout=real_deadline(self._clock, self.call_timeout))
        except grpc.RpcError as exc:
            error = rpc_error_from(exc)
            self._observe(path, code=error.code, start=start, claims=claims, response=None, error=str(error))
            raise error from None
        result = decode(self.service, bytes(raw))
        self._observe(path, code="OK", start=start, claims=claims, response=to_json(result), error=None)
        return result

    def _observe(
        self,
        path: str,
        *,
        code: str,
        start: float,
        claims: Sequence[ClaimRef],
        response: dict[str, Any] | None,
        error: str | None,
    ) -> None:
        duration = time.monotonic() - start
        if self._durations is not None:
            self._durations.observe(duration, self._driver_name, path, code)
        self._record_ready(
            "rpc",
            {
                "side": "kubelet",
                "driver": self._driver_name,
                "endpoint": self._endpoint,
                "method": path,
                "request": conversion.claims_json(claims),
                "response": response,
                "code": code,
                "error": error,
                "duration": duration,
            },
        )


def close_when_idle(channel: grpc.Channel, limit: float = 2.0) -> None:
    """Close ``channel`` after grpcio's connectivity poller (private state) has stopped."""
    state = getattr(channel, "_connectivity_state", None)
    deadline = time.monotonic() + limit
    while getattr(state, "polling", False) and time.monotonic() < deadline:
        time.sleep(0.01)
    channel.close()
