"""The kubelet side of the plugin registration handshake on one registration socket.

Mirrors ``pluginmanager/operationexecutor/operation_generator.go``
``GenerateRegisterPluginFunc``: dial the socket (10 s), ``GetInfo`` (1 s), look up the
handler for ``PluginInfo.type``, default the endpoint to the socket path, validate,
add to the actual state, register, then ``NotifyRegistrationStatus`` (5 s). All
timeouts are nominal and scaled by the clock; error texts are upstream's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import grpc

from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim.errors import DrasimError, RpcError
from drasim.interfaces import Clock, NullRecorder, Recorder
from drasim.plugins.client import channel_options, close_when_idle, real_deadline, rpc_error_from

DRA_PLUGIN_TYPE = "DRAPlugin"
DIAL_TIMEOUT = 10.0
GET_INFO_TIMEOUT = 1.0
NOTIFY_TIMEOUT = 5.0
MIN_REGISTRATION_DEADLINE = 1.0
"""The shortest real deadline of a registration call (dial, GetInfo, NotifyRegistrationStatus).

Their nominal timeouts are short already (GetInfo 1 s), so scaled they are tens of milliseconds,
and a plugin answering on a busy machine (parallel tests on two CPUs) missed even a 0.25 s floor
now and then. Registration runs at real speed in every scenario, so a real second costs nothing;
a scenario that hangs a registration call waits that second for its timeout."""


def registration_deadline(clock: Clock, nominal_seconds: float) -> float:
    """A registration call's deadline in real seconds: :func:`real_deadline` with the floor
    :data:`MIN_REGISTRATION_DEADLINE`."""
    return real_deadline(clock, nominal_seconds, MIN_REGISTRATION_DEADLINE)


_GET_INFO = "/pluginregistration.Registration/GetInfo"
_NOTIFY = "/pluginregistration.Registration/NotifyRegistrationStatus"


_DIAL_FAILED = "RegisterPlugin error -- dial failed at socket "


def is_timeout(error: str) -> bool:
    """Whether a registration error is a call (dial, GetInfo, notify) that ran out of time.

    The reconciler retries every failed attempt; one that merely ran out of time is what a
    loaded machine produces, so harness waits treat it as not final.
    """
    return error.startswith("RegisterPlugin error -- ") and error.endswith("context deadline exceeded")


class RegistrationFailedError(DrasimError):
    """One registration attempt failed; the reconciler retries it with backoff."""


class _NotifyError(Exception):
    """NotifyRegistrationStatus itself failed."""


class PluginHandler(Protocol):
    """What a plugin type's handler offers (upstream ``cache.PluginHandler``)."""

    def validate_plugin(self, name: str, endpoint: str, versions: Sequence[str]) -> None:
        """Raise if the plugin cannot be used."""
        ...

    def register_plugin(
        self, name: str, endpoint: str, versions: Sequence[str], call_timeout: float | None = None
    ) -> object:
        """Start using the plugin; raise on error."""
        ...

    def deregister_plugin(self, name: str, endpoint: str) -> None:
        """Stop using the plugin (no-op if unknown)."""
        ...


@dataclass(frozen=True)
class PluginInfo:
    """A ``GetInfo`` answer, with the endpoint already defaulted to the socket path."""

    type: str
    name: str
    endpoint: str
    supported_versions: tuple[str, ...]


#: Called before ``register_plugin`` so that a removal during registration becomes a deregistration.
AddToActualState = Callable[[PluginInfo, PluginHandler], None]


