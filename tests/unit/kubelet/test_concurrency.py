"""Many pods prepared and unprepared at once (upstream TestParallelPrepareUnprepareResources)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from drasim.kubelet.manager import OPERATIONS_DURATION

THREADS = 30


def run_all(fn, count=THREADS):
    barrier = threading.Barrier(count)

    def task(i):
        barrier.wait(timeout=10)
        return fn(i)

    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(task, i) for i in range(count)]
        return [f.result(timeout=30) for f in futures]


def test_parallel_prepare_unprepare_own_claims(harness, kit) -> None:
    for i in range(THREADS):
        harness.claims.add(kit.claim(f"claim-{i}", reserved_for=(f"uid-{i}",)))

    def lifecycle(i):
        pod = kit.pod(f"pod-{i}", f"uid-{i}", claims=[f"claim-{i}"])
        harness.manager.prepare_resources(pod)
        cdi = harness.manager.get_resources(pod, kit.CONTAINER)
        harness.manager.unprepare_resources(pod)
        return cdi

    results = run_all(lifecycle)
    assert results == [[f"test-driver/test=claim-claim-{i}-uid"] for i in range(THREADS)]
    assert harness.prepare_count() == THREADS
    assert harness.unprepare_count() == THREADS
    assert harness.manager.claim_infos() == []
    assert harness.checkpoint.entries == []
    for operation in ("PrepareResources", "UnprepareResources"):
        assert (
            harness.metrics.histogram_count(OPERATIONS_DURATION, operation_name=operation, is_error="false")
            == THREADS
        )
    assert harness.metrics.gauge("dra_resource_claims_in_use", driver_name="<any>") == 0


def test_parallel_pods_sharing_one_claim(harness, kit) -> None:
    uids = [f"uid-{i}" for i in range(THREADS)]
    harness.claims.add(kit.claim(reserved_for=uids))
    pods = [kit.pod(f"pod-{i}", uid) for i, uid in enumerate(uids)]

    run_all(lambda i: harness.manager.prepare_resources(pods[i]))
    info = harness.manager.claim_info(kit.NAMESPACE, kit.CLAIM)
    assert info.prepared
    assert info.pod_uids == set(uids)
    # Racing pods may each see the claim unprepared (upstream has no per-claim lock).
    assert 1 <= harness.prepare_count() <= THREADS
    assert harness.checkpoint.entry(kit.NAMESPACE, kit.CLAIM).pod_uids == set(uids)

    run_all(lambda i: harness.manager.unprepare_resources(pods[i]))
    # Only the last pod to leave triggers NodeUnprepareResources.
    assert harness.unprepare_count() == 1
    assert harness.manager.claim_infos() == []
    assert harness.checkpoint.entries == []
