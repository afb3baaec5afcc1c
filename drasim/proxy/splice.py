"""The proxy's fast path on a DRA socket: the kubelet's connection spliced to the driver's.

Each connection the kubelet opens on the proxy's socket gets one connection to the driver's
socket, and the bytes are copied both ways unchanged by one thread waiting on both sockets.
On the side, :mod:`drasim.proxy.h2` reads the HTTP/2 frames of both directions and each call
is journaled as the grpcio path (:mod:`drasim.proxy.forward`) journals it. The driver's bytes
are passed on first and read right after, the journal held meanwhile
(:meth:`drasim.journal.Journal.hold`): whoever reads the journal once the kubelet has a reply
finds the call in it, and the reading is off the reply's path. (A recorder without a hold gets
the bytes read before they are passed on.)

Nothing is rewritten, held or answered here: the proxy uses the splice only while no fault
rule can apply (:meth:`drasim.proxy.proxy.Proxy.add_faults` moves a spliced socket to the
grpcio path). Bytes that are not HTTP/2 end the connection, with a ``fault`` event in the
journal saying what was wrong; the calls open on it are journaled as ``Unavailable``.
A driver whose connection ends (it died, it closed) ends the kubelet's connection too.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING

from google.protobuf.message import DecodeError

from drasim.interfaces import Hold
from drasim.proxy import wire
from drasim.proxy.h2 import Call, H2Connection, H2Error

if TYPE_CHECKING:
    from drasim.proxy.proxy import Proxy

CHUNK = 1 << 16
"""Bytes one ``recv`` takes at most."""

BACKLOG = 64

_UNREADABLE = (DecodeError, ValueError, UnicodeError)
"""What decoding a message that is not the protobuf it should be raises."""


def _is_watch(path: str) -> bool:
    return path.endswith("/" + wire.WATCH)


class Splicer:
    """The proxy's socket ``listen`` spliced to the driver's ``upstream`` (both unix socket paths).

    The same lifecycle as :class:`drasim.proxy.forward.Forwarder` (``start``, ``pause``,
    ``close``, ``serving``, ``refusing``), so the proxy resets and refuses both alike.
    """

    def __init__(self, proxy: Proxy, listen: Path, upstream: Path) -> None:
        self.proxy = proxy
        self.listen = listen
        self.upstream = upstream
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._links: set[_Link] = set()
        self._closed = False
        self.refusing = False
        """Set by :meth:`Proxy.refuse`: the socket stays closed."""

    # ------------------------------------------------------------------ lifecycle
    @property
    def serving(self) -> bool:
        """Whether the proxy's socket accepts connections."""
        with self._lock:
            return self._listener is not None

    def start(self) -> None:
        """Listen on ``listen`` (no-op when listening, closed, or refusing)."""
        with self._lock:
            if self._listener is not None or self._closed or self.refusing:
                return
            self.listen.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                self.listen.unlink()
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                listener.bind(str(self.listen))
                listener.listen(BACKLOG)
            except OSError:
                listener.close()
                raise
            self._listener = listener
        threading.Thread(
            target=self._accept, args=(listener,), name="drasim-splice-accept", daemon=True
        ).start()

    def connect(self, timeout: float) -> bool:
        """Whether the driver's socket takes a connection now (nothing is kept open)."""
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(timeout)
        try:
            probe.connect(str(self.upstream))
        except OSError:
            return False
        finally:
            probe.close()
        return True

    def pause(self) -> None:
        """Stop listening and end every connection; :meth:`start` listens again."""
        with self._lock:
            listener, self._listener = self._listener, None
            links, self._links = list(self._links), set()
        if listener is not None:
            _shut(listener)
        for link in links:
            link.abort()

    def reset(self) -> None:
        """End every connection (the kubelet sees them reset); keep listening."""
        with self._lock:
            links, self._links = list(self._links), set()
        for link in links:
            link.abort()

    def close(self, *, remove: bool = True) -> None:
        """Stop for good; with ``remove`` the proxy's socket file goes too."""
        with self._lock:
            self._closed = True
        self.pause()
        if remove:
            with contextlib.suppress(FileNotFoundError):
                self.listen.unlink()

    # ------------------------------------------------------------------ connections
    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # paused or closed
            threading.Thread(target=self._serve, args=(conn,), name="drasim-splice", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(str(self.upstream))
        except OSError:  # the driver is not serving: the kubelet's connection ends at once
            upstream.close()
            _shut(conn)
            return
        link = _Link(self, conn, upstream)
        with self._lock:
            if self._listener is None:  # paused meanwhile
                _shut(conn)
                _shut(upstream)
                return
            self._links.add(link)
        link.run()
        with self._lock:
            self._links.discard(link)

    # ------------------------------------------------------------------ journal
    def journal_end(self, call: Call) -> None:
        """Journal a call that ended (a server stream: only when it failed before any reply)."""
        duration = call.ended - call.start
        ok = call.code == "OK"
        if _is_watch(call.path):
            if not ok and not call.replies:
                self.proxy.record(
                    self,
                    call.path,
                    request={},
                    response=None,
                    code=call.code,
                    error=call.error,
                    duration=duration,
                )
            return
        reply = call.replies[0] if ok and call.replies else None
        code, error = call.code, call.error
        if not call.requests:  # no request message: an empty one, as a gRPC server reads it
            self.journal_request(call, b"")
        request_json, response = call.note, None
        if reply is not None:
            try:
                response = wire.reply_form(call.path, reply)
            except _UNREADABLE as err:
                call.problem = f"the reply does not decode: {err}"
        if call.problem is not None:
            code, error = "Internal", f"drasim proxy: {call.path}: {call.problem}"
        self.proxy.record(
            self,
            call.path,
            request=request_json,
            response=response,
            code=code,
            error=error,
            duration=duration,
        )

    def journal_request(self, call: Call, request: bytes) -> None:
        """Read a unary call's request while the driver works on it (off the reply's path)."""
        if not _is_watch(call.path):
            try:
                call.note = wire.request_form(call.path, request)
            except _UNREADABLE as err:
                call.problem = f"the request does not decode: {err}"

    def journal_reply(self, call: Call, reply: bytes) -> None:
        """Journal one message of a server stream (``NodeWatchResources``)."""
        api = wire.health_api(call.path)
        try:
            response = None if api is None else wire.health_json(api, reply)
        except _UNREADABLE:
            response = None
        extra = {"stream": True} if len(call.replies) > 1 else {}
        self.proxy.record(
            self,
            call.path,
            request={},
            response=response,
            code="OK",
            error=None,
            duration=call.ended - call.start,
            **extra,
        )


class _Link:
    """One kubelet connection and its driver connection, copied by one thread.

    One thread waits on both sockets (``poll``) and copies whichever has bytes: one thread,
    not one per direction, hands the GIL around less (docs/performance.md measured it). The
    kubelet's bytes are read right after they are passed on, so a reply is never read before
    the request it answers; so are the driver's, the journal held until they are read.
    """

    def __init__(self, splicer: Splicer, client: socket.socket, server: socket.socket) -> None:
        self.splicer = splicer
        self.client = client
        self.server = server
        self._h2 = H2Connection(
            splicer.journal_end, splicer.journal_reply, splicer.journal_request, streaming=_is_watch
        )
        self._reading = splicer.proxy.journaling  # False once the bytes stopped being HTTP/2
        self._aborted = False

    def run(self) -> None:
        """Copy both ways until the connection ends."""
        why = "drasim proxy: the connection ended before the call did"
        try:
            why = self._copy() or why
        except H2Error as err:
            who = err.who or "peer"
            self._reading = False
            self.splicer.proxy.note_error(
                f"the {who} sent bytes that are not HTTP/2 ({err}); the proxy closed the connection"
            )
            why = f"drasim proxy: the {who} sent bytes that are not HTTP/2 ({err})"
        finally:
            if self._aborted:
                why = "drasim proxy: the proxy ended the connection (reset, refused or stopped)"
            self._h2.close(why)  # the calls still open end now
            _shut(self.client)
            _shut(self.server)

    def _copy(self) -> str | None:
        """Copy until the driver's side ends (returns why) or the kubelet's does (``None``)."""
        client, server = self.client, self.server
        client_fd, server_fd = client.fileno(), server.fileno()
        poller = select.poll()
        poller.register(client_fd, select.POLLIN)
        poller.register(server_fd, select.POLLIN)
        reading = True  # the kubelet still sends
        held = self.splicer.proxy.hold
        try:
            while True:
                for fd, _ in poller.poll():
                    if fd == server_fd:
                        data = _recv_or_nothing(server)
                        if not data:  # the driver died or closed: so does the kubelet's side
                            return "drasim proxy: the driver's connection ended during the call"
                        if self._reading:
                            self._pass_on_and_read(data, held)
                        else:
                            client.sendall(data)
                    elif reading:
                        data = client.recv(CHUNK)
                        if not data:  # the kubelet half-closed: so does the proxy
                            reading = False
                            poller.unregister(client_fd)
                            with contextlib.suppress(OSError):
                                server.shutdown(socket.SHUT_WR)
                            continue
                        server.sendall(data)
                        if self._reading:  # read while the driver works on it
                            self._h2.client_bytes(data)
        except OSError:
            return None if not reading else "drasim proxy: the connection was reset"

    def _pass_on_and_read(self, data: bytes, held: Hold | None) -> None:
        """Pass the driver's bytes on to the kubelet and read them. With the journal's hold
        they are passed on first and read after, the journal held meanwhile (whoever reads it,
        or records anything, after the kubelet had the reply waits for the call's event); without,
        read first."""
        if held is None:
            self._h2.server_bytes(data)
            self.client.sendall(data)
            return
        received = monotonic()
        ticket = held[0]()
        try:
            try:
                self.client.sendall(data)
            finally:  # read even when the kubelet's side is gone
                self._h2.server_bytes(data, received)
        finally:
            held[1](ticket)

    def abort(self) -> None:
        """End both connections now (the copying thread stops; :meth:`run` closes them)."""
        self._aborted = True
        for sock in (self.client, self.server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _recv_or_nothing(sock: socket.socket) -> bytes:
    """The driver's next bytes; ``b""`` when its side ended, by a close or by a reset (a killed
    driver's socket resets the connection when bytes were still unread in it)."""
    try:
        return sock.recv(CHUNK)
    except OSError:
        return b""


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