class _Session:
    """One dialled registration channel with upstream's per-call timeouts."""

    def __init__(self, socket_path: str, clock: Clock, recorder: Recorder | None = None) -> None:
        self.socket_path = socket_path
        self.clock = clock
        self.recorder = recorder if recorder is not None else NullRecorder()
        self.driver: str | None = None
        self.channel = grpc.insecure_channel("unix:" + socket_path, options=channel_options(clock))

    def dial(self) -> None:
        ready = grpc.channel_ready_future(self.channel)
        try:
            ready.result(timeout=registration_deadline(self.clock, DIAL_TIMEOUT))
        except grpc.FutureTimeoutError:
            ready.cancel()
            path = self.socket_path
            msg = f"{_DIAL_FAILED}{path}, err: failed to dial socket {path}, err: context deadline exceeded"
            raise RegistrationFailedError(msg) from None

    def get_info(self) -> PluginInfo:
        call = self.channel.unary_unary(
            _GET_INFO,
            request_serializer=reg_pb.InfoRequest.SerializeToString,
            response_deserializer=reg_pb.PluginInfo.FromString,
        )
        start = time.monotonic()
        try:
            info = call(reg_pb.InfoRequest(), timeout=registration_deadline(self.clock, GET_INFO_TIMEOUT))
        except grpc.RpcError as exc:
            error = rpc_error_from(exc)
            self._journal("GetInfo", {}, None, error, start)
            msg = (
                "RegisterPlugin error -- failed to get plugin info using RPC GetInfo "
                f"at socket {self.socket_path}, err: {error}"
            )
            raise RegistrationFailedError(msg) from None
        self.driver = info.name
        response = {
            "type": info.type,
            "name": info.name,
            "endpoint": info.endpoint,
            "supported_versions": list(info.supported_versions),
        }
        self._journal("GetInfo", {}, response, None, start)
        return PluginInfo(
            type=info.type,
            name=info.name,
            endpoint=info.endpoint or self.socket_path,
            supported_versions=tuple(info.supported_versions),
        )

    def notify(self, registered: bool, error: str) -> None:
        """Send the status; raise :class:`_NotifyError` (upstream ``"%s: %w"``) if the RPC fails."""
        call = self.channel.unary_unary(
            _NOTIFY,
            request_serializer=reg_pb.RegistrationStatus.SerializeToString,
            response_deserializer=reg_pb.RegistrationStatusResponse.FromString,
        )
        status = reg_pb.RegistrationStatus(plugin_registered=registered, error=error)
        request = {"plugin_registered": registered, "error": error}
        start = time.monotonic()
        try:
            call(status, timeout=registration_deadline(self.clock, NOTIFY_TIMEOUT))
        except grpc.RpcError as exc:
            failure = rpc_error_from(exc)
            self._journal("NotifyRegistrationStatus", request, None, failure, start)
            raise _NotifyError(f"{error}: {failure}") from None
        self._journal("NotifyRegistrationStatus", request, {}, None, start)

    def _journal(
        self, method: str, request: dict[str, object], response: object, error: RpcError | None, start: float
    ) -> None:
        """Record a registration RPC as the kubelet saw it (``rpc`` event, ``side: kubelet``)."""
        self.recorder.record(
            "rpc",
            side="kubelet",
            driver=self.driver,
            endpoint=self.socket_path,
            method=f"/pluginregistration.Registration/{method}",
            request=request,
            response=response,
            code="OK" if error is None else error.code,
            error=None if error is None else str(error),
            duration=time.monotonic() - start,
        )

    def reject(self, error: str, *, on_notify_failure: str | None = None) -> RegistrationFailedError:
        """Notify ``(false, error)``; the error to raise afterwards (upstream ``notifyPlugin`` callers)."""
        try:
            self.notify(False, error)
        except _NotifyError as exc:
            if on_notify_failure is None:
                return RegistrationFailedError(str(exc))
            return RegistrationFailedError(f"{on_notify_failure}{exc}")
        return RegistrationFailedError(error)

    def close(self) -> None:
        threading.Thread(
            target=close_when_idle, args=(self.channel,), name="close-channel", daemon=True
        ).start()


def register_socket(
    socket_path: str,
    handlers: Mapping[str, PluginHandler],
    *,
    clock: Clock,
    add_to_actual_state: AddToActualState,
    recorder: Recorder | None = None,
    call_timeout: float | None = None,
) -> PluginInfo:
    """Run one registration attempt; raise :class:`RegistrationFailedError` with upstream wording."""
    recorder = recorder if recorder is not None else NullRecorder()
    session = _Session(socket_path, clock, recorder)
    info: PluginInfo | None = None
    try:
        session.dial()
        info = session.get_info()
        service = _register(session, handlers, info, add_to_actual_state, call_timeout)
    except RegistrationFailedError as exc:
        _record(recorder, socket_path, info, outcome="failed", error=str(exc))
        raise
    finally:
        session.close()
    _record(recorder, socket_path, info, service=service, outcome="registered")
    return info


def _register(
    session: _Session,
    handlers: Mapping[str, PluginHandler],
    info: PluginInfo,
    add_to_actual_state: AddToActualState,
    call_timeout: float | None,
) -> str | None:
    path = session.socket_path
    send_failed = f"RegisterPlugin error -- failed to send error at socket {path}, err: "
    handler = handlers.get(info.type)
    if handler is None:
        msg = f"RegisterPlugin error -- no handler registered for plugin type: {info.type} at socket {path}"
        failure = session.reject(msg, on_notify_failure=send_failed)
        raise failure
    try:
        handler.validate_plugin(info.name, info.endpoint, info.supported_versions)
    except Exception as exc:  # the handler's error text goes to the plugin
        failure = session.reject(
            f"RegisterPlugin error -- plugin validation failed with err: {exc}", on_notify_failure=send_failed
        )
        if str(failure).startswith(send_failed):
            raise failure from None
        raise RegistrationFailedError(
            "RegisterPlugin error -- pluginHandler.ValidatePluginFunc failed"
        ) from None
    add_to_actual_state(info, handler)
    try:
        client = handler.register_plugin(info.name, info.endpoint, info.supported_versions, call_timeout)
    except Exception as exc:  # the handler's error text goes to the plugin
        raise session.reject(f"RegisterPlugin error -- plugin registration failed with err: {exc}") from None
    try:
        session.notify(True, "")
    except _NotifyError as exc:
        msg = f"RegisterPlugin error -- failed to send registration status at socket {path}, err: {exc}"
        raise RegistrationFailedError(msg) from None
    service = getattr(client, "service", None)
    return service if isinstance(service, str) else None


def _record(
    recorder: Recorder,
    socket_path: str,
    info: PluginInfo | None,
    *,
    outcome: str,
    service: str | None = None,
    error: str | None = None,
) -> None:
    recorder.record(
        "registration",
        driver=info.name if info else None,
        endpoint=info.endpoint if info else None,
        socket=socket_path,
        service=service,
        outcome=outcome,
        error=error,
        supported_versions=list(info.supported_versions) if info else None,
    )
