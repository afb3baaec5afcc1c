"""Shared pieces of the benchmarks: timing statistics, result lines, the emulated node.

``Node`` wires what a scenario run wires, minus the runner: an in-memory API server
(ObjectStore + MemoryCluster) holding allocated claims, an in-process FakeDriver (or a
trivial servicer) serving DRA v1 on a real unix socket, the kubelet side of the plugin
protocol (PluginHost: registration, gRPC client), the emulated kubelet DRA Manager with
a checkpoint store, and a journal and metrics that record every call. Every benchmark
prints ``RESULT name key=value ...`` lines that the smoke test and docs/performance.md
rely on.
"""

from __future__ import annotations

import os

os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # no INFO lines (GOAWAY at shutdown) in the output

import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from drasim._proto.dra.v1 import api_pb2 as pb
from drasim._proto.dra.v1 import api_pb2_grpc as pb_grpc
from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim._proto.pluginregistration.v1 import api_pb2_grpc as reg_grpc
from drasim.apiserver import MemoryCluster, ObjectStore
from drasim.checkpoint.store import DRA_MANAGER_STATE_FILE, FileCheckpointStore
from drasim.clock import RealClock
from drasim.interfaces import CheckpointStore, NullRecorder, Recorder
from drasim.journal import Journal
from drasim.kubelet.manager import Manager
from drasim.metrics import Metrics
from drasim.plugins import PluginHost
from drasim.state import ClaimInfoState
from fake_plugins import FakeDriver, FakeDriverConfig

DRIVER = "gpu.example.com"
NAMESPACE = "default"


def machine() -> str:
    """One line describing where the numbers were taken."""
    return (
        f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}"
    )


def result(name: str, **fields: Any) -> None:
    """Print one machine-readable result line."""
    parts = []
    for key, value in fields.items():
        parts.append(f"{key}={value:.6g}" if isinstance(value, float) else f"{key}={value}")
    print(f"RESULT {name} " + " ".join(parts), flush=True)


@dataclass(frozen=True)
class Stats:
    """Per-iteration wall times in seconds."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples)

    def pct(self, p: float) -> float:
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    def fields(self) -> dict[str, Any]:
        return {
            "n": len(self.samples),
            "median_us": self.median * 1e6,
            "mean_us": self.mean * 1e6,
            "p90_us": self.pct(0.9) * 1e6,
        }


def measure(body: Callable[[], object], iterations: int, warmup: int) -> Stats:
    """Time ``body`` ``iterations`` times after ``warmup`` untimed runs."""
    for _ in range(warmup):
        body()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        body()
        samples.append(time.perf_counter() - start)
    return Stats(tuple(samples))


def measure_interleaved(bodies: Sequence[Callable[[], object]], iterations: int, warmup: int) -> list[Stats]:
    """Time each of ``bodies`` ``iterations`` times, taking turns (a, b, a, b, ...).

    Load on a shared machine drifts over seconds; taking turns exposes every body to the
    same drift, so the ratio of their medians is stable where back-to-back runs are not.
    Every run is timed, each right after another body's (see :func:`measure_blocks`).
    """
    return measure_blocks(bodies, iterations, warmup, timed=1, untimed=0)


def measure_blocks(
    bodies: Sequence[Callable[[], object]], iterations: int, warmup: int, *, timed: int = 3, untimed: int = 1
) -> list[Stats]:
    """Time each of ``bodies`` ``iterations`` times, taking turns in short blocks (a a a a, b b b b, ...).

    Each block runs its body ``untimed`` times first, then times ``timed`` runs. With the
    default (one untimed, three timed) every timed run follows a run of the same body: each
    body is measured warm, as it runs when repeated, not straight after another body (which
    costs a body more the more Python it runs; docs/performance.md, "round 5: the benchmark's
    arrangement"). Blocks of a few milliseconds still expose every body to the same drift of
    the machine's load.
    """
    if timed < 1 or untimed < 0:
        msg = "a block needs at least one timed run (and no negative count of untimed ones)"
        raise ValueError(msg)
    for _ in range(warmup):
        for body in bodies:
            body()
    samples: list[list[float]] = [[] for _ in bodies]
    clock = time.perf_counter
    for _ in range(-(-iterations // timed)):
        for body, out in zip(bodies, samples, strict=True):
            for _ in range(untimed):
                body()
            for _ in range(timed):
                start = clock()
                body()
                out.append(clock() - start)
    return [Stats(tuple(s[:iterations])) for s in samples]


def short_dir(prefix: str, base: str | None = None) -> Path:
    """A fresh directory with a short path (unix socket paths are limited to 107 bytes)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base or "/tmp"))


class MemoryCheckpoint:
    """A CheckpointStore that keeps entries in memory (isolates the file store's cost)."""

    def __init__(self) -> None:
        self.entries: list[ClaimInfoState] = []
        self.writes = 0

    def get_or_create(self) -> list[ClaimInfoState]:
        return [e.clone() for e in self.entries]

    def store(self, entries: Sequence[ClaimInfoState]) -> None:
        self.entries = [e.clone() for e in entries]
        self.writes += 1


def claim_manifest(name: str, pod_uids: Sequence[str], device: str = "gpu-0") -> dict[str, Any]:
    """An allocated claim reserved for ``pod_uids``; the fake driver's pool is its node name."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": device}]
                }
            },
            "reservedFor": [{"resource": "pods", "name": f"pod-of-{name}", "uid": uid} for uid in pod_uids],
        },
    }


def pod_manifest(name: str, uid: str, claims: Sequence[str]) -> dict[str, Any]:
    """A pod whose only container uses ``claims``."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": uid},
        "spec": {
            "resourceClaims": [{"name": c, "resourceClaimName": c} for c in claims],
            "containers": [{"name": "main", "resources": {"claims": [{"name": c} for c in claims]}}],
        },
        "status": {},
    }


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


