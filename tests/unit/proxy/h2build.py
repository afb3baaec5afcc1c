"""Building HTTP/2 bytes for the splice's frame reader tests (a tiny client and server writer)."""

from __future__ import annotations

import hpack

from drasim.proxy import h2

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
