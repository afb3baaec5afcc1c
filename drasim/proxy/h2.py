"""Reading gRPC calls off the bytes of one HTTP/2 connection, as a bystander.

The splice (:mod:`drasim.proxy.splice`) copies a connection's bytes unchanged and feeds each
direction here. :class:`H2Connection` cuts the bytes into frames (a frame may arrive in any
number of pieces), decodes every header block of a direction in order with that direction's
own HPACK decoder (its dynamic table must follow the sender's, so no block may be skipped,
PUSH_PROMISE's included), and follows each stream: the method from the kubelet's HEADERS
``:path``, the request and reply messages from DATA frames (gRPC's 5-byte prefix, a message
may span frames), the status from the driver's trailers (``grpc-status``, ``grpc-message``)
or from RST_STREAM. Padding, PRIORITY fields and CONTINUATION frames are handled.

It reports through callbacks: ``on_request`` for a call's first request message, ``on_reply``
for each reply message of a server stream as it arrives, ``on_end`` once per call when its
stream ends. Bytes that are not HTTP/2 raise
:class:`H2Error`. PURE: no I/O.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote

from drasim.proxy.hpackread import HpackReader, HpackReadError

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
"""What a client sends first on every HTTP/2 connection."""

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = (
    range(10)
)
END_STREAM, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x4, 0x8, 0x20
ACK = 0x1
MAX_FRAME_SIZE = 0x5
DEFAULT_MAX_FRAME = 1 << 14

MAX_TABLE_SIZE = 1 << 24
"""The largest HPACK table a sender may ask for: a bystander follows whatever the peers agreed."""

MAX_HEADER_LIST = 1 << 24

CACHE_SIZE = 64
"""Decoded header blocks kept per direction (while the HPACK table does not change)."""

CANCEL = 0x8
REFUSED_STREAM = 0x7

# gRPC status numbers -> Go's codes.Code names (what the kubelet's client journals).
GO_CODES: tuple[str, ...] = (
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
)


class H2Error(Exception):
    """The bytes are not the HTTP/2 (or gRPC) they should be."""

    who = ""
    """Whose bytes: ``kubelet`` or ``driver`` (set when it is raised out of the reader)."""


def go_code(status: int) -> str:
    """Go's name of a gRPC status number (an unknown number is ``Unknown``, as Go reads it)."""
    return GO_CODES[status] if 0 <= status < len(GO_CODES) else "Unknown"


@dataclass
class Call:
    """One stream: a gRPC call the kubelet made."""

    stream: int
    path: str
    start: float = field(default_factory=time.monotonic)
    requests: list[bytes] = field(default_factory=list)
    replies: list[bytes] = field(default_factory=list)
    code: str = ""
    """Go's name of the call's status once it ended ("OK", "Unavailable", ...)."""
    error: str | None = None
    reply_headers: bool = False
    encoding: tuple[str, str] = ("identity", "identity")
    """``grpc-encoding`` of the request and of the replies."""
    pending: list[bytearray] = field(default_factory=lambda: [bytearray(), bytearray()])
    """Bytes of a message not complete yet, per direction (0: request, 1: reply)."""
    ended: float = 0.0
    """When the call's end arrived (``time.monotonic``), once it ended; for a server stream,
    also when its newest reply message arrived (before ``on_reply``)."""
    note: object = None
    """What the reader's ``on_request`` made of the first request message (the journal form)."""
    problem: str | None = None
    """Why a message of the call could not be read (set by the callbacks)."""


