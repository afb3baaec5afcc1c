"""Per-RPC overhead of the emulated kubelet against a bare grpcio unary call.

Measured in one process, one run, over the same kind of transport (a unix socket):

``bare``
    a trivial DRA v1 servicer (generated stubs, no work) called with one claim;
    a "bare cycle" is NodePrepareResources + NodeUnprepareResources, two unary calls.
``kubelet-core``
    Manager.prepare_resources + unprepare_resources of one pod with one claim,
    with an in-memory driver client (no gRPC): the emulated kubelet's own logic.
``harness``
    the same trivial servicer, reached the way a scenario run reaches a driver:
    registered through the plugins_registry directory, Manager -> PluginHost's gRPC
    client -> unix socket, the claim read from the in-memory API server, the kubelet
    checkpoint written three times per cycle by a FileCheckpointStore (without fsync,
    as in scenario runs; ``--fsync`` adds it), every call journaled and metered.
    The headline ``harness cycle / bare cycle`` (target <= 1.5) is what drasim adds to
    the two gRPC calls a driver under test would answer anyway.
``driver``
    the two calls made with raw stubs straight to the in-process FakeDriver (its
    claim lookup, CDI spec file and own state file): the fake driver's own cost.
``full``
    harness + FakeDriver: what one prepare/unprepare of a scenario step costs.

Durations are medians. The bodies compared take turns in blocks of four runs, the first of
each block not timed, so each is timed right after a run of itself, warm (``measure_blocks``).
Two more lines give the harness/bare ratio in other arrangements: ``cold``, the bare pair and
the harness cycle alternating, each timed right after the other; ``rotation``, the strict
turns of the earlier rounds (call, pair, harness), where the pair is warm after the call and
the harness cold after the pair (docs/performance.md, "round 5: the benchmark's arrangement").
``--profile`` adds a cProfile of the harness cycle (``--profile full``:
of the full cycle), sorted by each function's own time; ``--breakdown`` times the parts of the
harness cycle with wrappers (no profiler), the clearest view of what the harness adds;
``--opcodes`` counts the Python bytecode instructions of a bare and a harness cycle, an exact
figure that does not move with the machine's load (but leaves out C code and other threads);
``--threads`` prints the wall time and every thread's CPU time per bare and harness cycle (Linux);
``--cpu`` prints drasim's own CPU time per harness cycle with the two gRPC calls answered in-process
(``drasim_cpu_no_network``, thread CPU time: steadier than wall time on a loaded machine).
Files go where scenario runs put them (/dev/shm when usable, else /tmp);
``--state-dir /tmp`` puts every checkpoint, CDI and driver-state file on that disk instead.

Usage::

    python benchmarks/rpc_overhead.py [--iterations 2000] [--checkpoint file|memory] [--fsync]
                                       [--state-dir DIR] [--profile [harness|full]] [--breakdown]
                                       [--opcodes] [--threads] [--cpu] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import statistics
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from benchlib import (
    DRIVER,
    NAMESPACE,
    MemoryCheckpoint,
    Node,
    Stats,
    TrivialServicer,
    claim_manifest,
    machine,
    measure,
    measure_blocks,
    measure_interleaved,
    pod_manifest,
    result,
)
from progress import progress

from drasim._proto.dra.v1 import api_pb2 as pb
from drasim._proto.dra.v1 import api_pb2_grpc as pb_grpc
from drasim.apiserver import MemoryCluster, ObjectStore
from drasim.clock import RealClock
from drasim.interfaces import DriverClient, NullRecorder
from drasim.kubelet.manager import Manager
from drasim.runner.workspace import default_base
from drasim.values import ClaimRef, Device, PrepareResult, UnprepareResult

CLAIM = "gpu"
POD_UID = "pod-uid-1"


@contextlib.contextmanager
def raw_stubs(node: Node, claim_uid: str) -> Iterator[tuple[Callable[[], object], Callable[[], object]]]:
    """(one NodePrepareResources, a prepare+unprepare pair) with raw stubs to ``node``'s driver."""
    import grpc  # here, not at the top: benchlib quiets gRPC's INFO lines before grpc first loads

    channel = grpc.insecure_channel(f"unix:{node.endpoint}")
    stub = pb_grpc.DRAPluginStub(channel)  # type: ignore[no-untyped-call]
    claim = pb.Claim(namespace=NAMESPACE, uid=claim_uid, name=CLAIM)
    prepare = pb.NodePrepareResourcesRequest(claims=[claim])
    unprepare = pb.NodeUnprepareResourcesRequest(claims=[claim])

    def call() -> None:
        reply = stub.NodePrepareResources(prepare, timeout=10)
        assert not reply.claims[claim_uid].error, reply

    def cycle() -> None:
        call()
        stub.NodeUnprepareResources(unprepare, timeout=10)

    try:
        yield call, cycle
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


