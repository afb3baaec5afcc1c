"""HttpApiServer: the object store behind a real HTTP/1.1 Kubernetes REST API on loopback.

Real drivers (client-go) and the kubernetes Python client use it unchanged through
the kubeconfig it writes. It binds to 127.0.0.1 on a random port by default,
answers in JSON (also when a client prefers protobuf), and serves each connection
on its own thread.

Every request must carry the server's token, a random one per server unless one is
given: as ``Authorization: Bearer <token>``, or as the first segment of the path. Any
other request is answered 401, as kube-apiserver answers an unauthenticated one. The
kubeconfig it writes holds the token both ways (the user's ``token``, and the server
URL ``http://127.0.0.1:<port>/<token>``), because client-go sends a kubeconfig's
credentials only to a TLS server and would send none to this plain-HTTP one.
Connections are bounded like a real server's: headers must arrive within
``header_timeout`` seconds, an idle keep-alive connection is closed after
``idle_timeout``, and above ``max_connections`` open connections a new one is
answered 429 and closed instead of getting a thread.

Usage::

    with HttpApiServer(ObjectStore()) as server:
        kubeconfig = server.write_kubeconfig(tmp / "kubeconfig")
        ...
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from drasim.apiserver.handler import ApiRequestHandler
from drasim.apiserver.store import ObjectStore
from drasim.apiserver.watch import Watch
from drasim.fsutil import atomic_write_text

DEFAULT_MAX_BODY = 3 * 1024 * 1024  # upstream's request size limit is 3 MiB
DEFAULT_HEADER_TIMEOUT = 32.0  # kube-apiserver's ReadHeaderTimeout (k8s.io/apiserver secure_serving.go)
DEFAULT_IDLE_TIMEOUT = 90.0  # kube-apiserver's IdleTimeout
DEFAULT_MAX_CONNECTIONS = 512
LISTEN_BACKLOG = 1024
_TOKEN = re.compile(r"[A-Za-z0-9._~-]{16,}")  # usable as a URL path segment as it is


def _refusal(code: int, reason: str, message: str) -> bytes:
    """A complete HTTP response holding a Status, for a connection that gets no thread."""
    body = json.dumps(
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
        | {"message": message, "reason": reason, "code": code},
        separators=(",", ":"),
    ).encode()
    head = (
        f"HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


_TOO_MANY = _refusal(429, "TooManyRequests", "too many open connections, please try again later")


class ApiHttpServer(ThreadingHTTPServer):
    """The socket server: knows the store, the token, the limits, open watches and connections."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = LISTEN_BACKLOG

    def __init__(
        self,
        address: tuple[str, int],
        store: ObjectStore,
        max_body_bytes: int,
        *,
        token: str,
        header_timeout: float = DEFAULT_HEADER_TIMEOUT,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        self.store = store
        self.max_body_bytes = max_body_bytes
        self.token = token
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout
        self.max_connections = max_connections
        self._lock = threading.Condition()
        self._watches: set[Watch] = set()
        self._connections: set[socket.socket] = set()
        super().__init__(address, ApiRequestHandler)

    @property
    def address(self) -> str:
        """``host:port`` as clients reach it."""
        host, port = self.server_address[:2]
        return f"{host!s}:{port}"

    def get_request(self) -> tuple[socket.socket, Any]:
        """Accept a connection and remember it, so :meth:`close_all` can end keep-alive threads."""
        conn, addr = super().get_request()
        with self._lock:
            self._connections.add(conn)
        return conn, addr

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection on a thread, or refuse it (429) when too many are open."""
        with self._lock:
            crowded = len(self._connections) > self.max_connections
        if not crowded:
            super().process_request(request, client_address)
            return
        with contextlib.suppress(OSError):
            request.setblocking(False)  # never wait on a client that gets no thread
            request.send(_TOO_MANY)
        self.shutdown_request(request)

    def shutdown_request(self, request: Any) -> None:
        """Forget a finished connection."""
        with self._lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def track(self, watch: Watch) -> None:
        """Remember an open watch so stopping the server ends it."""
        with self._lock:
            self._watches.add(watch)

    def untrack(self, watch: Watch) -> None:
        """Forget a finished watch."""
        with self._lock:
            self._watches.discard(watch)
            self._lock.notify_all()

    def close_all(self, grace: float = 2.0) -> None:
        """End open watches (letting them finish their chunked stream), then shut down connections."""
        with self._lock:
            watches = list(self._watches)
        for watch in watches:
            watch.stop()
        with self._lock:
            self._lock.wait_for(lambda: not self._watches, timeout=grace)
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class HttpApiServer:
    """The Kubernetes REST face of an :class:`ObjectStore`.

    ``host`` defaults to loopback; pass another address only on purpose (the token
    travels in clear text). ``port=0`` picks a free port. Bodies above
    ``max_body_bytes`` get 413. ``token`` is the bearer token every request must
    carry (default: a new random one, see :attr:`token`); the timeouts and
    ``max_connections`` bound connections (see the module docstring).
    """

    def __init__(
        self,
        store: ObjectStore | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY,
        token: str | None = None,
        header_timeout: float = DEFAULT_HEADER_TIMEOUT,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        self.store = store if store is not None else ObjectStore()
        self._host = host
        self._port = port
        self._max_body = max_body_bytes
        if token is not None and not _TOKEN.fullmatch(token):
            msg = "the API server token must be 16 or more of A-Z, a-z, 0-9, '-', '_', '.' and '~'"
            raise ValueError(msg)
        self.token = token if token is not None else secrets.token_urlsafe(32)
        """The bearer token every request must carry (it is in :meth:`kubeconfig`)."""
        self._timeouts = (header_timeout, idle_timeout)
        self._max_connections = max_connections
        self._server: ApiHttpServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> HttpApiServer:
        """Bind and serve on a background thread; returns self."""
        if self._server is not None:
            return self
        server = ApiHttpServer(
            (self._host, self._port),
            self.store,
            self._max_body,
            token=self.token,
            header_timeout=self._timeouts[0],
            idle_timeout=self._timeouts[1],
            max_connections=self._max_connections,
        )
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="drasim-apiserver", daemon=True
        )
        thread.start()
        self._server, self._thread = server, thread
        return self

    def stop(self) -> None:
        """Stop serving, end open watches and connections, close the socket."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._server = self._thread = None
        server.shutdown()
        server.close_all()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    @property
    def running(self) -> bool:
        """Whether the server is serving."""
        return self._server is not None

    @property
    def host(self) -> str:
        """The bound address."""
        return self._bound()[0]

    @property
    def port(self) -> int:
        """The bound port (the real one when 0 was asked for)."""
        return self._bound()[1]

    def _bound(self) -> tuple[str, int]:
        if self._server is None:
            msg = "the API server is not running; call start() first"
            raise RuntimeError(msg)
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (requests to it need the bearer token, see :attr:`auth_header`)."""
        host, port = self._bound()
        return f"http://{host}:{port}"

    @property
    def client_url(self) -> str:
        """``http://127.0.0.1:<port>/<token>``: the server URL of :meth:`kubeconfig`, which
        authenticates every request made under it (for clients that send no header)."""
        return f"{self.url}/{self.token}"

    def kubeconfig(self, namespace: str = "default") -> dict[str, Any]:
        """A kubeconfig document pointing at this server, with its bearer token."""
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "drasim", "cluster": {"server": self.client_url}}],
            "users": [{"name": "drasim", "user": {"token": self.token}}],
            "contexts": [
                {"name": "drasim", "context": {"cluster": "drasim", "user": "drasim", "namespace": namespace}}
            ],
            "current-context": "drasim",
            "preferences": {},
        }

    def write_kubeconfig(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`kubeconfig` atomically (temp file, fsync, rename; mode 0600: it holds the
        token) and return the path."""
        return atomic_write_text(path, yaml.safe_dump(self.kubeconfig(), sort_keys=False))

    @property
    def auth_header(self) -> dict[str, str]:
        """``{"Authorization": "Bearer <token>"}``, for clients that build requests themselves."""
        return {"Authorization": f"Bearer {self.token}"}

    def __enter__(self) -> HttpApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
