"""Per-RPC overhead of the emulated kubelet against a bare grpcio unary call.

Measured in one process, one run, over the same kind of transport (a unix socket):

``bare``
    a trivial DRA v1 servicer (generated stubs, no work) called with one claim;
    a "bare cycle" is NodePrepareResources + NodeUnprepareResources, two unary calls.
``driver``
    the same two calls made with raw stubs straight to the in-process FakeDriver
    (its claim lookup, CDI spec file and own state file included).
``kubelet-core``
    Manager.prepare_resources + unprepare_resources of one pod with one claim,
    with an in-memory driver client (no gRPC): the emulated kubelet's own logic.
``harness``
    the full path a scenario uses: Manager -> PluginHost's gRPC client -> unix
    socket -> FakeDriver, claims in the in-memory API server, kubelet checkpoint
    in a FileCheckpointStore (or in memory with ``--checkpoint memory``).

The headline is ``harness cycle / bare cycle`` (target <= 2). Durations are medians.
``--profile`` adds a cProfile of the harness cycle. ``--state-dir /dev/shm`` puts all
checkpoint, CDI and driver-state files on tmpfs to take fsync out of the picture.

Usage::

    python benchmarks/rpc_overhead.py [--iterations 2000] [--checkpoint file|memory]
                                       [--state-dir DIR] [--profile] [--quick]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import sys
from collections.abc import Mapping, Sequence
from concurrent import futures
from typing import Any

import grpc
from benchlib import (
    DRIVER,
    NAMESPACE,
    MemoryCheckpoint,
    Node,
    Stats,
    claim_manifest,
    machine,
    measure,
    pod_manifest,
    result,
    short_dir,
)

from drasim._proto.dra.v1 import api_pb2 as pb
from drasim._proto.dra.v1 import api_pb2_grpc as pb_grpc
from drasim.apiserver import MemoryCluster, ObjectStore
from drasim.clock import RealClock
from drasim.interfaces import DriverClient, NullRecorder
from drasim.kubelet.manager import Manager
from drasim.values import ClaimRef, Device, PrepareResult, UnprepareResult

CLAIM = "gpu"
POD_UID = "pod-uid-1"


class TrivialServicer(pb_grpc.DRAPluginServicer):
    """Answers every claim with one fixed device; no I/O, no state."""

    def NodePrepareResources(self, request: Any, context: Any) -> Any:  # noqa: N802, ARG002 - gRPC signature
        device = pb.Device(
            pool_name="node-1",
            device_name="gpu-0",
            request_names=["gpu"],
            cdi_device_ids=[f"{DRIVER}/gpu=gpu-0"],
        )
        return pb.NodePrepareResourcesResponse(
            claims={c.uid: pb.NodePrepareResourceResponse(devices=[device]) for c in request.claims}
        )

    def NodeUnprepareResources(self, request: Any, context: Any) -> Any:  # noqa: N802, ARG002 - gRPC signature
        return pb.NodeUnprepareResourcesResponse(
            claims={c.uid: pb.NodeUnprepareResourceResponse() for c in request.claims}
        )


def bench_bare(iterations: int, warmup: int) -> tuple[Stats, Stats]:
    """One unary call, and a prepare+unprepare pair, against the trivial servicer."""
    root = short_dir("drb-bare-")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb_grpc.add_DRAPluginServicer_to_server(TrivialServicer(), server)  # type: ignore[no-untyped-call]
    server.add_insecure_port(f"unix:{root}/dra.sock")
    server.start()
    channel = grpc.insecure_channel(f"unix:{root}/dra.sock")
    stub = pb_grpc.DRAPluginStub(channel)  # type: ignore[no-untyped-call]
    claim = pb.Claim(namespace=NAMESPACE, uid="uid-1", name=CLAIM)
    prepare = pb.NodePrepareResourcesRequest(claims=[claim])
    unprepare = pb.NodeUnprepareResourcesRequest(claims=[claim])
    try:
        call = measure(lambda: stub.NodePrepareResources(prepare, timeout=10), iterations, warmup)
        cycle = measure(
            lambda: (
                stub.NodePrepareResources(prepare, timeout=10),
                stub.NodeUnprepareResources(unprepare, timeout=10),
            ),
            iterations,
            warmup,
        )
    finally:
        channel.close()
        server.stop(None).wait()
        shutil.rmtree(root, ignore_errors=True)
    return call, cycle


def bench_driver(node: Node, iterations: int, warmup: int) -> Stats:
    """prepare+unprepare with raw stubs straight to the fake driver (no kubelet)."""
    claim_obj = node.cluster.get_resource_claim(NAMESPACE, CLAIM)
    claim = pb.Claim(namespace=NAMESPACE, uid=claim_obj["metadata"]["uid"], name=CLAIM)
    channel = grpc.insecure_channel(f"unix:{node.driver.endpoint}")
    stub = pb_grpc.DRAPluginStub(channel)  # type: ignore[no-untyped-call]
    prepare = pb.NodePrepareResourcesRequest(claims=[claim])
    unprepare = pb.NodeUnprepareResourcesRequest(claims=[claim])

    def cycle() -> None:
        reply = stub.NodePrepareResources(prepare, timeout=10)
        assert not reply.claims[claim.uid].error, reply
        stub.NodeUnprepareResources(unprepare, timeout=10)

    try:
        return measure(cycle, iterations, warmup)
    finally:
        channel.close()


class InMemoryDriver:
    """A DriverClient/DriverDirectory with no transport: isolates the Manager's own cost."""

    driver_name = DRIVER
    endpoint = "in-memory"

    def get_plugin(self, driver_name: str) -> DriverClient:  # noqa: ARG002 - one driver only
        return self

    def node_prepare_resources(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult | None]:
        device = Device("node-1", "gpu-0", ("gpu",), (f"{DRIVER}/gpu=gpu-0",))
        return {c.uid: PrepareResult(devices=(device,)) for c in claims}

    def node_unprepare_resources(self, claims: Sequence[ClaimRef]) -> Mapping[str, UnprepareResult | None]:
        return {c.uid: UnprepareResult() for c in claims}


