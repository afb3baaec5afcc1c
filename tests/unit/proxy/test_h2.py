"""The splice's HTTP/2 reader (drasim.proxy.h2): frames in any pieces, HPACK in order, calls, status."""

from __future__ import annotations

import gzip
import itertools
from typing import Any

import hpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drasim.proxy import h2
from drasim.proxy.h2 import Call, H2Connection, H2Error

PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
WATCH = "/v1alpha1.DRAResourceHealth/NodeWatchResources"


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def message(data: bytes) -> bytes:
    """One gRPC message: the 5-byte prefix and the bytes."""
    return b"\x00" + len(data).to_bytes(4, "big") + data


class Writer:
    """One side's frames, with its own HPACK encoder (blocks must be read in this order)."""

    def __init__(self, client: bool) -> None:
        self.encoder = hpack.Encoder()
        self.client = client

    def start(self) -> bytes:
        settings = frame(h2.SETTINGS, 0, 0, b"")
        return h2.PREFACE + settings if self.client else settings

    def headers(
        self,
        stream: int,
        fields: list[tuple[str, str]],
        *,
        end_stream: bool = False,
        pieces: int = 1,
        pad: int = 0,
        priority: bool = False,
    ) -> bytes:
        """A header block in a HEADERS frame and ``pieces - 1`` CONTINUATION frames."""
        block = self.encoder.encode(fields)
        size = -(-len(block) // pieces) if block else 0
        parts = [block[i : i + size] for i in range(0, len(block), size)] if size else [b""]
        flags = (h2.END_STREAM if end_stream else 0) | (h2.END_HEADERS if len(parts) == 1 else 0)
        first = parts[0]
        if priority:
            flags |= h2.PRIORITY_FLAG
            first = b"\x00\x00\x00\x00\x10" + first
        if pad:
            flags |= h2.PADDED
            first = bytes([pad]) + first + b"\x00" * pad
        out = frame(h2.HEADERS, flags, stream, first)
        for i, part in enumerate(parts[1:], 2):
            out += frame(h2.CONTINUATION, h2.END_HEADERS if i == len(parts) else 0, stream, part)
        return out

    def data(self, stream: int, payload: bytes, *, end_stream: bool = False, pad: int = 0) -> bytes:
        flags = h2.END_STREAM if end_stream else 0
        if pad:
            flags |= h2.PADDED
            payload = bytes([pad]) + payload + b"\x00" * pad
        return frame(h2.DATA, flags, stream, payload)

    def request(self, stream: int, path: str) -> bytes:
        return self.headers(
            stream,
            [
                (":method", "POST"),
                (":scheme", "http"),
                (":path", path),
                (":authority", "localhost"),
                ("content-type", "application/grpc"),
                ("user-agent", "grpc-go/1.72.0"),
                ("te", "trailers"),
                ("grpc-timeout", "44999m"),
            ],
        )

    def reply_headers(self, stream: int) -> bytes:
        return self.headers(stream, [(":status", "200"), ("content-type", "application/grpc")])

    def trailers(self, stream: int, status: int = 0, message: str = "") -> bytes:
        fields = [("grpc-status", str(status))]
        if message:
            fields.append(("grpc-message", message))
        return self.headers(stream, fields, end_stream=True)


# ----------------------------------------------------------------------------- the tests


class Reader:
    """An H2Connection and what it reported."""

    def __init__(self) -> None:
        self.ended: list[Call] = []
        self.replies: list[tuple[int, bytes]] = []
        self.requests: list[tuple[int, bytes]] = []
        self.conn = H2Connection(
            self.ended.append,
            lambda call, reply: self.replies.append((call.stream, reply)),
            lambda call, request: self.requests.append((call.stream, request)),
            streaming=lambda path: path == WATCH,
        )

    def summary(self) -> list[tuple[int, str, list[bytes], list[bytes], str, str | None]]:
        return [(c.stream, c.path, c.requests, c.replies, c.code, c.error) for c in self.ended]


def transcript() -> tuple[bytes, bytes]:
    """Both directions of a connection with three calls, written with every feature the reader
    handles: CONTINUATION, padding, PRIORITY fields, messages spanning DATA frames, an error
    status with an encoded message, a trailers-only reply, a server stream, a cancelled stream."""
    c, s = Writer(True), Writer(False)
    up, down = c.start(), s.start()
    # 1: a unary call; its headers in three frames, padded, with PRIORITY; its reply in two DATA frames.
    up += c.headers(
        1, [(":method", "POST"), (":path", PREPARE), ("te", "trailers")], pieces=3, pad=3, priority=True
    )
    up += c.data(1, message(b"request-1"), end_stream=True, pad=2)
    reply = message(b"reply-1" * 10)
    down += s.reply_headers(1) + s.data(1, reply[:7]) + s.data(1, reply[7:], pad=5)
    down += s.trailers(1)
    # 3: an error with an encoded message.
    up += c.request(3, PREPARE) + c.data(3, message(b"request-3"), end_stream=True)
    down += s.reply_headers(3) + s.trailers(3, 8, "no room: 100%25 full")
    # 5: trailers-only.
    up += c.request(5, PREPARE) + c.data(5, message(b""), end_stream=True)
    down += s.headers(5, [(":status", "200"), ("grpc-status", "12")], end_stream=True)
    # 7: a server stream with two messages, then cancelled by the client.
    up += c.request(7, WATCH) + c.data(7, message(b""), end_stream=True)
    down += s.reply_headers(7) + s.data(7, message(b"health-1") + message(b"health-2")[:3])
    down += s.data(7, message(b"health-2")[3:])
    return up, down


CANCEL_7 = frame(h2.RST_STREAM, 0, 7, (8).to_bytes(4, "big"))
"""The client cancels the stream after both directions were read."""


EXPECTED = [
    (1, PREPARE, [b"request-1"], [b"reply-1" * 10], "OK", None),
    (3, PREPARE, [b"request-3"], [], "ResourceExhausted", "no room: 100% full"),
    (5, PREPARE, [b""], [], "Unimplemented", ""),
    (7, WATCH, [b""], [b"health-1", b"health-2"], "Canceled", None),
]


def _check(reader: Reader) -> None:
    got = reader.summary()
    assert got[:3] == EXPECTED[:3]
    assert got[3][:5] == EXPECTED[3][:5]
    assert "reset the stream (HTTP/2 error code 8)" in str(got[3][5])
    assert reader.replies == [(7, b"health-1"), (7, b"health-2")]
    assert [r[0] for r in reader.requests] == [1, 3, 5, 7]


def _feed(reader: Reader, up: bytes, down: bytes, cuts_up: list[int], cuts_down: list[int]) -> None:
    """Feed the requests of each call before its replies: the kubelet writes first."""
    pieces_up = _cut(up, cuts_up)
    pieces_down = _cut(down, cuts_down)
    for piece in pieces_up:
        reader.conn.client_bytes(piece)
    for piece in pieces_down:
        reader.conn.server_bytes(piece)
    reader.conn.client_bytes(CANCEL_7)


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def test_a_transcript_read_in_one_piece() -> None:
    up, down = transcript()
    reader = Reader()
    _feed(reader, up, down, [], [])
    _check(reader)


def test_every_split_point_of_either_direction_reads_the_same() -> None:
    up, down = transcript()
    for i in range(len(up) + 1):
        reader = Reader()
        _feed(reader, up, down, [i], [])
        _check(reader)
    for i in range(len(down) + 1):
        reader = Reader()
        _feed(reader, up, down, [], [i])
        _check(reader)


def test_one_byte_at_a_time() -> None:
    up, down = transcript()
    reader = Reader()
    _feed(reader, up, down, list(range(len(up))), list(range(len(down))))
    _check(reader)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=10_000)), st.lists(st.integers(min_value=0, max_value=10_000))
)
def test_any_pieces_read_the_same(cuts_up: list[int], cuts_down: list[int]) -> None:
    up, down = transcript()
    reader = Reader()
    _feed(reader, up, down, cuts_up, cuts_down)
    _check(reader)


