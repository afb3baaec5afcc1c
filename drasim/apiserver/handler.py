"""The HTTP request handler: Kubernetes REST verbs on the object store, answered in JSON.

Each request becomes one :func:`~drasim.apiserver.calls.guarded` store call (faults,
journal), or a discovery document. Errors are always a ``Status`` object, also the
ones http.server detects itself while parsing a request (bad request line, header
too long, unsupported HTTP version): nothing is ever answered in HTML. Request
bodies are JSON, or Kubernetes protobuf decoded by :mod:`drasim.apiserver.k8spb`;
responses are always JSON, which client-go accepts alongside protobuf.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from drasim.apiserver import listing, routes
from drasim.apiserver.bodies import JSON, PROTOBUF, check_depth, check_kind, decode_protobuf, json_object
from drasim.apiserver.calls import ApiCall, guarded
from drasim.apiserver.faults import decode_fault
from drasim.apiserver.patch import PATCH_CONTENT_TYPES
from drasim.apiserver.status import REASONS, StatusError, bad_request, status_body
from drasim.apiserver.streaming import stream_watch, watch_options
from drasim.errors import ApiError, ConfigError
from drasim.faults import ApiFault

if TYPE_CHECKING:
    from drasim.apiserver.http import ApiHttpServer

log = logging.getLogger(__name__)

_ACCEPTABLE = ("application/json", "application/*", "*/*", "*")
_HEALTH = ("healthz", "livez", "readyz")
# An HTTP method is a token (RFC 9110 section 5.6.2); Go's net/http refuses anything else with a 400.
_METHOD = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


class _HeaderDeadline:
    """The request's ``rfile`` while its request line and headers are read: each line
    may only wait for what is left of one deadline (a slow client cannot hold a thread
    by sending a byte now and then)."""

    def __init__(self, rfile: Any, connection: Any, deadline: float) -> None:
        self._rfile = rfile
        self._connection = connection
        self._deadline = deadline

    def readline(self, limit: int = -1) -> bytes:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the request headers took too long")
        self._connection.settimeout(remaining)
        line: bytes = self._rfile.readline(limit)
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rfile, name)


class ApiRequestHandler(BaseHTTPRequestHandler):
    """One connection of the fake API server (HTTP/1.1, keep-alive)."""

    protocol_version = "HTTP/1.1"
    _body_read = False
    _plain_rfile: Any = None
    authenticated = False
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms delayed-ACK stalls
    server: ApiHttpServer

    def do_GET(self) -> None:
        """GET, LIST, WATCH and discovery."""
        self._dispatch("GET")

    def do_POST(self) -> None:
        """Create."""
        self._dispatch("POST")

    def do_PUT(self) -> None:
        """Update (or update status)."""
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        """Patch (or patch status)."""
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        """Delete or deletecollection."""
        self._dispatch("DELETE")

    def log_message(self, format: str, *args: Any) -> None:
        """Route http.server's access log to logging instead of stderr (the token left out)."""
        message = (format % args).replace(self.server.token, "<token>")
        log.debug("%s %s", self.address_string(), message)

    # ------------------------------------------------------- timeouts
    def handle_one_request(self) -> None:
        """Wait at most the idle timeout for a request, then read its headers under the header deadline."""
        server = self.server
        self.connection.settimeout(server.idle_timeout)
        try:
            if not self.rfile.peek(1):  # type: ignore[attr-defined]  # a BufferedReader
                self.close_connection = True  # the client closed the connection
                return
        except OSError:  # idle too long (TimeoutError) or reset
            self.close_connection = True
            return
        self._plain_rfile = self.rfile
        deadline = time.monotonic() + server.header_timeout
        self.rfile = _HeaderDeadline(self.rfile, self.connection, deadline)  # type: ignore[assignment]
        try:
            super().handle_one_request()
        finally:
            self._end_header_phase()

    def _end_header_phase(self) -> None:
        if self._plain_rfile is not None:
            self.rfile, self._plain_rfile = self._plain_rfile, None
            self.connection.settimeout(self.server.idle_timeout)

    # ------------------------------------------------------- protocol errors
    def parse_request(self) -> bool:
        """http.server's parsing, plus the request-line checks Go's net/http makes.

        A request line without an HTTP version (HTTP/0.9) and a method that is not a
        token are 400 BadRequest; a version below 1.0 is 505 (http.server only refuses
        2.0 and above). A well-formed method this server has no ``do_`` for (BREW, HEAD,
        OPTIONS, ...) is routed like any verb a path does not support, so it gets the
        same 405 MethodNotAllowed (or 404 NotFound) Status instead of http.server's 501.
        Returns whether http.server should go on and dispatch.
        """
        parsed = super().parse_request()
        self._end_header_phase()  # the body and the answer get the idle timeout per read and write
        if not parsed:
            return False
        if len(self.requestline.split()) == 2:
            self.send_error(HTTPStatus.BAD_REQUEST, f"malformed HTTP request {self.requestline!r}")
            return False
        major = self.request_version.partition("/")[2].partition(".")[0]
        if int(major) != 1:  # digits only: http.server checked
            self.send_error(
                HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, f"unsupported HTTP version {self.request_version}"
            )
            return False
        command = self.command or ""
        if not _METHOD.fullmatch(command):
            self.send_error(HTTPStatus.BAD_REQUEST, f"invalid method {command!r}")
            return False
        if not hasattr(self, "do_" + command):
            self._dispatch(command)  # answered here: http.server would send its 501
            return False
        return True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Answer an error http.server detects while parsing a request with a JSON ``Status``.

        http.server calls this for a malformed request line (400), an unsupported HTTP
        version (505), a request line above 64 KiB (414) and a header line too long or
        too many headers (431). The connection is closed afterwards, as http.server
        does. The reason is upstream's for the code, or empty where upstream has none
        (414, 431, 501, 505).
        """
        code = int(code)
        try:
            status = HTTPStatus(code)
            text = message or status.phrase
            if explain is None and message is None:
                explain = status.description
        except ValueError:
            text = message or f"HTTP error {code}"
        if explain:
            text = f"{text}: {explain}"
        self.log_error("code %d, message %s", code, text)
        if not (self.request_version or "").startswith("HTTP/1."):
            # An unparsable request line leaves http.server at HTTP/0.9, which writes a bare body
            # without status line or headers; answer as HTTP/1.1 like Go's net/http does.
            self.request_version = "HTTP/1.1"
        self.close_connection = True
        self.send_json(code, status_body(StatusError(code, REASONS.get(code, ""), text)))

    # ------------------------------------------------------------- plumbing
    def _dispatch(self, method: str) -> None:
        self._body_read = False
        try:
            url = urlsplit(self.path)
            parts = [p for p in url.path.split("/") if p]
            if parts[:1] == [self.server.token]:  # the token as a path prefix (see _authenticated)
                parts = parts[1:]
                self.path = self.path.replace("/" + self.server.token, "", 1) or "/"
                self.authenticated = True
            else:
                self.authenticated = self._bearer_token_matches()
            query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            self._route(method, parts, query)
        except ApiError as err:
            if not self._body_read and self._has_body():
                self.close_connection = True  # the unread body would poison the next request
            self._send_error_reply(err.code, status_body(err), retry_after=err.code == 429)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
        except Exception:
            log.exception("fake API server failed on %s %s", method, self.path)
            self.close_connection = True
            body = status_body(StatusError(500, "InternalError", "internal error in drasim"))
            self._send_error_reply(500, body, retry_after=False)

    def _send_error_reply(self, code: int, body: dict[str, Any], *, retry_after: bool) -> None:
        """Answer an error; a client that has gone away meanwhile only ends the connection."""
        try:
            self.send_json(code, body, retry_after=retry_after)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True

    def _bearer_token_matches(self) -> bool:
        """Whether ``Authorization: Bearer`` holds the server's token (compared in constant time).

        A request may carry the token either there or as the first path segment: client-go
        sends no credentials at all to a plain-HTTP server (it reads a kubeconfig's user only
        for TLS), so the kubeconfig drasim hands out names the server with the token as a
        path prefix, which every Kubernetes client keeps in front of each request path.
        """
        scheme, _, token = (self.headers.get("Authorization") or "").strip().partition(" ")
        expected = self.server.token.encode()
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), expected)

    def _route(self, method: str, parts: list[str], query: dict[str, str]) -> None:
        if not self.authenticated:
            raise StatusError(401, "Unauthorized", "Unauthorized")
        if parts[:1] == ["openapi"]:
            raise ApiError(404, "NotFound", routes.NOT_FOUND)  # no OpenAPI documents: clients skip validation
        self._check_accept()
        if method == "GET" and len(parts) == 1 and parts[0] in _HEALTH:
            self.send_text(200, "ok")
            return
        if parts[:1] == ["drasim"]:
            if self.headers.get("Origin") is not None:
                raise StatusError(
                    403, "Forbidden", "drasim's control endpoints refuse requests made by a browser page"
                )
            self._admin(method, parts[1:])
            return
        if method == "GET":
            doc = routes.discovery(parts, self.server.store.registry, self.server.address)
            if doc is not None:
                self.send_json(200, doc)
                return
        route = routes.parse_resource_path(parts, self.server.store.registry)
        self._resource(method, route, query)

    def _check_accept(self) -> None:
        accept = self.headers.get("Accept", "")
        if not accept:
            return
        types = [item.split(";")[0].strip() for item in accept.split(",")]
        if not any(t in _ACCEPTABLE for t in types):
            raise StatusError(
                406,
                "NotAcceptable",
                f"only the following media types are accepted: {JSON} (asked for {accept})",
            )

    def send_json(self, code: int, body: Any, *, retry_after: bool = False) -> None:
        """Send a JSON answer with Content-Length (headers only for a HEAD request)."""
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", JSON)
        self.send_header("Content-Length", str(len(data)))
        if retry_after:
            self.send_header("Retry-After", "1")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_text(self, code: int, text: str) -> None:
        """Send a plain text answer (health endpoints)."""
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _content_type(self) -> str:
        return (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()

    def _has_body(self) -> bool:
        chunked = "chunked" in (self.headers.get("Transfer-Encoding") or "").lower()
        return chunked or (self.headers.get("Content-Length") or "0").strip() != "0"

    def read_body(self) -> bytes:
        """The request body; 413 (and a closed connection) above the server's size limit."""
        limit = self.server.max_body_bytes
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = self._read_chunked(limit)
            self._body_read = True
            return data
        raw_length = self.headers.get("Content-Length") or "0"
        try:
            length = int(raw_length)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            raise bad_request(f"Content-Length: {raw_length!r} is not a non-negative number")
        if length > limit:
            self.close_connection = True
            raise StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")
        data = self.rfile.read(length) if length else b""
        self._body_read = True
        return data

    def _read_chunked(self, limit: int) -> bytes:
        data = bytearray()
        while True:
            line = self.rfile.readline(1024).split(b";")[0].strip()
            try:
                size = int(line or b"0", 16)
            except ValueError:
                size = -1
            if size < 0:
                self.close_connection = True
                raise bad_request(f"malformed chunk size {line[:20]!r} in a chunked request body")
            if size == 0:
                self.rfile.readline()
                return bytes(data)
            if len(data) + size > limit:
                self.close_connection = True
                raise StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")
            data += self.rfile.read(size)
            self.rfile.readline()

    def _object_body(self, route: routes.Route, kind: str) -> dict[str, Any]:
        body = self.read_body()
        ctype = self._content_type()
        if ctype == PROTOBUF:
            return decode_protobuf(body, group=route.group, version=route.version, kind=kind)
        if ctype not in ("", JSON):
            raise StatusError(
                415, "UnsupportedMediaType", f"the body of the request was in an unknown format: {ctype}"
            )
        return json_object(body)

    # ------------------------------------------------------------- admin
    def _admin(self, method: str, parts: list[str]) -> None:
        store = self.server.store
        if method == "POST" and parts == ["reset"]:
            store.reset()
            self.send_json(200, {"status": "reset"})
        elif method == "POST" and parts == ["faults"]:
            try:
                fault = store.faults.add(decode_fault(json_object(self.read_body())))
            except ConfigError as err:
                raise bad_request(str(err)) from None
            self.send_json(201, {"added": repr(fault)})
        elif method == "DELETE" and parts == ["faults"]:
            store.faults.clear()
            self.send_json(200, {"status": "cleared"})
        else:
            raise ApiError(404, "NotFound", routes.NOT_FOUND)

    # ---------------------------------------------------------- resources
    def _call(self, verb: str, route: routes.Route) -> ApiCall:
        client = self.headers.get("User-Agent") or "unknown"
        return ApiCall(
            verb, route.rtype, route.version, route.namespace, route.name, route.subresource, client
        )

    def _resource(self, method: str, route: routes.Route, query: dict[str, str]) -> None:
        if method != "GET" and "dryRun" in query:
            raise bad_request("dryRun is not supported by the drasim API server")
        if route.rtype.namespaced and not route.namespace:
            if route.name:
                raise ApiError(404, "NotFound", routes.NOT_FOUND)
            if method != "GET":
                raise StatusError(405, "MethodNotAllowed", f"{method} needs a namespace in the path")
        if method == "GET":
            self._get(route, query)
        elif method == "POST" and not route.name:
            self._create(route)
        elif method == "PUT" and route.name:
            self._update(route)
        elif method == "PATCH" and route.name:
            self._patch(route)
        elif method == "DELETE":
            self._delete(route, query)
        else:
            raise StatusError(
                405, "MethodNotAllowed", f"the server does not allow this method on {self.path}"
            )

    def _get(self, route: routes.Route, query: dict[str, str]) -> None:
        store = self.server.store
        if route.watch_path or query.get("watch") in ("true", "1"):
            if route.name:
                query = {**query, "fieldSelector": _with_name(query.get("fieldSelector", ""), route.name)}
            options = watch_options(route, query)
            stream_watch(self, route, options, self._call("watch", route))
            return
        if route.name:
            obj = guarded(
                store,
                self._call("get", route),
                lambda _f: store.get(route.rtype, route.version, route.namespace, route.name),
            )
            self.send_json(200, obj)
            return
        body = guarded(store, self._call("list", route), lambda _f: listing.list_page(store, route, query))
        self.send_json(200, body)

    def _create(self, route: routes.Route) -> None:
        store = self.server.store
        obj = self._object_body(route, route.rtype.kind)
        check_kind(route, obj)
        name = _body_name(obj)
        call = ApiCall(
            "create",
            route.rtype,
            route.version,
            route.namespace,
            name,
            "",
            self._call("create", route).client,
        )
        created = guarded(
            store, call, lambda _f: store.create(route.rtype, route.version, obj, route.namespace)
        )
        self.send_json(201, created)

    def _update(self, route: routes.Route) -> None:
        store = self.server.store
        obj = self._object_body(route, route.rtype.kind)
        check_kind(route, obj)
        body_name = _body_name(obj)
        if body_name != route.name:
            raise bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({route.name})"
            )
        status = route.subresource == "status"
        updated = guarded(
            store,
            self._call("update", route),
            lambda _f: store.update(route.rtype, route.version, obj, route.namespace, status=status),
        )
        self.send_json(200, updated)

    def _patch(self, route: routes.Route) -> None:
        store = self.server.store
        ctype = self._content_type()
        if ctype not in PATCH_CONTENT_TYPES:
            raise StatusError(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format - accepted media types include: "
                f"{', '.join(PATCH_CONTENT_TYPES)}",
            )
        try:
            patch = json.loads(self.read_body() or b"null")
        except (ValueError, RecursionError) as err:
            raise bad_request(f"the patch is not valid JSON: {err}") from None
        check_depth(patch)
        status = route.subresource == "status"
        patched = guarded(
            store,
            self._call("patch", route),
            lambda _f: store.patch(
                route.rtype,
                route.version,
                route.namespace,
                route.name,
                body=patch,
                content_type=ctype,
                status=status,
            ),
        )
        self.send_json(200, patched)

    def _delete(self, route: routes.Route, query: dict[str, str]) -> None:
        store = self.server.store
        if route.subresource:
            raise StatusError(405, "MethodNotAllowed", "the status subresource cannot be deleted")
        options = self._delete_options()
        if not route.name:
            body = guarded(
                store,
                self._call("deletecollection", route),
                lambda _f: listing.delete_collection(store, route, query),
            )
            self.send_json(200, body)
            return
        pre = _preconditions(options)

        def action(_fault: ApiFault | None) -> dict[str, Any]:
            return store.delete(
                route.rtype,
                route.version,
                route.namespace,
                route.name,
                uid=pre.get("uid"),
                resource_version=pre.get("resourceVersion"),
            )

        self.send_json(200, guarded(store, self._call("delete", route), action))

    def _delete_options(self) -> dict[str, Any]:
        body = self.read_body()
        if not body:
            return {}
        if self._content_type() != PROTOBUF:
            return json_object(body)
        try:
            return decode_protobuf(body, group="", version="v1", kind="DeleteOptions")
        except ApiError as err:
            if err.code != 415:
                raise
            log.warning("ignoring protobuf DeleteOptions on %s: %s", self.path, err)
            return {}