class _Direction:
    """The frame reader of one direction."""

    def __init__(self, from_client: bool) -> None:
        self.from_client = from_client
        self.buffer = bytearray()
        self.preface = len(PREFACE) if from_client else 0
        self.first = True  # the first frame after the preface must be SETTINGS
        self.max_frame = DEFAULT_MAX_FRAME
        """The largest frame this direction may carry (the other side's SETTINGS_MAX_FRAME_SIZE)."""
        self.decoder = HpackReader(MAX_TABLE_SIZE, MAX_HEADER_LIST)
        self.block: bytearray | None = None  # a header block waiting for CONTINUATION
        self.block_stream = 0
        self.block_end_stream = False
        self.block_promise = False
        # Blocks that left the HPACK table as it was decode the same way until the table
        # changes: gRPC's replies repeat the same few indexed blocks, read once here.
        self.cache: dict[bytes, dict[bytes, bytes]] = {}
        self.table_state: tuple[object, int, int] = (None, 0, self.decoder.table.maxsize)

    def decode(self, block: bytes) -> dict[bytes, bytes]:
        """The fields of one header block (decoded in order: the table follows the sender's)."""
        found = self.cache.get(block)
        if found is not None:
            return found
        try:
            fields = dict(self.decoder.decode(block))
        except HpackReadError as err:
            raise H2Error(f"a header block that does not decode (HPACK): {err}") from None
        table = self.decoder.table
        entries = table.dynamic_entries
        state = (entries[0] if entries else None, len(entries), table.maxsize)
        before = self.table_state
        if state[0] is before[0] and state[1:] == before[1:]:
            if len(self.cache) >= CACHE_SIZE:
                self.cache.clear()
            self.cache[block] = fields
        else:
            self.cache.clear()
            self.table_state = state
        return fields


