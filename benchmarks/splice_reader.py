"""The CPU cost of the splice's HTTP/2 reader (drasim/proxy/h2.py), alone, per call.

A kubelet-like unary ``NodePrepareResources`` exchange is written as bytes: the kubelet's
HEADERS (its ``grpc-timeout`` differs each call, as a real client's does) and DATA, the driver's
HEADERS, DATA and trailers, each side's WINDOW_UPDATE frames as grpcio sends them. Then, in one
thread with nothing else running in this process:

- ``hpack``: the kubelet's header blocks decoded by ``hpack.Decoder`` and by the splice's lean
  decoder (drasim/proxy/hpackread.py);
- ``reader``: every call's bytes read by ``H2Connection`` (frames, HPACK, messages), without and
  with the journal forms of request and reply that the splice journals (drasim/proxy/wire.py).

    python benchmarks/splice_reader.py [--calls N] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import hpack
from benchlib import machine, result
from progress import progress

from drasim._proto.dra.v1 import api_pb2 as pb
from drasim.proxy import h2, wire
from drasim.proxy.hpackread import HpackReader

PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
UID = "6c1bd1a1-7f1c-4e5e-9d8e-000000000001"


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def _message(data: bytes) -> bytes:
    return b"\x00" + len(data).to_bytes(4, "big") + data


def _window(stream: int) -> bytes:
    return _frame(h2.WINDOW_UPDATE, 0, stream, (1000).to_bytes(4, "big"))


def exchange(calls: int) -> tuple[list[bytes], list[bytes], list[bytes]]:
    """The kubelet's header blocks, and each call's bytes from the kubelet and from the driver."""
    request = pb.NodePrepareResourcesRequest(claims=[pb.Claim(namespace="default", name="gpu", uid=UID)])
    device = pb.Device(
        request_names=["gpu"], pool_name="node-1", device_name="gpu-0", cdi_device_ids=["x/y=z"]
    )
    reply = pb.NodePrepareResourcesResponse(claims={UID: pb.NodePrepareResourceResponse(devices=[device])})
    up, down = hpack.Encoder(), hpack.Encoder()
    blocks, ins, outs = [], [h2.PREFACE + _frame(h2.SETTINGS, 0, 0, b"")], [_frame(h2.SETTINGS, 0, 0, b"")]
    for i in range(calls):
        stream = 2 * i + 1
        block = up.encode(
            [
                (":method", "POST"),
                (":scheme", "http"),
                (":path", PREPARE),
                (":authority", "localhost"),
                ("te", "trailers"),
                ("content-type", "application/grpc"),
                ("user-agent", "grpc-python/1.76.0 grpc-c/51.0.0 (linux; chttp2)"),
                ("grpc-timeout", f"{9_999_000 - i}u"),
            ]
        )
        blocks.append(block)
        ins.append(
            _frame(h2.HEADERS, h2.END_HEADERS, stream, block)
            + _frame(h2.DATA, h2.END_STREAM, stream, _message(request.SerializeToString()))
            + _window(0)
            + _window(stream)
        )
        headers = down.encode([(":status", "200"), ("content-type", "application/grpc")])
        trailers = down.encode([("grpc-status", "0")])
        outs.append(
            _frame(h2.HEADERS, h2.END_HEADERS, stream, headers)
            + _frame(h2.DATA, 0, stream, _message(reply.SerializeToString()))
            + _frame(h2.HEADERS, h2.END_HEADERS | h2.END_STREAM, stream, trailers)
            + _window(0)
        )
    return blocks, ins, outs


def _per_call(run: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) / calls * 1e6


def _read(ins: list[bytes], outs: list[bytes], *, forms: bool) -> None:
    def on_request(call: h2.Call, request: bytes) -> None:
        if forms:
            call.note = wire.request_form(call.path, request)

    def on_end(call: h2.Call) -> None:
        if forms and call.replies:
            wire.reply_form(call.path, call.replies[0])

    conn = h2.H2Connection(on_end, None, on_request)
    conn.client_bytes(ins[0])
    conn.server_bytes(outs[0])
    for request, reply in zip(ins[1:], outs[1:], strict=True):
        conn.client_bytes(request)
        conn.server_bytes(reply)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--quick", action="store_true", help="a few hundred calls (the smoke test)")
    args = parser.parse_args(argv)
    calls = 200 if args.quick else args.calls
    progress(f"splice_reader: {machine()}; {calls} calls, three rounds")
    blocks, ins, outs = exchange(calls)
    for round_ in range(1, 4):
        theirs = hpack.Decoder()
        ours = HpackReader(h2.MAX_TABLE_SIZE, h2.MAX_HEADER_LIST)
        result(
            "splice_reader_hpack",
            round=round_,
            hpack_decoder_us=_per_call(lambda d=theirs: [d.decode(b, raw=True) for b in blocks], calls),
            lean_decoder_us=_per_call(lambda d=ours: [d.decode(b) for b in blocks], calls),
        )
        result(
            "splice_reader_call",
            round=round_,
            frames_us=_per_call(lambda: _read(ins, outs, forms=False), calls),
            frames_and_journal_forms_us=_per_call(lambda: _read(ins, outs, forms=True), calls),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
