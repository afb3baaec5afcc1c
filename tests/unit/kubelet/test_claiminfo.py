"""claiminfo_test.go re-expressed: ClaimInfo, the cache, its lock and its gauge."""

from __future__ import annotations

import threading

import pytest

from drasim.errors import KubeletError
from drasim.kubelet.claiminfo import (
    ANY_DRIVER,
    CLAIMS_IN_USE,
    ClaimInfo,
    ClaimInfoCache,
    claims_in_use_delta,
    new_claim_info_from_claim,
    new_claim_info_from_state,
)
from drasim.kubelet.rwlock import RWLock
from drasim.metrics import Metrics
from drasim.state import ClaimInfoState, Device, DriverState


def test_new_claim_info_from_claim(kit) -> None:
    info = new_claim_info_from_claim(kit.claim())
    assert info == ClaimInfo(
        claim_uid=kit.CLAIM_UID,
        claim_name=kit.CLAIM,
        namespace=kit.NAMESPACE,
        pod_uids=set(),
        driver_state={kit.DRIVER: DriverState()},
        prepared=False,
    )


def test_new_claim_info_from_claim_empty_allocation(kit) -> None:
    claim = kit.claim()
    claim["status"]["allocation"] = {}
    assert new_claim_info_from_claim(claim).driver_state == {}


@pytest.mark.parametrize("allocation", ["missing", None])
def test_new_claim_info_not_allocated(kit, allocation) -> None:
    claim = kit.claim(allocated=False)
    if allocation is None:
        claim["status"]["allocation"] = None
    with pytest.raises(KubeletError, match=r"^not allocated$"):
        new_claim_info_from_claim(claim)


def test_one_driver_state_per_distinct_driver(kit) -> None:
    info = new_claim_info_from_claim(kit.claim(driver=["b", "a", "b"]))
    assert list(info.driver_state) == ["b", "a"]


def test_new_claim_info_from_state_is_a_deep_copy(kit) -> None:
    state = ClaimInfoState(
        claim_uid="u", claim_name="n", namespace="ns", pod_uids={"p"}, driver_state={"d": DriverState()}
    )
    info = new_claim_info_from_state(state)
    assert not info.prepared
    assert info.to_state() == state
    info.pod_uids.add("q")
    assert state.pod_uids == {"p"}


@pytest.mark.parametrize("existing", [None, [], [Device("p", "old")]])
def test_add_device_appends(existing) -> None:
    initial = None if existing is None else list(existing)
    info = ClaimInfo(claim_uid="u", claim_name="n", namespace="ns", driver_state={"d": DriverState(initial)})
    info.add_device("d", Device("p", "new"))
    info.add_device("other", Device("p", "x"))
    assert info.driver_state["d"].devices == [*(existing or []), Device("p", "new")]
    assert info.driver_state["other"].devices == [Device("p", "x")]


@pytest.mark.parametrize(
    ("initial", "add", "expected"),
    [(set(), "a", {"a"}), ({"a"}, "a", {"a"}), ({"a"}, "b", {"a", "b"}), (None, "a", {"a"})],
)
def test_pod_references(initial, add, expected) -> None:
    info = ClaimInfo(claim_uid="u", claim_name="n", namespace="ns", pod_uids=initial)
    assert info.has_pod_reference(add) == bool(initial and add in initial)
    info.add_pod_reference(add)
    assert info.pod_uids == expected
    assert info.has_pod_reference(add)
    info.delete_pod_reference(add)
    assert not info.has_pod_reference(add)


def test_delete_pod_reference_on_nil_set() -> None:
    info = ClaimInfo(claim_uid="u", claim_name="n", namespace="ns", pod_uids=None)
    info.delete_pod_reference("x")
    assert info.pod_uids is None
    assert not info.has_pod_reference("x")


@pytest.mark.parametrize("prepared", [False, True])
def test_set_and_is_prepared(prepared) -> None:
    info = ClaimInfo(claim_uid="u", claim_name="n", namespace="ns", prepared=prepared)
    assert info.is_prepared() is prepared
    info.set_prepared()
    assert info.is_prepared()


def make_cache(entries=()):
    class Store:
        def __init__(self) -> None:
            self.stored = None

        def get_or_create(self):
            return list(entries)

        def store(self, states):
            self.stored = list(states)

    store, metrics = Store(), Metrics()
    return ClaimInfoCache(store, metrics, list(entries)), store, metrics


def gauges(metrics):
    return {dict(labels)["driver_name"]: value for labels, value in metrics.series(CLAIMS_IN_USE).items()}


def info_for(name, drivers, *, prepared):
    return ClaimInfo(
        claim_uid=f"{name}-uid",
        claim_name=name,
        namespace="ns",
        driver_state={d: DriverState() for d in drivers},
        prepared=prepared,
    )


def test_cache_add_unprepared_claim_metric() -> None:
    cache, _, metrics = make_cache()
    with cache.write_locked():
        cache.add(info_for("c", ["test-driver"], prepared=False))
    assert gauges(metrics) == {ANY_DRIVER: 0}


def test_cache_add_prepared_claim_metric() -> None:
    cache, _, metrics = make_cache()
    with cache.write_locked():
        cache.add(info_for("c", ["test-driver", "other-test-driver"], prepared=True))
    assert gauges(metrics) == {ANY_DRIVER: 1, "other-test-driver": 1, "test-driver": 1}


