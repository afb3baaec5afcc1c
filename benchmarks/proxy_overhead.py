"""What drasim's proxy (drasim/proxy/) adds to one plugin call.

A trivial DRA v1 driver (benchlib.TrivialDriver: one fixed device per claim, no I/O) runs in a
child process, as a real driver does. This process calls NodePrepareResources with one claim
over a bare grpcio channel, as the kubelet's client does, taking turns (benchlib.measure_blocks):

- ``direct``: to the driver's own DRA socket;
- ``spliced``: to the proxy's DRA socket (registered through the proxy's registration socket)
  served by the splice (drasim/proxy/splice.py: bytes copied unchanged, the HTTP/2 frames read
  on the side), journaling into a drasim Journal: the proxy's path when no fault rule is set;
- ``spliced_unrecorded``: the same without a recorder (copying and reading the frames alone);
- ``proxied``: the same through the grpcio path (drasim/proxy/forward.py: a grpcio server that
  forwards each call over a grpcio channel), the proxy's path when fault rules are set;
- ``proxied_unrecorded``: the grpcio path without a recorder (the forwarding alone);
- ``bare_hop``: a minimal forwarder (a grpcio generic handler that passes the bytes on and
  nothing else), the floor of any proxy built on grpcio.

The overhead is the difference of the medians. The proxy runs in this process, as it does in a
``drasim run --driver-cmd`` (next to the emulated kubelet).

``--breakdown`` measures where the splice's time goes instead, adding one piece at a time:
copying alone, reading the HTTP/2 frames and HPACK blocks (the journal callbacks doing
nothing), the journal forms of request and reply (no journal), and the journal event (all).

    python benchmarks/proxy_overhead.py [--iterations N] [--quick] [--breakdown]
"""

from __future__ import annotations

import os

os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # before grpc is imported (as benchlib does)

import argparse
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent import futures
from pathlib import Path

import grpc
from benchlib import DRIVER, machine, measure_blocks, result, short_dir
from progress import progress

from drasim._proto.dra.v1 import api_pb2 as pb
from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim._proto.pluginregistration.v1 import api_pb2_grpc as reg_grpc
from drasim.journal import Journal
from drasim.proxy import Proxy, ProxyConfig
from drasim.proxy.h2 import Call
from drasim.proxy.splice import Splicer

PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
CHILD = """
import sys, threading
sys.path.insert(0, {bench!r})
from pathlib import Path
from benchlib import TrivialDriver
driver = TrivialDriver(Path({root!r}))
driver.start()
print("ready", flush=True)
sys.stdin.read()
driver.stop()
"""


def _until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the driver or the proxy did not come up")
        tick.wait(0.01)


def _caller(endpoint: str) -> tuple[grpc.Channel, Callable[[], object]]:
    channel = grpc.insecure_channel(f"unix:{endpoint}", options=[("grpc.use_local_subchannel_pool", 1)])
    call = channel.unary_unary(PREPARE, request_serializer=None, response_deserializer=None)
    request = pb.NodePrepareResourcesRequest(
        claims=[pb.Claim(namespace="default", name="gpu", uid="6c1bd1a1-7f1c-4e5e-9d8e-000000000001")]
    ).SerializeToString()
    return channel, lambda: call(request, timeout=10)


class _BareHop(grpc.GenericRpcHandler):  # type: ignore[type-arg]
    def __init__(self, upstream: str) -> None:
        self.channel = grpc.insecure_channel(f"unix:{upstream}")
        self.call = self.channel.unary_unary(PREPARE, request_serializer=None, response_deserializer=None)

    def service(self, _details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[bytes, bytes]:
        return grpc.unary_unary_rpc_method_handler(
            lambda req, ctx: self.call(req, timeout=ctx.time_remaining())
        )


def _bare_hop(root: Path) -> tuple[grpc.Server, str]:
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=8), handlers=[_BareHop(str(root / "plug" / "dra.sock"))]
    )
    endpoint = str(root / "hop.sock")
    server.add_insecure_port(f"unix:{endpoint}")
    server.start()
    return server, endpoint


def _proxy(root: Path, name: str, recorder: Journal | None, *, splice: bool) -> tuple[Proxy, str]:
    proxy = Proxy(
        ProxyConfig(
            registry_dir=root / name / "registry",
            driver_registry_dir=root / "reg",
            socket_dir=root / name / "sock",
            recorder=recorder,
            side="plugin",
            splice=splice,
        )
    ).start()
    [socket] = proxy.registration_sockets()
    with grpc.insecure_channel(f"unix:{socket}") as channel:
        info = reg_grpc.RegistrationStub(channel).GetInfo(reg_pb.InfoRequest(), timeout=10)  # type: ignore[no-untyped-call]
    return proxy, str(info.endpoint)


class _FramesOnly(Splicer):
    """A splice that reads the frames and does nothing with the calls (``--breakdown``)."""

    def journal_end(self, call: Call) -> None:  # noqa: ARG002 - nothing journaled
        return None

    def journal_request(self, call: Call, request: bytes) -> None:  # noqa: ARG002
        return None

    def journal_reply(self, call: Call, reply: bytes) -> None:  # noqa: ARG002
        return None


