"""Scale: many pods with one claim each on one node, and the checkpoint's write cost.

Part 1 (``pods``): for each N, a fresh node (in-memory API server, in-process
FakeDriver on a unix socket, PluginHost, Manager with a FileCheckpointStore) gets N
allocated claims, each reserved for its own pod; then every pod is prepared, one
after the other, and then every pod is unprepared. Reported: wall time of each
phase (a pass without tracemalloc), per-pod time, and (``pods_memory``) the peak
of Python allocations during each phase (a second, slower pass under
tracemalloc; memory held by gRPC's C core is not traced). The kubelet rewrites its checkpoint 2x per prepare
and 1x per unprepare (as upstream), so the bytes written grow with N^2 by design; the
fake driver writes one small file per prepared claim. ``driver_state_bytes_full`` is the
total size of the driver's state directory at the peak.

Part 2 (``checkpoint``): FileCheckpointStore.store() with E entries already in the
file, for growing E: bytes per write, time per write (median), the share of
encoding (``encode_ms``) versus the rest of store() (``rest_ms``: the atomic write
-- temp file, rename, and with ``--fsync`` an fsync of the file and its directory),
and microseconds per entry. Linear per write means time/entry stays flat as E grows.

Without ``--fsync`` every write is what a scenario run does (atomic, not fsynced);
with it, what a real node does. Scenario runs journal every call, and so does this.

Usage::

    python benchmarks/scale.py [--pods 1,10,100,1000] [--entries 0,1,10,100,1000,2000,5000]
                               [--writes 20] [--state-dir DIR] [--fsync] [--only pods|checkpoint]
                               [--no-memory] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchlib import DRIVER, Node, machine, pod_manifest, result, short_dir
from progress import progress

from drasim.checkpoint import codec
from drasim.checkpoint.incremental import IncrementalEncoder
from drasim.checkpoint.store import DRA_MANAGER_STATE_FILE, FileCheckpointStore
from drasim.runner.workspace import default_base
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device


def _pods(count: int) -> list[dict[str, object]]:
    return [pod_manifest(f"pod-{i}", f"pod-uid-{i}", [f"claim-{i}"]) for i in range(count)]


def _node(count: int, state_dir: str | None, fsync: bool) -> Node:
    node = Node(checkpoint="file", devices=max(count, 1), state_dir=state_dir, fsync=fsync).start()
    for i in range(count):
        node.add_claim(f"claim-{i}", [f"pod-uid-{i}"], device=f"gpu-{i}")
    return node


def _tree_bytes(directory: Path) -> int:
    """The bytes of every file under ``directory`` (the fake driver's one-file-per-claim state)."""
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def _status_kib(field: str) -> int | None:
    """A ``/proc/self/status`` memory field (``VmRSS``, ``VmHWM``) in KiB; None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak_rss() -> bool:
    """Make VmHWM restart from the current RSS (Linux: ``5`` to ``/proc/self/clear_refs``)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")
    except OSError:
        return False
    return True


@dataclass
class Phase:
    """One timed phase: wall and CPU seconds, peak traced bytes, peak RSS growth (KiB, or -1)."""

    wall_s: float
    cpu_s: float
    traced_peak: int
    rss_peak_kib: int


def _phase(body: Callable[[], None], *, trace: bool) -> Phase:
    """Run one phase: wall time, CPU time of the whole process (every thread), peak memory.

    CPU time next to wall time shows how much of a run the machine's other load took:
    on an idle machine wall >= CPU / threads running at once.
    """
    gc.collect()
    if trace:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
    rss_base = _status_kib("VmRSS") if _reset_peak_rss() else None
    cpu = time.process_time()
    start = time.perf_counter()
    body()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    peak = 0
    if trace:
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
    hwm = _status_kib("VmHWM")
    rss_peak = -1 if rss_base is None or hwm is None else max(hwm - rss_base, 0)
    return Phase(elapsed, cpu, peak, rss_peak)


def run_pods(count: int, state_dir: str | None, *, trace: bool, fsync: bool) -> dict[str, Any]:
    node = _node(count, state_dir, fsync)
    try:
        manager = node.kubelet()
        pods = _pods(count)

        def prepare_all() -> None:
            for pod in pods:
                manager.prepare_resources(pod)

        def unprepare_all() -> None:
            for pod in pods:
                manager.unprepare_resources(pod)

        prepare = _phase(prepare_all, trace=trace)
        assert len(manager.claim_infos()) == count
        checkpoint_bytes = (node.state_root / DRA_MANAGER_STATE_FILE).stat().st_size
        driver_state_bytes = _tree_bytes(node.driver.config.state_directory)  # type: ignore[union-attr]
        unprepare = _phase(unprepare_all, trace=trace)
        assert manager.claim_infos() == []
        assert len(node.driver.calls_to("NodePrepareResources")) == count  # type: ignore[union-attr]
        return {
            "prepare": prepare,
            "unprepare": unprepare,
            "checkpoint_bytes": checkpoint_bytes,
            "driver_state_bytes": driver_state_bytes,
        }
    finally:
        node.stop()


#: The issue's targets (#13): prepare-all + unprepare-all of N pods within this many seconds.
TARGETS_S = {1000: 5.0, 10000: 60.0}


def bench_pods(
    sizes: list[int], state_dir: str | None, *, memory: bool, fsync: bool, repeat: int = 1
) -> None:
    for count in sizes:
        totals: list[tuple[float, float]] = []
        progress(f"scale: prepare and unprepare {count} pods" + (f", {repeat} runs" if repeat > 1 else ""))
        for _ in range(max(repeat, 1)):
            timed = _report_pods(count, state_dir, fsync=fsync)
            totals.append(timed)
        if repeat > 1:
            walls, cpus = [t[0] for t in totals], [t[1] for t in totals]
            target = TARGETS_S.get(count)
            wall = statistics.median(walls)
            result(
                "pods_median",
                pods=count,
                runs=len(walls),
                total_s=wall,
                cpu_s=statistics.median(cpus),
                min_total_s=min(walls),
                max_total_s=max(walls),
                target=f"<{target:g}s" if target else "-",
                met=("yes" if wall < target else "no") if target else "-",
            )
        if memory:
            progress(f"scale: {count} pods again under tracemalloc (slower)")
            traced = run_pods(count, state_dir, trace=True, fsync=fsync)
            result(
                "pods_memory",
                pods=count,
                prepare_peak_kib=traced["prepare"].traced_peak / 1024,
                prepare_peak_per_pod_kib=traced["prepare"].traced_peak / 1024 / count,
                unprepare_peak_kib=traced["unprepare"].traced_peak / 1024,
                traced_prepare_all_s=traced["prepare"].wall_s,
            )


def _report_pods(count: int, state_dir: str | None, *, fsync: bool) -> tuple[float, float]:
    """One timed run of ``count`` pods: print its lines, return (total wall s, total CPU s)."""
    timed = run_pods(count, state_dir, trace=False, fsync=fsync)
    prepare, unprepare = timed["prepare"], timed["unprepare"]
    total = prepare.wall_s + unprepare.wall_s
    target = TARGETS_S.get(count)
    result(
        "pods",
        pods=count,
        prepare_all_s=prepare.wall_s,
        prepare_per_pod_ms=prepare.wall_s / count * 1e3,
        unprepare_all_s=unprepare.wall_s,
        unprepare_per_pod_ms=unprepare.wall_s / count * 1e3,
        total_s=total,
        cpu_s=prepare.cpu_s + unprepare.cpu_s,
        target=f"<{target:g}s" if target else "-",
        met=("yes" if total < target else "no") if target else "-",
        checkpoint_bytes_full=int(timed["checkpoint_bytes"]),
        driver_state_bytes_full=int(timed["driver_state_bytes"]),
    )
    if prepare.rss_peak_kib >= 0:
        result(
            "pods_rss",
            pods=count,
            prepare_peak_rss_kib=prepare.rss_peak_kib,
            prepare_peak_rss_per_pod_kib=prepare.rss_peak_kib / count,
            unprepare_peak_rss_kib=unprepare.rss_peak_kib,
        )
    return total, prepare.cpu_s + unprepare.cpu_s


def entries(count: int) -> list[ClaimInfoState]:
    """``count`` claims shaped like the fake driver's: one device, one CDI ID, one pod."""
    out = []
    for i in range(count):
        device = Device("node-1", f"gpu-{i}", ("gpu",), (f"{DRIVER}/gpu=gpu-{i}",))
        out.append(
            ClaimInfoState(
                claim_uid=f"0b5f1c2e-0000-4000-8000-{i:012d}",
                claim_name=f"claim-{i}",
                namespace="default",
                pod_uids={f"9d4c3b2a-0000-4000-8000-{i:012d}"},
                driver_state={DRIVER: DriverState(devices=[device])},
            )
        )
    return out


def bench_checkpoint(sizes: list[int], writes: int, state_dir: str | None, *, fsync: bool) -> None:
    root = short_dir("drb-ckpt-", state_dir)
    try:
        store = FileCheckpointStore(Path(root) / DRA_MANAGER_STATE_FILE, fsync=fsync)
        for count in sizes:
            progress(f"scale: {writes} checkpoint writes of {count} entries")
            states = entries(count)
            store.store(states)  # the file already holds E entries, as in a running kubelet
            encode, total = [], []
            for _ in range(writes):
                start = time.perf_counter()
                blob = codec.encode(states)
                encode.append(time.perf_counter() - start)
                start = time.perf_counter()
                store.store(states)
                total.append(time.perf_counter() - start)
            write_s = statistics.median(total)
            encode_s = statistics.median(encode)
            result(
                "checkpoint_write",
                entries=count,
                bytes=len(blob),
                write_ms=write_s * 1e3,
                encode_ms=encode_s * 1e3,
                rest_ms=max(write_s - encode_s, 0.0) * 1e3,
                us_per_entry=(write_s / count * 1e6) if count else 0.0,
                encode_us_per_entry=(encode_s / count * 1e6) if count else 0.0,
                bytes_per_entry=(len(blob) / count) if count else 0.0,
            )
            bench_incremental(store, states, writes)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def bench_incremental(store: FileCheckpointStore, states: list[ClaimInfoState], writes: int) -> None:
    """What the kubelet's writes cost: one entry changed, the other E-1 copied (store_changes)."""
    by_key = {state.key: state for state in states}
    owner = object()
    store.store_changes(owner, {}, lambda: list(by_key.values()))
    encoder = IncrementalEncoder()
    encoder.update(by_key.items())
    total, encode = [], []
    for i in range(writes):
        changes: dict[str, ClaimInfoState | None] = {}
        if states:
            state = states[(i * 7919) % len(states)].clone()
            state.pod_uids = {f"other-pod-{i}"}
            by_key[state.key] = changes[state.key] = state
        start = time.perf_counter()
        store.store_changes(owner, changes, lambda: list(by_key.values()))
        total.append(time.perf_counter() - start)
        start = time.perf_counter()
        encoder.update(changes.items())
        blob = encoder.encode()
        encode.append(time.perf_counter() - start)
    assert blob == codec.encode(list(by_key.values()))
    assert store.path.read_bytes() == blob
    write_s, encode_s = statistics.median(total), statistics.median(encode)
    result(
        "checkpoint_write_incremental",
        entries=len(states),
        bytes=len(blob),
        write_ms=write_s * 1e3,
        encode_ms=encode_s * 1e3,
        rest_ms=max(write_s - encode_s, 0.0) * 1e3,
        ns_per_byte=write_s / len(blob) * 1e9,
    )


def _sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", default="1,10,100,1000", help="comma-separated pod counts")
    parser.add_argument("--entries", default="0,1,10,100,1000,2000,5000", help="checkpoint sizes to write")
    parser.add_argument("--writes", type=int, default=20, help="timed writes per checkpoint size")
    parser.add_argument(
        "--state-dir",
        default=str(default_base()),
        help="where checkpoint/CDI/driver-state files go (default: as scenario runs, /dev/shm when usable)",
    )
    parser.add_argument("--fsync", action="store_true", help="fsync every file write, as a real node")
    parser.add_argument("--only", choices=["pods", "checkpoint"], default=None, help="run one part")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc pass (it is slow)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="timed runs per pod count; with 2 or more, a pods_median line"
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for the smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.pods, args.entries, args.writes = "1,3", "0,1,10", 3
    print(f"# scale: {machine()}; state_dir={args.state_dir} fsync={args.fsync}")
    if args.only in (None, "pods"):
        bench_pods(
            _sizes(args.pods), args.state_dir, memory=not args.no_memory, fsync=args.fsync, repeat=args.repeat
        )
    if args.only in (None, "checkpoint"):
        bench_checkpoint(_sizes(args.entries), args.writes, args.state_dir, fsync=args.fsync)
    return 0


if __name__ == "__main__":
    sys.exit(main())