def test_hpack_tables_follow_each_direction_in_order() -> None:
    """Indexed fields refer to entries the same direction's earlier blocks added."""
    c, s = Writer(True), Writer(False)
    reader = Reader()
    reader.conn.client_bytes(c.start())
    reader.conn.server_bytes(s.start())
    paths = [f"/v1.DRAPlugin/Method{i}" for i in range(5) for _ in range(2)]
    for i, path in enumerate(paths):  # a second block of the same fields is all indexes
        stream = 2 * i + 1
        reader.conn.client_bytes(c.request(stream, path) + c.data(stream, message(b"x"), end_stream=True))
        reader.conn.server_bytes(s.reply_headers(stream) + s.trailers(stream))
    assert [(c.path, c.code) for c in reader.ended] == [(p, "OK") for p in paths]


def test_a_gzip_message_is_read() -> None:
    c, s = Writer(True), Writer(False)
    reader = Reader()
    fields = [(":path", PREPARE), ("grpc-encoding", "gzip")]
    packed = gzip.compress(b"request")
    reader.conn.client_bytes(
        c.start()
        + c.headers(1, fields)
        + c.data(1, b"\x01" + len(packed).to_bytes(4, "big") + packed, end_stream=True)
    )
    reader.conn.server_bytes(s.start() + s.reply_headers(1) + s.data(1, message(b"r")) + s.trailers(1))
    assert reader.summary() == [(1, PREPARE, [b"request"], [b"r"], "OK", None)]