def _breakdown(root: Path, iterations: int, proxies: list[Proxy], channels: list[grpc.Channel]) -> None:
    """The splice's cost piece by piece (see the module docstring)."""
    copy, copy_endpoint = _proxy(root, "b1", None, splice=True)
    proxies.append(copy)
    frames, frames_endpoint = _proxy(root, "b2", None, splice=True)
    proxies.append(frames)
    frames.journaling = True  # read the frames although nothing records
    [splicer] = frames._endpoints.values()
    splicer.__class__ = _FramesOnly
    forms, forms_endpoint = _proxy(root, "b3", None, splice=True)
    proxies.append(forms)
    forms.journaling = True
    full, full_endpoint = _proxy(root, "b4", Journal(), splice=True)
    proxies.append(full)
    bodies = []
    for endpoint in (
        str(root / "plug" / "dra.sock"),
        copy_endpoint,
        frames_endpoint,
        forms_endpoint,
        full_endpoint,
    ):
        channel, body = _caller(endpoint)
        channels.append(channel)
        bodies.append(body)
    progress(f"proxy_overhead: {iterations} calls each, the splice piece by piece")
    direct, *steps = measure_blocks(bodies, iterations, warmup=max(20, iterations // 20))
    result("proxy_splice_breakdown_direct", **direct.fields())
    for name, stats in zip(("copy", "frames_read", "journal_forms", "journal_event"), steps, strict=True):
        result(f"proxy_splice_breakdown_{name}", over_direct_us=(stats.median - direct.median) * 1e6)


def _overhead(
    root: Path,
    iterations: int,
    proxies: list[Proxy],
    servers: list[grpc.Server],
    channels: list[grpc.Channel],
) -> None:
    """Direct, the splice and the grpcio path, journaled and not, and the minimal forwarder."""
    journal, splice_journal = Journal(), Journal()
    recorded, recorded_endpoint = _proxy(root, "p1", journal, splice=False)
    bare, bare_endpoint = _proxy(root, "p2", None, splice=False)
    spliced, spliced_endpoint = _proxy(root, "p3", splice_journal, splice=True)
    spliced_bare, spliced_bare_endpoint = _proxy(root, "p4", None, splice=True)
    proxies += [recorded, bare, spliced, spliced_bare]
    hop, hop_endpoint = _bare_hop(root)
    servers.append(hop)
    bodies = []
    endpoints = (
        str(root / "plug" / "dra.sock"),
        spliced_endpoint,
        spliced_bare_endpoint,
        recorded_endpoint,
        bare_endpoint,
        hop_endpoint,
    )
    for endpoint in endpoints:
        channel, body = _caller(endpoint)
        channels.append(channel)
        bodies.append(body)
    progress(f"proxy_overhead: {iterations} NodePrepareResources calls each, direct and through the proxy")
    direct, spliced_call, spliced_unrecorded, proxied, unrecorded, bare_hop = measure_blocks(
        bodies, iterations, warmup=max(20, iterations // 20)
    )
    result("proxy_direct_call", **direct.fields())
    result("proxy_spliced_call", **spliced_call.fields())
    result("proxy_spliced_unrecorded_call", **spliced_unrecorded.fields())
    result("proxy_proxied_call", **proxied.fields())
    result("proxy_proxied_unrecorded_call", **unrecorded.fields())
    result("proxy_bare_hop_call", **bare_hop.fields())
    result(
        "proxy_splice_overhead",
        recorded_us=(spliced_call.median - direct.median) * 1e6,
        unrecorded_us=(spliced_unrecorded.median - direct.median) * 1e6,
        journaled=len(splice_journal.events("rpc")),
        target_us=200,  # issue 30: the proxy adds no more than 0.2 ms per call
    )
    result(
        "proxy_overhead",
        recorded_us=(proxied.median - direct.median) * 1e6,
        unrecorded_us=(unrecorded.median - direct.median) * 1e6,
        bare_hop_us=(bare_hop.median - direct.median) * 1e6,
        journaled=len(journal.events("rpc")),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--iterations", type=int, default=3000)
    parser.add_argument("--quick", action="store_true", help="a few hundred calls (the smoke test)")
    parser.add_argument(
        "--breakdown", action="store_true", help="where the splice's time goes, piece by piece"
    )
    args = parser.parse_args(argv)
    iterations = 150 if args.quick else args.iterations
    root = short_dir("drasim-proxy-bench-")
    progress(f"proxy_overhead: {machine()}")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(bench=str(Path(__file__).parent), root=str(root))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    proxies: list[Proxy] = []
    servers: list[grpc.Server] = []
    channels: list[grpc.Channel] = []
    try:
        assert child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the trivial driver did not start")
        _until((root / "reg" / f"{DRIVER}-reg.sock").exists)
        if args.breakdown:
            _breakdown(root, iterations, proxies, channels)
        else:
            _overhead(root, iterations, proxies, servers, channels)
    finally:
        for channel in channels:
            channel.close()
        for proxy in proxies:
            proxy.stop()
        for server in servers:
            server.stop(None)
        if child.stdin is not None:
            child.stdin.close()
        child.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