def kubelet_cycle(node: Node) -> Any:
    """prepare+unprepare of one pod through ``node``'s emulated kubelet."""
    manager = node.kubelet()
    pod = pod_manifest("pod-1", POD_UID, [CLAIM])

    def cycle() -> None:
        manager.prepare_resources(pod)
        manager.unprepare_resources(pod)

    return cycle


def profile(cycle: Any, iterations: int, top: int, name: str) -> None:
    """cProfile of a cycle: project functions (and grpc's wait) by cumulative time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(iterations):
        cycle()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(
        r"drasim/|fake_plugins/|copy\.py:128|_channel\.py.*_blocking", top
    )
    print(f"--- cProfile of {iterations} {name} cycles, by own time (times include profiling overhead) ---")
    lines = out.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    print("\n".join(line for line in lines[start:] if line.strip()))


#: (module, owner attribute or None, function, label) of the parts of a harness cycle timed by
#: ``--breakdown``; nested parts are listed under their parent (labels starting with "  ").
BREAKDOWN = (
    ("grpc._channel", "_UnaryUnaryMultiCallable", "__call__", "gRPC unary call (the bare cost)"),
    ("drasim.plugins.client", "GrpcDriverClient", "_call", "kubelet gRPC client, whole call"),
    ("drasim.plugins.client", "GrpcDriverClient", "_observe", "  journal + metrics of each call"),
    ("drasim.kubelet.claiminfo", "ClaimInfoCache", "sync_to_checkpoint", "checkpoint writes (3 per cycle)"),
    ("drasim.checkpoint.incremental", "IncrementalEncoder", "update", "  re-encode the changed entry"),
    ("drasim.checkpoint.incremental", "IncrementalEncoder", "encode_pieces", "  join + CRC-32"),
    ("drasim.checkpoint.store", "FileCheckpointStore", "_write_pieces", "  file replace + journal event"),
    ("drasim.kubelet.manager", "Manager", "_validate", "read + check the claim (API server)"),
    ("drasim.kubelet.manager", None, "pod_view", "parse the pod"),
    ("drasim.metrics", "Histogram", "observe", "metrics observations (all)"),
)


def breakdown(cycle: Any, iterations: int) -> None:
    """Time the parts of a harness cycle with wrappers (a few µs of overhead per wrapped call)."""
    import importlib
    import time

    spent: dict[str, float] = dict.fromkeys([label for *_, label in BREAKDOWN], 0.0)
    restore = []
    for module_name, owner_name, function, label in BREAKDOWN:
        owner = importlib.import_module(module_name)
        if owner_name is not None:
            owner = getattr(owner, owner_name)
        original = getattr(owner, function)

        def timed(*args: Any, _original: Any = original, _label: str = label, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_label] += time.perf_counter() - start

        setattr(owner, function, timed)
        restore.append((owner, function, original))
    try:
        start = time.perf_counter()
        for _ in range(iterations):
            cycle()
        total = time.perf_counter() - start
    finally:
        for owner, function, original in restore:
            setattr(owner, function, original)
    print(f"--- where a harness cycle's time goes (mean of {iterations} cycles, wrappers included) ---")
    print(f"{total / iterations * 1e6:9.1f} us  whole cycle")
    for label, seconds in spent.items():
        print(f"{seconds / iterations * 1e6:9.1f} us  {label}")


def opcodes(cycles: Mapping[str, Callable[[], object]], iterations: int) -> None:
    """Python bytecode instructions each cycle executes in the calling thread, by module.

    Unlike durations this does not depend on the machine's load (the count is exact), so it
    compares code versions on a shared machine; it leaves out time spent in C (protobuf,
    grpc's core, dict copies, system calls) and in other threads (the servicer's).
    """
    from collections import Counter

    counts: Counter[str] = Counter()

    def tracer(frame: Any, event: str, arg: Any) -> Any:  # noqa: ARG001 - sys.settrace signature
        frame.f_trace_opcodes = True
        name = frame.f_code.co_filename
        group = "drasim/" + name.split("/drasim/", 1)[1] if "/drasim/" in name else name
        group = group.rsplit("/", 1)[0] if group.startswith("drasim/") and group.count("/") > 1 else group
        if "/grpc/" in group:
            group = "grpc"
        elif not group.startswith("drasim/"):
            group = "other: " + group.rsplit("/", 1)[-1]

        def local(frame: Any, event: str, arg: Any) -> Any:  # noqa: ARG001
            if event == "opcode":
                counts[group] += 1
            return local

        return local

    print(f"--- Python bytecode instructions per cycle (calling thread, mean of {iterations} cycles) ---")
    for label, cycle in cycles.items():
        counts.clear()
        sys.settrace(tracer)
        try:
            for _ in range(iterations):
                cycle()
        finally:
            sys.settrace(None)
        total = sum(counts.values()) / iterations
        print(f"{total:9.0f}  {label}")
        if len(cycles) > 1 and label != next(iter(cycles)):
            for group, count in counts.most_common():
                print(f"{count / iterations:9.0f}    {group}")


def _thread_cpu() -> dict[int, tuple[str, float]]:
    """CPU seconds (user + system) of every thread of this process, by native id (Linux /proc)."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, tuple[str, float]] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        comm = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        out[int(tid)] = (comm, (int(fields[11]) + int(fields[12])) / tick)
    return out