def test_cache_add_more_prepared_claims_metric() -> None:
    cache, _, metrics = make_cache()
    with cache.write_locked():
        cache.add(info_for("c-old", ["test-driver"], prepared=True))
    before = cache.claims_in_use()
    with cache.write_locked():
        cache.add(info_for("c", ["test-driver", "other-test-driver"], prepared=True))
    assert gauges(metrics) == {ANY_DRIVER: 2, "other-test-driver": 1, "test-driver": 2}
    assert claims_in_use_delta(before, cache.claims_in_use()) == [
        "<any>: 2 (+1)",
        "other-test-driver: 1 (+1)",
        "test-driver: 2 (+1)",
    ]


def test_cache_delete_metric() -> None:
    cache, _, metrics = make_cache()
    with cache.write_locked():
        cache.add(info_for("a", ["test-driver", "other-test-driver"], prepared=True))
        cache.add(info_for("b", ["test-driver"], prepared=True))
    before = cache.claims_in_use()
    with cache.write_locked():
        cache.delete("b", "ns")
    assert gauges(metrics) == {ANY_DRIVER: 1, "other-test-driver": 1, "test-driver": 1}
    assert claims_in_use_delta(before, cache.claims_in_use()) == [
        "<any>: 1 (-1)",
        "other-test-driver: 1 (+0)",
        "test-driver: 1 (-1)",
    ]
    with cache.write_locked():
        cache.delete("a", "ns")
        cache.delete("not-there", "ns")
    # Upstream's collector lists only current drivers: stale series disappear.
    assert gauges(metrics) == {ANY_DRIVER: 0}


def test_claims_in_use_delta_for_vanished_driver() -> None:
    assert claims_in_use_delta({"<any>": 1, "d": 1}, {"<any>": 0}) == ["<any>: 0 (-1)", "d: 0 (-1)"]


def test_cache_contains_get_delete_and_pod_reference() -> None:
    cache, _, _ = make_cache()
    info = info_for("c", ["d"], prepared=False)
    info.add_pod_reference("pod")
    assert not cache.contains("c", "ns")
    assert cache.get("c", "ns") is None
    cache.add(info)
    assert cache.contains("c", "ns")
    assert not cache.contains("c", "other-ns")
    assert cache.get("c", "ns") is info
    assert cache.has_pod_reference("pod")
    assert not cache.has_pod_reference("other")
    assert cache.claim_names_for_pod("pod") == ["c"]
    cache.delete("c", "ns")
    assert not cache.contains("c", "ns")


def test_cache_restores_checkpoint_unprepared() -> None:
    state = ClaimInfoState(claim_uid="u", claim_name="n", namespace="ns", pod_uids={"p"})
    cache, _, metrics = make_cache([state])
    info = cache.get("n", "ns")
    assert info is not None
    assert not info.prepared
    assert info.pod_uids == {"p"}
    assert gauges(metrics) == {ANY_DRIVER: 0}


def test_sync_to_checkpoint_is_sorted_and_drops_prepared_flag() -> None:
    cache, store, _ = make_cache()
    cache.add(info_for("b", ["d"], prepared=True))
    cache.add(info_for("a", ["d"], prepared=False))
    cache.sync_to_checkpoint()
    assert [type(s) for s in store.stored] == [ClaimInfoState, ClaimInfoState]
    assert [s.claim_name for s in store.stored] == ["a", "b"]


def test_write_lock_excludes_readers_and_writers() -> None:
    cache, _, _ = make_cache()
    with cache.write_locked():
        assert not cache.lock.acquire_write(blocking=False)
        assert not cache.lock.acquire_read(blocking=False)
    assert cache.lock.acquire_write(blocking=False)
    cache.lock.release_write()


def test_read_lock_allows_readers_only() -> None:
    cache, _, _ = make_cache()
    with cache.read_locked():
        assert cache.lock.acquire_read(blocking=False)
        cache.lock.release_read()
        assert not cache.lock.acquire_write(blocking=False)


def test_errors_propagate_and_release_the_lock() -> None:
    cache, _, _ = make_cache()
    with pytest.raises(ValueError, match="boom"), cache.write_locked():
        raise ValueError("boom")
    assert cache.lock.acquire_write(blocking=False)
    cache.lock.release_write()


def test_waiting_writer_blocks_new_readers() -> None:
    lock = RWLock()
    lock.acquire_read()
    writer_has_lock = threading.Event()

    def writer() -> None:
        with lock.write():
            writer_has_lock.set()

    thread = threading.Thread(target=writer)
    thread.start()
    # Wait until the writer is queued (it cannot get the lock while we read).
    for _ in range(1000):
        with lock._cond:
            if lock._waiting_writers:
                break
        threading.Event().wait(0.001)
    assert not lock.acquire_read(blocking=False)
    lock.release_read()
    assert writer_has_lock.wait(5)
    thread.join(5)
    assert lock.acquire_read(blocking=False)
    lock.release_read()


def test_unbalanced_release_is_an_error() -> None:
    lock = RWLock()
    with pytest.raises(RuntimeError):
        lock.release_read()
    with pytest.raises(RuntimeError):
        lock.release_write()


def test_cdi_devices_as_list() -> None:
    info = ClaimInfo(
        claim_uid="u",
        claim_name="n",
        namespace="ns",
        driver_state={
            "d1": DriverState([Device("p", "a", ("r1",), ("c/a",)), Device("p", "b", (), ("c/b",))]),
            "d2": DriverState([Device("p", "c", ("r2",), ("c/c1", "c/c2"))]),
        },
    )
    assert info.cdi_devices_as_list("") == ["c/a", "c/b", "c/c1", "c/c2"]
    assert info.cdi_devices_as_list("r1") == ["c/a", "c/b"]
    assert info.cdi_devices_as_list("r2") == ["c/b", "c/c1", "c/c2"]
    assert info.cdi_devices_as_list("r3") == ["c/b"]