def bench_kubelet_core(iterations: int, warmup: int) -> Stats:
    cluster = MemoryCluster(ObjectStore())
    cluster.create(claim_manifest(CLAIM, [POD_UID]))
    manager = Manager(
        claims=cluster,
        drivers=InMemoryDriver(),
        checkpoint=MemoryCheckpoint(),
        clock=RealClock(),
        recorder=NullRecorder(),
    )
    pod = pod_manifest("pod-1", POD_UID, [CLAIM])

    def cycle() -> None:
        manager.prepare_resources(pod)
        manager.unprepare_resources(pod)

    return measure(cycle, iterations, warmup)


def harness_cycle(node: Node) -> Any:
    manager = node.kubelet()
    pod = pod_manifest("pod-1", POD_UID, [CLAIM])

    def cycle() -> None:
        manager.prepare_resources(pod)
        manager.unprepare_resources(pod)

    return cycle


def profile(cycle: Any, iterations: int, top: int) -> None:
    """cProfile of the harness cycle: project functions (and grpc's wait) by cumulative time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(iterations):
        cycle()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(
        r"drasim/|fake_plugins/|copy\.py:128|_channel\.py.*_blocking", top
    )
    print(f"--- cProfile of {iterations} harness cycles (times include profiling overhead) ---")
    lines = out.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    print("\n".join(line for line in lines[start:] if line.strip()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000, help="timed cycles per measurement")
    parser.add_argument("--warmup", type=int, default=200, help="untimed cycles first")
    parser.add_argument(
        "--checkpoint", choices=["file", "memory"], default="file", help="kubelet checkpoint store"
    )
    parser.add_argument(
        "--state-dir", default=None, help="where checkpoint/CDI/driver-state files go (e.g. /dev/shm)"
    )
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the harness cycle")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for the smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.iterations, args.warmup = 20, 5
    print(f"# rpc_overhead: {machine()}; checkpoint={args.checkpoint} state_dir={args.state_dir or '/tmp'}")

    bare_call, bare_cycle = bench_bare(args.iterations, args.warmup)
    result("bare_unary_call", **bare_call.fields())
    result("bare_cycle", **bare_cycle.fields())

    with Node(checkpoint=args.checkpoint, state_dir=args.state_dir) as node:
        node.add_claim(CLAIM, [POD_UID])
        kubelet_core = bench_kubelet_core(args.iterations, args.warmup)
        result("kubelet_core_cycle", **kubelet_core.fields())
        driver = bench_driver(node, args.iterations, args.warmup)
        result("driver_cycle_raw_stubs", **driver.fields())
        cycle = harness_cycle(node)
        harness = measure(cycle, args.iterations, args.warmup)
        result("harness_cycle", **harness.fields())
        result(
            "ratio",
            harness_over_bare_cycle=harness.median / bare_cycle.median,
            harness_over_driver_cycle=harness.median / driver.median,
            kubelet_added_us=(harness.median - driver.median) * 1e6,
            target="<=2",
        )
        if args.profile:
            profile(cycle, max(args.iterations // 4, 10), 25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
