"""The gRPC faces of a fake driver: registration, DRAPlugin v1/v1beta1, DRAResourceHealth.

Servicers only convert protobuf messages to drasim values and back, pick the
scripted faults for each call and record it; the behaviour lives in
:mod:`fake_plugins.core` and in the runtime that owns them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, NoReturn, Protocol, TypeVar

import grpc
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim.apiversions import DRA_APIS
from drasim.faults import PluginFault
from drasim.values import ClaimRef, PrepareResult, UnprepareResult
from fake_plugins.config import FakeDriverConfig
from fake_plugins.core import CallEffects, CallError, DriverCore
from fake_plugins.health import DeviceHealthState, HealthBoard
from fake_plugins.journal import Journal

M = TypeVar("M", bound=Message)

REGISTRATION = "/pluginregistration.Registration"
#: gRPC service path of each DRA API's generated messages module (from drasim.apiversions).
DRA_PATHS = {api.messages: api.path for api in DRA_APIS}
#: The messages modules whose ``Device`` has ``share_id``.
_SHARE_ID = frozenset(api.messages for api in DRA_APIS if api.share_id)


class CrashError(Exception):
    """Raised by call effects when a fault says the driver dies mid-call."""


class Runtime(Protocol):
    """What the servicers need from the running driver."""

    config: FakeDriverConfig
    core: DriverCore
    journal: Journal
    board: HealthBoard
    effects: CallEffects

    def select_faults(self, rpc: str, claims: Sequence[ClaimRef] = ()) -> list[PluginFault]:
        """The faults that fire on this call."""
        ...

    def on_registration_status(self, registered: bool, error: str) -> None:
        """Remember what the kubelet said."""
        ...

    def crash(self) -> None:
        """Die (process) or abort serving without cleanup (in-process); may return in-process."""
        ...

    @property
    def stopping(self) -> bool:
        """True once the driver is stopping."""
        ...


def _json(message: Message) -> dict[str, Any]:
    return MessageToDict(message)


def caller(context: grpc.ServicerContext) -> str:
    """The caller's gRPC library, from the first word of its user agent (``grpc-go``, ``grpc-python``)."""
    try:
        metadata = context.invocation_metadata() or ()
    except Exception:  # a test double without metadata
        return ""
    for key, value in metadata:
        if key == "user-agent":
            text = value.decode() if isinstance(value, bytes) else str(value)
            return text.split("/", 1)[0].split(" ", 1)[0]
    return ""


def serve_call(
    rt: Runtime,
    context: grpc.ServicerContext,
    *,
    method: str,
    request: Message,
    claims: Sequence[ClaimRef] = (),
    work: Callable[[list[PluginFault]], M],
) -> M:
    """Run one unary call: pick faults, do the work, record it, map failures to statuses."""
    start, t0 = time.time(), time.monotonic()
    client = caller(context)
    rpc = method.rsplit("/", 1)[-1]
    faults = rt.select_faults(rpc, claims)

    def record(response: dict[str, Any] | None, code: str, details: str = "") -> None:
        rt.journal.record(
            method,
            _json(request),
            response,
            code=code,
            details=details,
            start=start,
            duration=time.monotonic() - t0,
            client=client,
        )

    try:
        response = work(faults)
    except CallError as err:
        record(None, err.code, err.details)
        _abort(context, err.code, err.details)
    except CrashError:
        record(None, "CRASHED", "the fake driver crashed mid-call")
        rt.crash()
        _abort(context, "UNAVAILABLE", "fake driver crashed")
    except Exception as err:  # a defect or an I/O error: still journaled, answered as gRPC Unknown
        record(None, "UNKNOWN", f"{type(err).__name__}: {err}")
        _abort(context, "UNKNOWN", f"fake driver: {type(err).__name__}: {err}")
    record(_json(response), "OK")
    return response


def _abort(context: grpc.ServicerContext, code: str, details: str) -> NoReturn:
    context.abort(grpc.StatusCode[code], details)
    raise AssertionError("unreachable")  # pragma: no cover - abort always raises