class TrivialRegistration(reg_grpc.RegistrationServicer):
    """The plugin registration service of a driver serving DRA v1 at ``endpoint``."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def GetInfo(self, request: Any, context: Any) -> Any:  # noqa: N802, ARG002 - gRPC signature
        return reg_pb.PluginInfo(
            type="DRAPlugin", name=DRIVER, endpoint=self.endpoint, supported_versions=["v1.DRAPlugin"]
        )

    def NotifyRegistrationStatus(self, request: Any, context: Any) -> Any:  # noqa: N802, ARG002
        return reg_pb.RegistrationStatusResponse()


class TrivialDriver:
    """The trivial DRA servicer plus registration, on the sockets a real driver would use."""

    def __init__(self, root: Path) -> None:
        (root / "reg").mkdir(exist_ok=True)
        (root / "plug").mkdir(exist_ok=True)
        self.endpoint = str(root / "plug" / "dra.sock")
        self.registration = str(root / "reg" / f"{DRIVER}-reg.sock")
        self._dra = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        pb_grpc.add_DRAPluginServicer_to_server(TrivialServicer(), self._dra)  # type: ignore[no-untyped-call]
        self._dra.add_insecure_port(f"unix:{self.endpoint}")
        self._reg = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
        reg_grpc.add_RegistrationServicer_to_server(TrivialRegistration(self.endpoint), self._reg)  # type: ignore[no-untyped-call]
        self._reg.add_insecure_port(f"unix:{self.registration}")

    def start(self) -> None:
        self._dra.start()
        self._reg.start()

    def stop(self) -> None:
        self._reg.stop(None).wait()
        self._dra.stop(None).wait()


class Node:
    """API server + driver + PluginHost + Manager, as a scenario run builds them.

    ``driver`` is ``"fake"`` (the in-process FakeDriver) or ``"trivial"`` (a servicer
    that does no work, reached through the same registration and gRPC path).
    ``checkpoint`` is ``"file"`` (the real FileCheckpointStore; with ``fsync`` each
    write is fsynced as on a real node, without it as in scenario runs) or ``"memory"``.
    ``state_dir`` is where the kubelet checkpoint, the driver's own state and its CDI
    specs go (e.g. /dev/shm to take the disk out). The kubelet and the fake driver
    journal and meter every call, as in a scenario run (``journal=False`` turns that off).
    """

    def __init__(
        self,
        *,
        checkpoint: str = "file",
        devices: int = 8,
        state_dir: str | None = None,
        fsync: bool = False,
        driver: str = "fake",
        journal: bool = True,
    ) -> None:
        self.root = short_dir("drb-")
        self.state_root = short_dir("drb-state-", state_dir) if state_dir else self.root
        self.recorder: Recorder = Journal() if journal else NullRecorder()
        # API calls are journaled, and the kubelet has a client of its own reading shared
        # copies of the claims, as in a scenario run (drasim.runner.backends).
        self.store = ObjectStore(recorder=self.recorder)
        self.cluster = MemoryCluster(self.store)
        self.kubelet_api = MemoryCluster(self.store, client="kubelet", shared_reads=True)
        self.metrics = Metrics() if journal else None
        config = FakeDriverConfig(
            driver_name=DRIVER,
            registry_dir=str(self.root / "reg"),
            plugin_dir=str(self.root / "plug"),
            cdi_dir=str(self.state_root / "cdi"),
            state_dir=str(self.state_root / "driver"),
            devices=devices,
            services=["v1.DRAPlugin"],
            fsync=fsync,
            max_devices=max(devices, 1),  # scale runs give every pod a device of its own
        )
        self.driver: FakeDriver | TrivialDriver
        if driver == "fake":
            self.driver = FakeDriver(
                config, claim_source=self.cluster.get_resource_claim, recorder=self.recorder
            )
        else:
            self.driver = TrivialDriver(self.root)
        self.host = PluginHost(
            self.root / "reg",
            clock=RealClock(),
            recorder=self.recorder,
            metrics=self.metrics,
            services=["v1.DRAPlugin"],
        )
        self.checkpoint: CheckpointStore
        if checkpoint == "file":
            self.checkpoint = FileCheckpointStore(
                self.state_root / DRA_MANAGER_STATE_FILE, recorder=self.recorder, fsync=fsync
            )
        else:
            self.checkpoint = MemoryCheckpoint()
        self.manager: Manager | None = None

    @property
    def endpoint(self) -> str:
        """The driver's DRA socket."""
        return str(self.driver.endpoint)

    def start(self) -> Node:
        self.driver.start()
        self.host.start()
        if not self.host.wait_registered(DRIVER, 10, connected=True):
            msg = "the driver did not register within 10 s"
            raise RuntimeError(msg)
        self.manager = Manager(
            claims=self.kubelet_api,
            drivers=self.host.manager,
            checkpoint=self.checkpoint,
            clock=RealClock(),
            recorder=self.recorder,
            metrics=self.metrics,
        )
        return self

    def kubelet(self) -> Manager:
        assert self.manager is not None, "call start() first"
        return self.manager

    def add_claim(self, name: str, pod_uids: Sequence[str], device: str = "gpu-0") -> None:
        self.cluster.create(claim_manifest(name, pod_uids, device))

    def stop(self) -> None:
        self.host.stop()
        self.driver.stop()
        shutil.rmtree(self.root, ignore_errors=True)
        if self.state_root != self.root:
            shutil.rmtree(self.state_root, ignore_errors=True)

    def __enter__(self) -> Node:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
