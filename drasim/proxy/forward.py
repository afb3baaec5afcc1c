"""The proxy's grpcio path for one socket: a gRPC server on the proxy's path that forwards
every call to the driver's socket as bytes, journals it, and applies the proxy's fault rules
on the way. Registration sockets always take it; a DRA socket takes it when fault rules are set
(otherwise it is spliced: :mod:`drasim.proxy.splice`).

Unary calls are forwarded with the caller's remaining deadline and cancelled when the
caller gives up (except calls a ``block`` rule held: those are forwarded whatever the
caller did, as the fake plugin does the work of a released call). ``NodeWatchResources``
streams are forwarded message by message. Only prepare/unprepare requests and replies,
``PluginInfo`` and health messages are decoded (they are journaled or rewritten); every
other method passes through untouched.

A DRA socket mirrors the driver's connection: when the proxy's channel to the driver loses
a ready connection (the driver died or stopped serving), the proxy stops serving that
socket, so the kubelet's connection ends too; it serves again once the driver does.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import grpc

from drasim.faults import CLAIM_RPCS, PluginFault
from drasim.plugins.client import go_code_name
from drasim.proxy import wire
from drasim.values import ClaimRef

if TYPE_CHECKING:
    from drasim.proxy.proxy import Proxy

GET_INFO_WAIT = 5.0
"""Real seconds at most a forwarded ``GetInfo`` waits for the driver's registration socket to
take the call (less when the kubelet's deadline is nearer: upstream's kubelet gives it 1 s)."""

DETACHED_TIMEOUT = 60.0
"""Real seconds a call released from a ``block`` rule may take at the driver (its caller may be gone)."""

MAX_WORKERS = 32
"""Calls one proxied socket serves at once (held calls each keep one)."""

_CHANNEL_OPTIONS = [
    ("grpc.use_local_subchannel_pool", 1),
    # Notice a restarted driver quickly: reconnect after 20 ms, never wait more than 0.5 s.
    ("grpc.initial_reconnect_backoff_ms", 20),
    ("grpc.min_reconnect_backoff_ms", 20),
    ("grpc.max_reconnect_backoff_ms", 500),
]


class _Abort(Exception):  # noqa: N818 - control flow: answer the caller with this status
    def __init__(self, code: str, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class Forwarder:
    """A server on ``listen`` forwarding to ``upstream`` (both unix socket paths)."""

    def __init__(self, proxy: Proxy, listen: Path, upstream: Path, *, mirror_connection: bool) -> None:
        self.proxy = proxy
        self.listen = listen
        self.upstream = upstream
        self.mirror_connection = mirror_connection
        self._lock = threading.Lock()
        self._server: grpc.Server | None = None
        self._closed = False
        self._was_ready = False
        self._paused = False  # stopped because the driver's connection ended
        self.refusing = False
        """Set by :meth:`Proxy.refuse`: the socket stays closed, whatever the driver does."""
        self._callables: dict[str, Any] = {}
        self._state: grpc.ChannelConnectivity | None = None
        self._watchers: dict[int, Any] = {}
        self.channel = self._new_channel()

    def _new_channel(self) -> grpc.Channel:
        channel = grpc.insecure_channel(f"unix:{self.upstream}", options=_CHANNEL_OPTIONS)
        self._watchers[id(channel)] = watcher = partial(self._on_state, channel)
        channel.subscribe(watcher, try_to_connect=self.mirror_connection)
        return channel

    def _unwatch(self, channel: grpc.Channel) -> None:
        watcher = self._watchers.pop(id(channel), None)
        if watcher is not None:
            with contextlib.suppress(ValueError):
                channel.unsubscribe(watcher)

    # ------------------------------------------------------------------ lifecycle
    @property
    def serving(self) -> bool:
        """Whether the proxy's socket accepts calls."""
        with self._lock:
            return self._server is not None

    def start(self) -> None:
        """Serve on ``listen`` (no-op when serving, or while refusing)."""
        with self._lock:
            self._paused = False
            if self._server is not None or self._closed or self.refusing:
                return
            self._server = self._new_server()

    def _new_server(self) -> grpc.Server:
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="drasim-proxy"),
            handlers=[_Handler(self)],
            maximum_concurrent_rpcs=None,
        )
        self.listen.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.listen.unlink()
        server.add_insecure_port(f"unix:{self.listen}")
        server.start()
        return server

    def connect(self, timeout: float) -> bool:
        """Dial the driver now (not after the reconnect backoff); wait up to ``timeout`` for it.

        A channel that is not connected is replaced by a new one: a driver that registers
        again has just created its socket, and the old channel may be waiting out a backoff.
        """
        with self._lock:
            if self._closed:
                return False
            old = None
            if self._state != grpc.ChannelConnectivity.READY:
                old, self.channel = self.channel, self._new_channel()
                self._callables = {}
        if old is not None:
            self._unwatch(old)
            threading.Thread(
                target=_close_channel, args=(old,), name="drasim-proxy-close", daemon=True
            ).start()
        self._kick()
        try:
            grpc.channel_ready_future(self.channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            return False
        return True

    def _kick(self) -> None:
        check = getattr(getattr(self.channel, "_channel", None), "check_connectivity_state", None)
        if callable(check):
            with contextlib.suppress(ValueError):
                check(True)

    def pause(self) -> None:
        """Stop serving (the kubelet's connection ends); :meth:`start` serves again."""
        with self._lock:
            server, self._server = self._server, None
            self._paused = server is not None or self._paused
        if server is not None:
            server.stop(0)

    def close(self, *, remove: bool = True) -> None:
        """Stop serving for good; with ``remove`` the proxy's socket file goes too."""
        with self._lock:
            self._closed = True
            server, self._server = self._server, None
        self._unwatch(self.channel)
        if server is not None:
            server.stop(0).wait(5)
        if remove:
            with contextlib.suppress(FileNotFoundError):
                self.listen.unlink()
        threading.Thread(
            target=_close_channel, args=(self.channel,), name="drasim-proxy-close", daemon=True
        ).start()

    def _on_state(self, channel: grpc.Channel, state: grpc.ChannelConnectivity) -> None:
        with self._lock:
            if channel is not self.channel:
                return
            self._state = state
        if not self.mirror_connection:
            return
        ready = state == grpc.ChannelConnectivity.READY
        with self._lock:
            if self._closed:
                return
            was_ready, self._was_ready = self._was_ready, ready
            resume = ready and self._paused and self._server is None
        if was_ready and not ready:
            self.pause()
        elif resume:
            self.start()
        if state in (grpc.ChannelConnectivity.IDLE, grpc.ChannelConnectivity.TRANSIENT_FAILURE):
            self._kick()

    # ------------------------------------------------------------------ calls
    def _callable(self, path: str, stream: bool) -> Any:
        found = self._callables.get(path)
        if found is None:
            make = self.channel.unary_stream if stream else self.channel.unary_unary
            found = self._callables[path] = make(path, request_serializer=None, response_deserializer=None)
        return found

    def unary(self, path: str, request: bytes, context: grpc.ServicerContext) -> bytes:
        """Forward one unary call (rules applied, journaled)."""
        start = time.monotonic()
        _, rpc = wire.split_method(path)
        service = wire.dra_service(path)
        claims: tuple[ClaimRef, ...] = ()
        if service is not None and rpc in CLAIM_RPCS:
            claims = wire.request_claims(service, request)
        rule = self.proxy.rules.select(rpc, claims)
        note = partial(self._record_unary, path, rpc, service, claims, request, start)
        try:
            if rule is not None:
                self._before(rule, context)
            upstream = self.proxy.upstream_path(path)
            reply = self._forward(upstream, request, context, detached=rule is not None and rule.block)
            if rule is not None and rule.crash == "after":
                self.proxy.crash_driver(f"after forwarding {rpc}")
                raise _Abort("UNAVAILABLE", "drasim proxy: the driver was killed after it answered")
            if rpc == "GetInfo":
                reply = self.proxy.on_get_info(self, reply)
            elif rule is not None and service is not None and rpc in CLAIM_RPCS and wire.shapes_reply(rule):
                reply = wire.shape_reply(service, rpc, reply, claims, rule)
        except _Abort as stop:
            note(None, go_code_name(grpc.StatusCode[stop.code]), stop.details)
            _abort(context, stop.code, stop.details)
        note(reply, "OK", None)
        return reply

    def _before(self, rule: PluginFault, context: grpc.ServicerContext) -> None:
        """The rule's effects before forwarding: delay, hold, kill, a status without forwarding."""
        rules = self.proxy.rules
        if rule.delay:
            rules.wait(rule.delay)
        if rule.hang:
            context.add_callback(rules.wake)
            if rules.hold(lambda: not context.is_active()):
                raise _Abort("CANCELLED", "drasim proxy: the caller cancelled the held call")
        if rule.block:
            rules.hold()
        if rules.stopped:
            raise _Abort("UNAVAILABLE", "drasim proxy is stopping")
        if rule.crash == "before":
            self.proxy.crash_driver(f"before forwarding {rule.rpc}")
            raise _Abort("UNAVAILABLE", "drasim proxy: the driver was killed before the call reached it")
        if rule.code and rule.code != "OK":
            raise _Abort(rule.code, rule.message or f"drasim proxy: scripted {rule.code} for {rule.rpc}")

    def _forward(self, path: str, request: bytes, context: grpc.ServicerContext, *, detached: bool) -> bytes:
        # The caller's deadline goes along; a blocking call costs less than a cancellable future,
        # and a call the caller gave up on ends at that same deadline at the driver.
        call = self._callable(path, stream=False)
        timeout = DETACHED_TIMEOUT if detached else context.time_remaining()
        # A restarted driver creates its registration socket before it serves on it: GetInfo
        # waits for the driver (within the kubelet's deadline) instead of failing at once.
        ready = path == wire.GET_INFO
        if ready:
            timeout = min(timeout, GET_INFO_WAIT) if timeout is not None else GET_INFO_WAIT
        try:
            return call(request, timeout=timeout, wait_for_ready=ready)  # type: ignore[no-any-return]
        except grpc.RpcError as err:
            code = err.code() if callable(getattr(err, "code", None)) else grpc.StatusCode.UNKNOWN
            details = err.details() if callable(getattr(err, "details", None)) else str(err)
            raise _Abort(code.name, str(details or "")) from None

    def _record_unary(  # noqa: PLR0917 - bound with partial() in unary(), then given the outcome
        self,
        path: str,
        rpc: str,
        service: str | None,
        claims: tuple[ClaimRef, ...],
        request: bytes,
        start: float,
        reply: bytes | None,
        code: str,
        error: str | None,
    ) -> None:
        claimed = claims if service is not None and rpc in CLAIM_RPCS else None
        request_json, response = wire.call_json(path, request, reply, claimed)
        self.proxy.record(
            self,
            path,
            request=request_json,
            response=response,
            code=code,
            error=error,
            duration=time.monotonic() - start,
        )

    def stream(self, path: str, request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
        """Forward one server-streaming call (``NodeWatchResources``); rules apply when it opens."""
        start = time.monotonic()
        api = wire.health_api(path)
        rule = self.proxy.rules.select(wire.split_method(path)[1])
        opened = False

        def note(reply: bytes | None, code: str, error: str | None, *, stream: bool = False) -> None:
            response = None if reply is None or api is None else wire.health_json(api, reply)
            extra = {"stream": True} if stream else {}
            self.proxy.record(
                self,
                path,
                request={},
                response=response,
                code=code,
                error=error,
                duration=time.monotonic() - start,
                **extra,
            )

        try:
            if rule is not None:
                self._before(rule, context)
            replies = self._callable(path, stream=True)(request)
            context.add_callback(replies.cancel)
            for reply in replies:
                note(reply, "OK", None, stream=opened)
                opened = True
                yield reply
        except _Abort as stop:
            note(None, go_code_name(grpc.StatusCode[stop.code]), stop.details)
            _abort(context, stop.code, stop.details)
        except grpc.RpcError as err:
            code = err.code() if callable(getattr(err, "code", None)) else grpc.StatusCode.UNKNOWN
            details = str(err.details() if callable(getattr(err, "details", None)) else err)
            if not opened:
                note(None, go_code_name(code), details)
            if context.is_active():
                _abort(context, code.name, details)


def _close_channel(channel: grpc.Channel) -> None:
    from drasim.plugins.client import close_when_idle

    close_when_idle(channel)


def _abort(context: grpc.ServicerContext, code: str, details: str) -> NoReturn:
    context.abort(grpc.StatusCode[code], details)
    raise AssertionError("unreachable")  # context.abort raises


class _Handler(grpc.GenericRpcHandler):  # type: ignore[type-arg]
    """Every method of the socket, as bytes."""

    def __init__(self, forwarder: Forwarder) -> None:
        self.forwarder = forwarder

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        path = str(handler_call_details.method)
        if path.endswith("/" + wire.WATCH):
            return grpc.unary_stream_rpc_method_handler(partial(self.forwarder.stream, path))
        return grpc.unary_unary_rpc_method_handler(partial(self.forwarder.unary, path))
