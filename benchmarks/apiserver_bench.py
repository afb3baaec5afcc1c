"""Benchmark the fake API server: GET claim latency and watch event throughput over real HTTP.

Usage::

    python benchmarks/apiserver_bench.py [--gets 2000] [--events 5000] [--kubernetes-client]

Prints one line per measurement. Nothing here asserts on time; record the numbers
in the README when they change.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from progress import progress

from drasim.apiserver import MemoryCluster, ObjectStore
from drasim.apiserver.http import HttpApiServer

CLAIM_PATH = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/gpu"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
DRIVER = "gpu.example.com"
RESULT = {"request": "gpu", "driver": DRIVER, "pool": "n", "device": "gpu-0"}


def seed(store: ObjectStore) -> None:
    MemoryCluster(store).create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
            },
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {"request": "gpu", "driver": "gpu.example.com", "pool": "n", "device": "gpu-0"}
                        ]
                    }
                }
            },
        }
    )


def report(name: str, samples: list[float]) -> None:
    samples.sort()
    pct = lambda p: samples[min(len(samples) - 1, int(p * len(samples)))] * 1e6  # noqa: E731
    print(
        f"{name:<34} n={len(samples):<6} mean={statistics.fmean(samples) * 1e6:8.1f}us "
        f"p50={pct(0.5):8.1f}us p90={pct(0.9):8.1f}us p99={pct(0.99):8.1f}us"
    )


def bench_memory_get(store: ObjectStore, count: int) -> None:
    cluster = MemoryCluster(store)
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        cluster.get_resource_claim("default", "gpu")
        samples.append(time.perf_counter() - start)
    report("GET claim (in-process)", samples)


def bench_http_get(server: HttpApiServer, count: int) -> None:
    conn = http.client.HTTPConnection(server.host, server.port)
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        conn.request("GET", CLAIM_PATH, headers={"Accept": "application/json", **server.auth_header})
        resp = conn.getresponse()
        json.loads(resp.read())
        samples.append(time.perf_counter() - start)
        assert resp.status == 200
    conn.close()
    report("GET claim (HTTP keep-alive)", samples)


def bench_kubernetes_client_get(server: HttpApiServer, count: int) -> None:
    from drasim.apiserver.kubeclient import KubeClientCluster

    with tempfile.TemporaryDirectory() as tmp:
        cluster = KubeClientCluster(server.write_kubeconfig(Path(tmp) / "kubeconfig"))
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        cluster.get_resource_claim("default", "gpu")
        samples.append(time.perf_counter() - start)
    report("GET claim (kubernetes client)", samples)


def bench_watch(server: HttpApiServer, count: int) -> None:
    store = server.store
    rtype = store.registry.resource("resource.k8s.io", "v1", "resourceslices")
    conn = http.client.HTTPConnection(server.host, server.port)
    conn.request(
        "GET", f"{SLICES}?watch=true&resourceVersion={store.resource_version}", headers=server.auth_header
    )
    resp = conn.getresponse()
    assert resp.status == 200

    def write() -> None:
        for i in range(count):
            store.create(
                rtype, "v1", {"metadata": {"name": f"s{i}"}, "spec": {"driver": "d", "nodeName": "n"}}
            )

    start = time.perf_counter()
    writer = threading.Thread(target=write)
    writer.start()
    received = 0
    while received < count:
        line = resp.readline()
        if line.strip():
            received += 1
    elapsed = time.perf_counter() - start
    writer.join()
    conn.close()
    rate = count / elapsed
    print(f"{'WATCH events (HTTP, 1 watcher)':<34} n={count:<6} {rate:10.0f} events/s ({elapsed:.2f}s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gets", type=int, default=2000, help="GET requests per measurement")
    parser.add_argument("--events", type=int, default=5000, help="watch events to stream")
    parser.add_argument(
        "--kubernetes-client", action="store_true", help="also time GETs via the kubernetes client"
    )
    args = parser.parse_args(argv)
    store = ObjectStore()
    seed(store)
    progress(f"apiserver: {args.gets} GETs in-process")
    bench_memory_get(store, args.gets)
    with HttpApiServer(store) as server:
        progress(f"apiserver: {args.gets} GETs over HTTP")
        bench_http_get(server, args.gets)
        if args.kubernetes_client:
            progress(f"apiserver: {args.gets} GETs through the kubernetes client")
            bench_kubernetes_client_get(server, args.gets)
        progress(f"apiserver: {args.events} watch events over HTTP")
        bench_watch(server, args.events)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
