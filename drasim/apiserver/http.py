"""HttpApiServer: the object store behind a real HTTP/1.1 Kubernetes REST API on loopback.

Real drivers (client-go) and the kubernetes Python client use it unchanged through
the kubeconfig it writes. It binds to 127.0.0.1 on a random port by default,
answers in JSON (also when a client prefers protobuf), and serves each request
on its own thread.

Usage::

    with HttpApiServer(ObjectStore()) as server:
        kubeconfig = server.write_kubeconfig(tmp / "kubeconfig")
        ...
"""

from __future__ import annotations

import contextlib
import os
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


class ApiHttpServer(ThreadingHTTPServer):
    """The socket server: knows the store, the body limit, open watches and connections."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], store: ObjectStore, max_body_bytes: int) -> None:
        self.store = store
        self.max_body_bytes = max_body_bytes
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

    ``host`` defaults to loopback; pass another address only on purpose (there is
    no authentication). ``port=0`` picks a free port. Bodies above
    ``max_body_bytes`` get 413.
    """

    def __init__(
        self,
        store: ObjectStore | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY,
    ) -> None:
        self.store = store if store is not None else ObjectStore()
        self._host = host
        self._port = port
        self._max_body = max_body_bytes
        self._server: ApiHttpServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> HttpApiServer:
        """Bind and serve on a background thread; returns self."""
        if self._server is not None:
            return self
        server = ApiHttpServer((self._host, self._port), self.store, self._max_body)
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
        """``http://127.0.0.1:<port>``."""
        host, port = self._bound()
        return f"http://{host}:{port}"

    def kubeconfig(self, namespace: str = "default") -> dict[str, Any]:
        """A kubeconfig document (no credentials) pointing at this server."""
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "drasim", "cluster": {"server": self.url}}],
            "users": [{"name": "drasim", "user": {"token": "drasim"}}],
            "contexts": [
                {"name": "drasim", "context": {"cluster": "drasim", "user": "drasim", "namespace": namespace}}
            ],
            "current-context": "drasim",
            "preferences": {},
        }

    def write_kubeconfig(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`kubeconfig` atomically (temp file, fsync, rename) and return the path."""
        return atomic_write_text(path, yaml.safe_dump(self.kubeconfig(), sort_keys=False))

    def __enter__(self) -> HttpApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