def threads(cycles: Mapping[str, Callable[[], object]], iterations: int) -> None:
    """Wall time and the CPU time of each thread per cycle (Linux only).

    Shows where the harness's extra time goes beyond its own Python work: the kubelet's
    calling thread's CPU, and the servicer's threads (grpc's ``_serve`` poller, the
    handler pool, the C core's ``event_engine``) that share the interpreter's GIL with it.
    """
    import os
    import threading
    import time

    if not os.path.isdir("/proc/self/task"):
        print("--- per-thread CPU: needs Linux /proc, skipped ---")
        return
    print(f"--- CPU per cycle by thread (mean of {iterations} cycles; 10 ms ticks, so rough) ---")
    rounds = 10  # the cycles take turns in rounds, so load that drifts hits both alike
    per_round = max(iterations // rounds, 1)
    walls = dict.fromkeys(cycles, 0.0)
    spent: dict[str, dict[str, float]] = {label: {} for label in cycles}
    for _ in range(rounds):
        for label, cycle in cycles.items():
            names = {t.native_id: t.name for t in threading.enumerate()}
            before = _thread_cpu()
            start = time.perf_counter()
            for _ in range(per_round):
                cycle()
            walls[label] += time.perf_counter() - start
            for tid, (comm, seconds) in _thread_cpu().items():
                name = f"{names.get(tid, comm)} [{tid}]"
                used = seconds - before.get(tid, ("", 0.0))[1]
                spent[label][name] = spent[label].get(name, 0.0) + used
    total = rounds * per_round
    for label in cycles:
        print(f"{walls[label] / total * 1e6:9.1f} us  {label}: wall")
        for name, seconds in sorted(spent[label].items(), key=lambda item: -item[1]):
            if seconds > 0:
                print(f"{seconds / total * 1e6:9.1f} us    CPU of {name}")


def no_network_cpu(node: Node, iterations: int) -> None:
    """drasim's own CPU per harness cycle: the calling thread's CPU time with the kubelet's two
    gRPC calls answered in-process by the trivial servicer (parse, answer, serialize; no
    channel, no socket, no other thread), less what those answers cost alone.

    CPU time of one thread moves much less with the machine's load than wall time; the rounds'
    median is printed, with the user/system split of the whole run (Linux).
    """
    import resource
    import time

    client: Any = node.host.manager.get_plugin(DRIVER)
    callables = getattr(client, "_callables", None)
    if not isinstance(callables, dict) or len(callables) < 2:
        print("--- no-network CPU: the kubelet's gRPC client has not made both calls, skipped ---")
        return
    servicer = TrivialServicer()
    messages = {
        "NodePrepareResources": (pb.NodePrepareResourcesRequest, servicer.NodePrepareResources),
        "NodeUnprepareResources": (pb.NodeUnprepareResourcesRequest, servicer.NodeUnprepareResources),
    }
    requests: dict[str, bytes] = {}

    def answering(method: str) -> Callable[..., bytes]:
        parse, answer = messages[method]

        def call(request: bytes, timeout: float | None = None) -> bytes:  # noqa: ARG001 - grpc's signature
            requests[method] = request
            return bytes(answer(parse.FromString(request), None).SerializeToString())

        return call

    saved = dict(callables)
    for method, (path, _) in saved.items():
        callables[method] = (path, answering(method))
    cycle = kubelet_cycle(node)
    rounds, per_round = 7, max(iterations, 1)
    who = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)
    try:
        for _ in range(max(per_round // 10, 1)):
            cycle()
        answers = [answering(method) for method in messages]
        pairs = [(answer, requests[method]) for answer, method in zip(answers, messages, strict=True)]
        spent: list[float] = []
        alone: list[float] = []
        before = resource.getrusage(who)
        for _ in range(rounds):
            start = time.thread_time()
            for _ in range(per_round):
                cycle()
            spent.append((time.thread_time() - start) / per_round)
            start = time.thread_time()
            for _ in range(per_round):
                for answer, request in pairs:
                    answer(request)
            alone.append((time.thread_time() - start) / per_round)
        after = resource.getrusage(who)
    finally:
        callables.update(saved)
    answer_cost = statistics.median(alone)
    own = sorted(cycle_cpu - answer_cost for cycle_cpu in spent)
    share = (after.ru_utime - before.ru_utime) / max(
        (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1e-9
    )
    result(
        "drasim_cpu_no_network",
        n=rounds * per_round,
        median_us=statistics.median(own) * 1e6,
        min_us=own[0] * 1e6,
        user_share=share,
        servicer_answers_us=answer_cost * 1e6,
    )


def diagnose(args: argparse.Namespace, node: Node, uid: str) -> None:
    """Optional views of the harness cycle: --profile harness, --breakdown, --opcodes, --threads, --cpu."""
    n = args.iterations
    if args.profile == "harness":
        profile(kubelet_cycle(node), max(n // 4, 10), 30, "harness")
    if args.breakdown:
        breakdown(kubelet_cycle(node), max(n // 2, 10))
    if args.opcodes:
        with raw_stubs(node, uid) as (_, pair):
            opcodes({"bare cycle": pair, "harness cycle": kubelet_cycle(node)}, min(n, 50))
    if args.threads:
        with raw_stubs(node, uid) as (_, pair):
            threads({"bare cycle": pair, "harness cycle": kubelet_cycle(node)}, n)
    if args.cpu:
        no_network_cpu(node, n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000, help="timed cycles per measurement")
    parser.add_argument("--warmup", type=int, default=200, help="untimed cycles first")
    parser.add_argument(
        "--checkpoint", choices=["file", "memory"], default="file", help="kubelet checkpoint store"
    )
    parser.add_argument("--fsync", action="store_true", help="fsync every checkpoint/driver file write")
    parser.add_argument(
        "--state-dir",
        default=str(default_base()),
        help="where checkpoint/CDI/driver-state files go (default: where scenario runs put them, "
        "/dev/shm when usable, else /tmp)",
    )
    parser.add_argument(
        "--profile",
        nargs="?",
        const="harness",
        choices=["harness", "full"],
        default=None,
        help="print a cProfile of the harness cycle (default) or of the full cycle",
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="time the parts of the harness cycle (wrappers, no profiler)"
    )
    parser.add_argument(
        "--opcodes",
        action="store_true",
        help="count the Python bytecode instructions of a bare and a harness cycle (load-independent)",
    )
    parser.add_argument(
        "--threads",
        action="store_true",
        help="wall time and CPU time of every thread per bare and harness cycle (Linux)",
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="drasim's own CPU per harness cycle, the gRPC calls answered in-process (7 rounds of "
        "--iterations cycles; thread CPU time, load-stable)",
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for the smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.iterations, args.warmup = 20, 5
    print(
        f"# rpc_overhead: {machine()}; checkpoint={args.checkpoint} fsync={args.fsync} "
        f"state_dir={args.state_dir}"
    )
    n, w = args.iterations, args.warmup
    node_args = {"checkpoint": args.checkpoint, "state_dir": args.state_dir, "fsync": args.fsync}

    # The measurements that are compared take turns (in blocks, each timed run after a run of
    # the same body), so they see the same machine load.
    progress(f"rpc_overhead: bare gRPC call, bare cycle and harness cycle, {n} cycles each")
    with Node(driver="trivial", **node_args) as trivial:
        trivial.add_claim(CLAIM, [POD_UID])
        uid = trivial.cluster.get_resource_claim(NAMESPACE, CLAIM)["metadata"]["uid"]
        harness_body = kubelet_cycle(trivial)
        with raw_stubs(trivial, uid) as (call, pair):
            bare_call, bare_cycle, harness = measure_blocks([call, pair, harness_body], n, w)
            result("bare_unary_call", **bare_call.fields())
            result("bare_cycle", **bare_cycle.fields())
            result("harness_cycle", **harness.fields())
            # Two more arrangements, printed for comparison: both bodies right after the other
            # one (cold: what each pays when it starts after other work), and the strict
            # rotation of rounds 1-4 (call, pair, harness: the pair warm after the call, its own
            # first half, the harness cold after the pair).
            progress(f"rpc_overhead: bare cycle and harness cycle alternating, {n} cycles each")
            cold_bare, cold_harness = measure_interleaved([pair, harness_body], n, w)
            progress(f"rpc_overhead: the three in strict rotation, {n} cycles each")
            _, rotation_bare, rotation_harness = measure_interleaved([call, pair, harness_body], n, w)
        for name, bare, harness_ in (
            ("cold", cold_bare, cold_harness),
            ("rotation", rotation_bare, rotation_harness),
        ):
            result(
                name,
                bare_cycle_median_us=bare.median * 1e6,
                harness_cycle_median_us=harness_.median * 1e6,
                harness_over_bare_cycle=harness_.median / bare.median,
            )
        diagnose(args, trivial, uid)

    progress(f"rpc_overhead: kubelet core alone, {n} cycles")
    kubelet_core = bench_kubelet_core(n, w)
    result("kubelet_core_cycle", **kubelet_core.fields())

    progress(f"rpc_overhead: fake driver raw and through the kubelet, {n} cycles each")
    with Node(driver="fake", **node_args) as node:
        node.add_claim(CLAIM, [POD_UID])
        uid = node.cluster.get_resource_claim(NAMESPACE, CLAIM)["metadata"]["uid"]
        cycle = kubelet_cycle(node)
        with raw_stubs(node, uid) as (_, pair):
            driver, full = measure_blocks([pair, cycle], n, w)
        result("driver_cycle_raw_stubs", **driver.fields())
        result("full_cycle", **full.fields())
        result(
            "ratio",
            harness_over_bare_cycle=harness.median / bare_cycle.median,
            overhead_over_bare_cycle=(harness.median - bare_cycle.median) / bare_cycle.median,
            full_over_driver_cycle=full.median / driver.median,
            full_over_bare_cycle=full.median / bare_cycle.median,
            kubelet_added_us=(harness.median - bare_cycle.median) * 1e6,
            target="<=1.5",
        )
        if args.profile == "full":
            progress("rpc_overhead: profiling the full cycle")
            profile(cycle, max(n // 4, 10), 30, "full")
    return 0


if __name__ == "__main__":
    sys.exit(main())