def test_a_connection_that_ends_ends_its_calls_unavailable() -> None:
    c = Writer(True)
    reader = Reader()
    reader.conn.client_bytes(c.start() + c.request(1, PREPARE) + c.data(1, message(b"q"), end_stream=True))
    reader.conn.close("the driver went away")
    assert reader.summary() == [(1, PREPARE, [b"q"], [], "Unavailable", "the driver went away")]


@pytest.mark.parametrize(
    ("client", "data", "problem"),
    [
        (True, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "preface"),
        (False, frame(h2.HEADERS, h2.END_HEADERS, 1, b"\x88"), "first frame is not SETTINGS"),
        (
            True,
            h2.PREFACE
            + frame(h2.SETTINGS, 0, 0, b"")
            + frame(h2.HEADERS, h2.END_HEADERS, 1, b"\xff\xff\xff\xff"),
            "HPACK",
        ),
        (
            True,
            h2.PREFACE + frame(h2.SETTINGS, 0, 0, b"") + frame(h2.CONTINUATION, h2.END_HEADERS, 1, b"\x88"),
            "continues no header block",
        ),
        (
            True,
            h2.PREFACE
            + frame(h2.SETTINGS, 0, 0, b"")
            + frame(h2.HEADERS, 0, 1, b"\x88")
            + frame(h2.DATA, 0, 1, b""),
            "inside a header block",
        ),
        (
            True,
            h2.PREFACE + frame(h2.SETTINGS, 0, 0, b"") + frame(h2.DATA, h2.PADDED, 1, b"\x09abc"),
            "padding",
        ),
        (False, frame(h2.SETTINGS, 0, 0, b"") + frame(h2.RST_STREAM, 0, 1, b"\x00"), "RST_STREAM"),
    ],
)
def test_bytes_that_are_not_http2_are_a_clear_error(client: bool, data: bytes, problem: str) -> None:
    reader = Reader()
    feed = reader.conn.client_bytes if client else reader.conn.server_bytes
    with pytest.raises(H2Error, match=problem):
        _byte_by_byte(feed, data)


def _byte_by_byte(feed: Any, data: bytes) -> None:
    for i in range(len(data)):
        feed(data[i : i + 1])