class H2Connection:
    """Both directions of one connection and the calls on it (not thread-safe: one caller at a time)."""

    def __init__(
        self,
        on_end: Callable[[Call], None],
        on_reply: Callable[[Call, bytes], None] | None = None,
        on_request: Callable[[Call, bytes], None] | None = None,
        *,
        streaming: Callable[[str], bool] = lambda _path: False,
    ) -> None:
        self.on_end = on_end
        self.on_reply = on_reply
        self.on_request = on_request
        self.streaming = streaming
        """Which methods are server streams (their replies are reported one by one)."""
        self.calls: dict[int, Call] = {}
        self._readers: dict[int, Callable[[_Direction, int, int, bytes], None]] = {
            DATA: self._on_data,
            HEADERS: self._on_headers,
            PUSH_PROMISE: self._on_push_promise,
            CONTINUATION: self._on_continuation,
            RST_STREAM: self._on_rst_stream,
            SETTINGS: self._on_settings,
        }
        self._client = _Direction(True)
        self._server = _Direction(False)
        self._received: float | None = None

    # ------------------------------------------------------------------ input
    def client_bytes(self, data: bytes) -> None:
        """Bytes the kubelet sent."""
        self._feed(self._client, data)

    def server_bytes(self, data: bytes, received: float | None = None) -> None:
        """Bytes the driver sent; ``received``: when they arrived (``time.monotonic``), if they
        are read later (a call they end ends then)."""
        self._received = received
        try:
            self._feed(self._server, data)
        finally:
            self._received = None

    def _feed(self, d: _Direction, data: bytes) -> None:
        try:
            self._read(d, data)
        except H2Error as err:
            err.who = _who(d)
            raise

    def _read(self, d: _Direction, data: bytes) -> None:
        buf = d.buffer
        buf += data
        pos = 0
        if d.preface:
            have = min(len(buf), d.preface)
            start = len(PREFACE) - d.preface
            if buf[:have] != PREFACE[start : start + have]:
                raise H2Error("not an HTTP/2 connection preface")
            d.preface -= have
            pos = have
        end = len(buf)
        while end - pos >= 9:
            length = (buf[pos] << 16) | (buf[pos + 1] << 8) | buf[pos + 2]
            kind = buf[pos + 3]
            if d.first and kind != SETTINGS:  # seen before waiting for the payload
                raise H2Error(f"the {_who(d)}'s first frame is not SETTINGS (type {kind})")
            if length > d.max_frame:
                raise H2Error(
                    f"the {_who(d)} sent a frame of {length} bytes, more than the {d.max_frame} allowed"
                )
            if end - pos - 9 < length:
                break
            flags = buf[pos + 4]
            stream = ((buf[pos + 5] & 0x7F) << 24) | (buf[pos + 6] << 16) | (buf[pos + 7] << 8) | buf[pos + 8]
            payload = bytes(buf[pos + 9 : pos + 9 + length])
            pos += 9 + length
            self._frame(d, kind, flags, stream, payload)
        if pos:
            del buf[:pos]

    # ------------------------------------------------------------------ frames
    def _frame(self, d: _Direction, kind: int, flags: int, stream: int, payload: bytes) -> None:
        if d.first:
            if kind != SETTINGS or stream:
                raise H2Error(f"the {_who(d)}'s first frame is not SETTINGS (type {kind})")
            d.first = False
        if d.block is not None and kind != CONTINUATION:
            raise H2Error(f"the {_who(d)} sent a frame of type {kind} inside a header block")
        read = self._readers.get(kind)
        if read is not None:  # PING, GOAWAY, WINDOW_UPDATE, PRIORITY, unknown types: no call changes
            read(d, flags, stream, payload)

    def _on_data(self, d: _Direction, flags: int, stream: int, payload: bytes) -> None:
        self._data(d, flags, stream, _unpad(payload, flags, _who(d)))

    def _on_headers(self, d: _Direction, flags: int, stream: int, payload: bytes) -> None:
        body = _unpad(payload, flags, _who(d))
        if flags & PRIORITY_FLAG:
            if len(body) < 5:
                raise H2Error(f"the {_who(d)} sent a HEADERS frame too short for its PRIORITY fields")
            body = body[5:]
        self._block(d, stream, body, flags, promise=False)

    def _on_push_promise(self, d: _Direction, flags: int, stream: int, payload: bytes) -> None:
        body = _unpad(payload, flags, _who(d))
        if len(body) < 4:
            raise H2Error(f"the {_who(d)} sent a PUSH_PROMISE frame too short for its stream id")
        self._block(d, stream, body[4:], flags, promise=True)

    def _on_continuation(self, d: _Direction, flags: int, stream: int, payload: bytes) -> None:
        if d.block is None or stream != d.block_stream:
            raise H2Error(f"the {_who(d)} sent a CONTINUATION frame that continues no header block")
        d.block += payload
        if flags & END_HEADERS:
            self._headers(d, bytes(d.block))

    def _on_rst_stream(self, d: _Direction, flags: int, stream: int, payload: bytes) -> None:  # noqa: ARG002
        if len(payload) != 4:
            raise H2Error(f"the {_who(d)} sent a RST_STREAM frame of {len(payload)} bytes")
        self._reset(d, stream, int.from_bytes(payload, "big"))

    def _on_settings(self, d: _Direction, flags: int, stream: int, payload: bytes) -> None:  # noqa: ARG002
        if not flags & ACK:
            self._settings(d, payload)

    def _settings(self, d: _Direction, payload: bytes) -> None:
        if len(payload) % 6:
            raise H2Error(f"the {_who(d)} sent a SETTINGS frame of {len(payload)} bytes")
        other = self._server if d.from_client else self._client
        for i in range(0, len(payload), 6):
            if int.from_bytes(payload[i : i + 2], "big") == MAX_FRAME_SIZE:
                # The largest frame this side takes: what the other side may send from now on.
                other.max_frame = max(other.max_frame, int.from_bytes(payload[i + 2 : i + 6], "big"))

    def _block(self, d: _Direction, stream: int, body: bytes, flags: int, *, promise: bool) -> None:
        if not stream:
            raise H2Error("a header block on stream 0")
        d.block = bytearray(body)
        d.block_stream = stream
        d.block_end_stream = bool(flags & END_STREAM) and not promise
        d.block_promise = promise
        if flags & END_HEADERS:
            self._headers(d, body)

    def _headers(self, d: _Direction, block: bytes) -> None:
        stream, end_stream, promise = d.block_stream, d.block_end_stream, d.block_promise
        d.block = None
        fields = d.decode(block)
        if promise:
            return
        if d.from_client:
            self._request_headers(stream, fields)
        else:
            self._reply_headers(stream, fields, end_stream)

    def _request_headers(self, stream: int, fields: dict[bytes, bytes]) -> None:
        if stream in self.calls:
            return  # a client's trailers: gRPC has none to read
        path = fields.get(b":path", b"").decode("utf-8", "replace")
        call = self.calls[stream] = Call(stream, path)
        encoding = fields.get(b"grpc-encoding", b"identity").decode("ascii", "replace")
        call.encoding = (encoding, call.encoding[1])

    def _reply_headers(self, stream: int, fields: dict[bytes, bytes], end_stream: bool) -> None:
        call = self.calls.get(stream)
        if call is None:
            return
        if not call.reply_headers:
            call.reply_headers = True
            encoding = fields.get(b"grpc-encoding", b"identity").decode("ascii", "replace")
            call.encoding = (call.encoding[0], encoding)
        status = fields.get(b"grpc-status")
        if status is not None:
            try:
                number = int(status)
            except ValueError:
                number = 2
            message = unquote(fields.get(b"grpc-message", b"").decode("utf-8", "replace"))
            self._end(call, go_code(number), message if number else None)
        elif end_stream:
            http = fields.get(b":status", b"").decode("ascii", "replace")
            self._end(call, "Internal" if http in ("", "200") else "Unknown", _no_status(http))

    def _data(self, d: _Direction, flags: int, stream: int, body: bytes) -> None:
        call = self.calls.get(stream)
        if call is None:
            return
        side = 0 if d.from_client else 1
        pending = call.pending[side]
        pending += body
        out = call.requests if side == 0 else call.replies
        while len(pending) >= 5:
            size = int.from_bytes(pending[1:5], "big")
            if len(pending) < 5 + size:
                break
            message = bytes(pending[5 : 5 + size])
            if pending[0]:
                message = _decompress(message, call.encoding[side])
            del pending[: 5 + size]
            out.append(message)
            if side == 0 and len(out) == 1 and self.on_request is not None:
                self.on_request(call, message)
            if side == 1 and self.on_reply is not None and self.streaming(call.path):
                call.ended = time.monotonic() if self._received is None else self._received
                self.on_reply(call, message)
        if side == 1 and flags & END_STREAM:
            self._end(call, "Internal", "drasim proxy: the driver ended the stream without a status")

    def _reset(self, d: _Direction, stream: int, error_code: int) -> None:
        call = self.calls.get(stream)
        if call is None:
            return
        who = "kubelet" if d.from_client else "driver"
        if error_code == CANCEL:
            code = "Canceled"
        elif error_code == REFUSED_STREAM:
            code = "Unavailable"
        else:
            code = "Internal"
        self._end(call, code, f"drasim proxy: the {who} reset the stream (HTTP/2 error code {error_code})")

    def _end(self, call: Call, code: str, error: str | None) -> None:
        self.calls.pop(call.stream, None)
        call.code, call.error = code, error
        call.ended = time.monotonic() if self._received is None else self._received
        self.on_end(call)

    def close(self, why: str) -> None:
        """The connection ended: every call still open ends as ``Unavailable`` with ``why``."""
        for call in list(self.calls.values()):
            self._end(call, "Unavailable", why)


def _who(d: _Direction) -> str:
    return "kubelet" if d.from_client else "driver"


def _unpad(payload: bytes, flags: int, who: str) -> bytes:
    if not flags & PADDED:
        return payload
    if not payload or payload[0] >= len(payload):
        raise H2Error(f"the {who} sent a frame whose padding is longer than the frame")
    return payload[1 : len(payload) - payload[0]]


def _decompress(message: bytes, encoding: str) -> bytes:
    if encoding not in ("gzip", "deflate"):
        raise H2Error(f"a compressed gRPC message in an encoding the proxy cannot read ({encoding!r})")
    try:
        return zlib.decompress(message, 31 if encoding == "gzip" else 15)
    except zlib.error as err:
        raise H2Error(f"a {encoding} gRPC message that does not decompress: {err}") from None


def _no_status(http: str) -> str:
    if http in ("", "200"):
        return "drasim proxy: the driver ended the stream without a grpc-status"
    return f"drasim proxy: the driver answered HTTP status {http} without a grpc-status"