class RegistrationServicer:
    """``pluginregistration.Registration`` (helper ``registrationserver.go``)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def GetInfo(self, request: reg_pb.InfoRequest, context: grpc.ServicerContext) -> reg_pb.PluginInfo:  # noqa: N802
        """Type DRAPlugin, the driver name, the DRA socket as endpoint, the advertised services."""

        def work(faults: list[PluginFault]) -> reg_pb.PluginInfo:
            self.rt.effects.before(faults, context)
            cfg = self.rt.config
            return reg_pb.PluginInfo(
                type="DRAPlugin",
                name=cfg.driver_name,
                endpoint=str(cfg.plugin_path),
                supported_versions=cfg.supported_versions,
            )

        return serve_call(
            self.rt, context, method=f"{REGISTRATION}/GetInfo", request=request, claims=(), work=work
        )

    def NotifyRegistrationStatus(  # noqa: N802
        self, request: reg_pb.RegistrationStatus, context: grpc.ServicerContext
    ) -> reg_pb.RegistrationStatusResponse:
        """Store the status; a failed registration is answered with an error, as the helper does."""

        def work(faults: list[PluginFault]) -> reg_pb.RegistrationStatusResponse:
            self.rt.on_registration_status(request.plugin_registered, request.error)
            self.rt.effects.before(faults, context)
            if not request.plugin_registered:
                raise CallError("UNKNOWN", f"failed registration process: {request.error}")
            return reg_pb.RegistrationStatusResponse()

        return serve_call(
            self.rt,
            context,
            method=f"{REGISTRATION}/NotifyRegistrationStatus",
            request=request,
            claims=(),
            work=work,
        )


class DRAPluginServicer:
    """``DRAPlugin`` of one API version (v1, v1beta1 or v1alpha4's ``Node``; only v1 has share_id)."""

    def __init__(self, rt: Runtime, pb: ModuleType) -> None:
        self.rt = rt
        self.pb = pb
        self.service = DRA_PATHS[pb]

    def NodePrepareResources(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """Prepare the claims through the core and convert the reply."""
        claims = _claims(request)

        def work(faults: list[PluginFault]) -> Any:
            results = self.rt.core.prepare(claims, faults, context)
            return self.pb.NodePrepareResourcesResponse(
                claims={uid: self._prepare_entry(r) for uid, r in results.items()}
            )

        return serve_call(
            self.rt,
            context,
            method=f"{self.service}/NodePrepareResources",
            request=request,
            claims=claims,
            work=work,
        )

    def NodeUnprepareResources(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """Unprepare the claims through the core and convert the reply."""
        claims = _claims(request)

        def work(faults: list[PluginFault]) -> Any:
            results: dict[str, UnprepareResult] = self.rt.core.unprepare(claims, faults, context)
            return self.pb.NodeUnprepareResourcesResponse(
                claims={
                    uid: self.pb.NodeUnprepareResourceResponse(error=r.error) for uid, r in results.items()
                }
            )

        return serve_call(
            self.rt,
            context,
            method=f"{self.service}/NodeUnprepareResources",
            request=request,
            claims=claims,
            work=work,
        )

    def _prepare_entry(self, result: PrepareResult) -> Any:
        devices = []
        for d in result.devices:
            fields: dict[str, Any] = {
                "request_names": list(d.request_names or ()),
                "pool_name": d.pool_name,
                "device_name": d.device_name,
                "cdi_device_ids": list(d.cdi_device_ids or ()),
            }
            if self.pb in _SHARE_ID and d.share_id is not None:
                fields["share_id"] = d.share_id
            devices.append(self.pb.Device(**fields))
        return self.pb.NodePrepareResourceResponse(devices=devices, error=result.error)


def _claims(request: Any) -> list[ClaimRef]:
    return [ClaimRef(namespace=c.namespace, uid=c.uid, name=c.name) for c in request.claims]


class HealthServicer:
    """``DRAResourceHealth`` (v1alpha1 or v1): the full device list at start and after every change."""

    def __init__(self, rt: Runtime, pb: ModuleType, package: str) -> None:
        self.rt = rt
        self.pb = pb
        self.method = f"/{package}.DRAResourceHealth/NodeWatchResources"

    def NodeWatchResources(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:  # noqa: N802
        """Stream until the client leaves or the driver stops; faults apply when the stream opens."""
        board = self.rt.board
        context.add_callback(board.wake)
        version = -1

        def opening(faults: list[PluginFault]) -> Any:
            nonlocal version
            self.rt.effects.before(faults, context)
            version, devices = board.snapshot()
            return self._message(devices)

        yield serve_call(self.rt, context, method=self.method, request=request, claims=(), work=opening)
        while context.is_active() and not board.closed and not self.rt.stopping:
            if not board.wait_newer(version, timeout=1.0):
                continue
            version, devices = board.snapshot()
            message = self._message(devices)
            self.rt.journal.record(
                self.method,
                {},
                _json(message),
                code="OK",
                start=time.time(),
                duration=0.0,
                stream=True,
                client=caller(context),
            )
            yield message

    def _message(self, devices: Sequence[DeviceHealthState]) -> Any:
        return self.pb.NodeWatchResourcesResponse(
            devices=[
                self.pb.DeviceHealth(
                    device=self.pb.DeviceIdentifier(pool_name=d.pool, device_name=d.device),
                    health=self.pb.HealthStatus.Value(d.health),
                    last_updated_time=d.last_updated,
                    health_check_timeout_seconds=d.timeout_seconds,
                    message=d.message,
                )
                for d in devices
            ]
        )