def _body_name(obj: dict[str, Any]) -> str:
    """``metadata.name`` of a body, or "" where the body has none (the store checks the shape)."""
    md = obj.get("metadata")
    name = md.get("name") if isinstance(md, dict) else None
    return name if isinstance(name, str) else ""


_DELETE_OPTION_TYPES: dict[str, type | tuple[type, ...]] = {
    "gracePeriodSeconds": int,
    "orphanDependents": bool,
    "propagationPolicy": str,
    "dryRun": list,
    "preconditions": dict,
    "kind": str,
    "apiVersion": str,
}


def _preconditions(options: dict[str, Any]) -> dict[str, str]:
    """The ``preconditions`` of DeleteOptions; 400 where the options do not decode as DeleteOptions."""
    for key, kind in _DELETE_OPTION_TYPES.items():
        value = options.get(key)
        wrong_int = kind is int and isinstance(value, bool)
        if value is not None and (wrong_int or not isinstance(value, kind)):
            raise bad_request(f"the body does not decode as DeleteOptions: {key} has the wrong type")
    pre = options.get("preconditions") or {}
    for key in ("uid", "resourceVersion"):
        if pre.get(key) is not None and not isinstance(pre[key], str):
            raise bad_request(
                f"the body does not decode as DeleteOptions: preconditions.{key} must be a string"
            )
    return {k: pre[k] for k in ("uid", "resourceVersion") if pre.get(k)}


def _with_name(field_selector: str, name: str) -> str:
    clause = f"metadata.name={name}"
    return f"{field_selector},{clause}" if field_selector else clause
