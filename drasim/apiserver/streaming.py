"""WATCH over HTTP: chunked transfer, one JSON event per line, watch-list and dropped watches."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drasim.apiserver.calls import ApiCall, guarded
from drasim.apiserver.faults import watch_drop_after
from drasim.apiserver.routes import Route
from drasim.apiserver.status import StatusError, bad_request, status_body
from drasim.apiserver.watch import ERROR, Watch, WatchEvent
from drasim.faults import ApiFault

if TYPE_CHECKING:
    from drasim.apiserver.handler import ApiRequestHandler

DEFAULT_TIMEOUT = 1800.0


@dataclass(frozen=True)
class WatchOptions:
    """The query parameters of a watch request."""

    resource_version: str | None
    label_selector: str
    field_selector: str
    send_initial_events: bool | None
    allow_bookmarks: bool
    timeout: float


def _flag(query: dict[str, str], key: str) -> bool | None:
    value = query.get(key)
    if value is None:
        return None
    if value in ("true", "1", ""):
        return True
    if value in ("false", "0"):
        return False
    raise bad_request(f"{key}: {value!r} is not a boolean")


def watch_options(route: Route, query: dict[str, str]) -> WatchOptions:
    """Validate the watch query like upstream's ValidateListOptions (422 for bad combinations)."""
    del route
    send_initial = _flag(query, "sendInitialEvents")
    bookmarks = bool(_flag(query, "allowWatchBookmarks"))
    if send_initial is not None:
        if query.get("resourceVersionMatch") != "NotOlderThan":
            raise _invalid(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        if send_initial and not bookmarks:
            raise _invalid(
                "allowWatchBookmarks", "sendInitialEvents requires setting allowWatchBookmarks to true"
            )
    raw_timeout = query.get("timeoutSeconds")
    try:
        timeout = float(raw_timeout) if raw_timeout else DEFAULT_TIMEOUT
    except ValueError:
        raise bad_request(f"timeoutSeconds: {raw_timeout!r} is not a number") from None
    return WatchOptions(
        resource_version=query.get("resourceVersion"),
        label_selector=query.get("labelSelector", ""),
        field_selector=query.get("fieldSelector", ""),
        send_initial_events=send_initial,
        allow_bookmarks=bookmarks,
        timeout=min(timeout, DEFAULT_TIMEOUT) if timeout > 0 else DEFAULT_TIMEOUT,
    )


def _invalid(field: str, problem: str) -> StatusError:
    return StatusError(
        422,
        "Invalid",
        f'ListOptions.meta.k8s.io "" is invalid: {field}: Forbidden: {problem}',
        details={
            "kind": "ListOptions",
            "group": "meta.k8s.io",
            "causes": [{"field": field, "message": problem}],
        },
    )


def stream_watch(handler: ApiRequestHandler, route: Route, options: WatchOptions, call: ApiCall) -> None:
    """Open the watch (faults, journal) and stream it until it ends, times out or the client leaves.

    A too-old resourceVersion is answered as upstream's watch cache does: status
    200 and a single ERROR event holding a 410 Expired Status.
    """
    server = handler.server
    store = server.store

    def action(fault: ApiFault | None) -> Watch:
        drop = watch_drop_after(fault)
        return store.watch(
            route.rtype,
            route.version,
            route.namespace,
            resource_version=options.resource_version,
            label_selector=options.label_selector,
            field_selector=options.field_selector,
            send_initial_events=options.send_initial_events,
            allow_bookmarks=options.allow_bookmarks,
            drop_after=drop,
        )

    try:
        watch = guarded(store, call, action)
    except StatusError as err:
        if err.code != 410:
            raise
        _start_stream(handler)
        _write_chunk(handler, WatchEvent(ERROR, status_body(err)))
        _end_stream(handler)
        return
    server.track(watch)
    try:
        _start_stream(handler)
        _pump(handler, watch, options.timeout)
        _end_stream(handler)
    except (BrokenPipeError, ConnectionResetError, TimeoutError):
        handler.close_connection = True  # gone, or stopped reading for the idle timeout
    finally:
        watch.stop()
        server.untrack(watch)
    if watch.dropped:
        handler.close_connection = True


def _pump(handler: ApiRequestHandler, watch: Watch, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        event = watch.next(timeout=remaining)
        if event is None:
            if watch.stopped:
                return
            continue
        _write_chunk(handler, event)


def _start_stream(handler: ApiRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.send_header("Cache-Control", "no-cache, private")
    handler.end_headers()
    handler.wfile.flush()


def _write_chunk(handler: ApiRequestHandler, event: WatchEvent) -> None:
    data = json.dumps(event.to_dict(), separators=(",", ":")).encode() + b"\n"
    handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
    handler.wfile.flush()


def _end_stream(handler: ApiRequestHandler) -> None:
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()
