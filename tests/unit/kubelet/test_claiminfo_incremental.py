"""The claim-info cache's indexes and incremental checkpoint writes match a full recomputation."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from drasim.checkpoint import codec
from drasim.checkpoint.store import FileCheckpointStore
from drasim.kubelet.claiminfo import ANY_DRIVER, CLAIMS_IN_USE, ClaimInfo, ClaimInfoCache
from drasim.metrics import Metrics
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

SETTINGS = settings(max_examples=120)  # the rest: tests/conftest.py's profile

NAMES = ["a", "b", "c", "d"]
PODS = ["p1", "p2", "p3"]
DRIVERS = ["d1", "d2"]

operation = st.one_of(
    st.tuples(
        st.just("add"),
        st.sampled_from(NAMES),
        st.sampled_from(["u1", "u2"]),
        st.lists(st.sampled_from(DRIVERS), max_size=2, unique=True),
        st.booleans(),
    ),
    st.tuples(st.just("pod+"), st.sampled_from(NAMES), st.sampled_from(PODS)),
    st.tuples(st.just("pod-"), st.sampled_from(NAMES), st.sampled_from(PODS)),
    st.tuples(st.just("device"), st.sampled_from(NAMES), st.sampled_from(DRIVERS), st.integers(0, 3)),
    st.tuples(st.just("reset"), st.sampled_from(NAMES), st.sampled_from(DRIVERS)),
    st.tuples(st.just("prepared"), st.sampled_from(NAMES)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("via-infos"), st.integers(0, 5), st.sampled_from(PODS)),
    st.tuples(st.just("sync")),
)


def _brute_in_use(infos: list[ClaimInfo]) -> dict[str, int]:
    counts: dict[str, int] = {}
    prepared = [i for i in infos if i.is_prepared()]
    for info in prepared:
        for driver in info.driver_state or {}:
            counts[driver] = counts.get(driver, 0) + 1
    counts[ANY_DRIVER] = len(prepared)
    return counts


def _check(cache: ClaimInfoCache, metrics: Metrics) -> None:
    infos = cache.peek_infos()
    assert cache.claims_in_use() == _brute_in_use(infos)
    gauge = {dict(labels)["driver_name"]: value for labels, value in metrics.series(CLAIMS_IN_USE).items()}
    assert gauge == {k: float(v) for k, v in _brute_in_use(infos).items()}
    for pod in PODS:
        expected = [i.claim_name for i in infos if i.has_pod_reference(pod)]
        assert cache.claim_names_for_pod(pod) == expected
        assert cache.has_pod_reference(pod) == bool(expected)


def _change(info: ClaimInfo | None, op: tuple[object, ...]) -> None:
    """Change a claim info obtained from the cache, as the manager does."""
    if info is None:
        return
    kind, argument = op[0], str(op[2]) if len(op) > 2 else ""
    if kind == "pod+":
        info.add_pod_reference(argument)
    elif kind == "pod-":
        info.delete_pod_reference(argument)
    elif kind == "device":
        info.add_device(argument, Device("pool", f"dev-{op[3]}", ("r",), (f"k=dev-{op[3]}",)))
    elif kind == "reset":
        info.reset_devices(argument)
    else:
        info.set_prepared()


@SETTINGS
@given(
    st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(PODS)), max_size=3),
    st.lists(operation, max_size=40),
)
def test_random_operations(tmp_path_factory, initial, operations) -> None:
    path = tmp_path_factory.mktemp("cache") / "dra_manager_state"
    store = FileCheckpointStore(path, fsync=False)
    entries = [
        ClaimInfoState(claim_uid=f"{name}-0", claim_name=name, namespace="ns", pod_uids={pod})
        for name, pod in initial
    ]
    metrics = Metrics()
    cache = ClaimInfoCache(store, metrics, entries)
    _check(cache, metrics)
    for op in operations:
        kind = op[0]
        with cache.write_locked():
            if kind == "add":
                _, name, uid, drivers, prepared = op
                info = ClaimInfo(
                    claim_uid=uid,
                    claim_name=name,
                    namespace="ns",
                    driver_state={d: DriverState() for d in drivers},
                    prepared=prepared,
                )
                cache.add(info)
            elif kind == "delete":
                cache.delete(op[1], "ns")
            elif kind == "via-infos":
                infos = cache.infos()
                if infos:
                    infos[op[1] % len(infos)].add_pod_reference(op[2])
            elif kind == "sync":
                cache.sync_to_checkpoint()
                states = [i.to_state() for i in sorted(cache.peek_infos(), key=lambda i: i.key)]
                assert path.read_bytes() == codec.encode(states)
            else:
                _change(cache.get(op[1], "ns"), op)
        _check(cache, metrics)
    with cache.write_locked():
        cache.sync_to_checkpoint()
    states = [i.to_state() for i in sorted(cache.peek_infos(), key=lambda i: i.key)]
    assert path.read_bytes() == codec.encode(states)


def test_a_sync_rewrites_only_touched_entries(tmp_path) -> None:
    """The store is handed the entries touched since the previous write, not the whole cache."""
    calls: list[dict[str, ClaimInfoState | None]] = []

    class Store:
        def get_or_create(self) -> list[ClaimInfoState]:
            return []

        def store(self, entries: object) -> None:
            raise AssertionError("a store with store_changes gets changes only")

        def store_changes(
            self, owner: object, changes: dict[str, ClaimInfoState | None], entries: object
        ) -> None:
            calls.append(dict(changes))

    cache = ClaimInfoCache(Store(), Metrics(), [])
    with cache.write_locked():
        for name in NAMES:
            cache.add(ClaimInfo(claim_uid=name, claim_name=name, namespace="ns"))
        cache.sync_to_checkpoint()
        info = cache.get("b", "ns")
        assert info is not None
        info.add_pod_reference("p1")
        cache.delete("c", "ns")
        cache.sync_to_checkpoint()
        cache.sync_to_checkpoint()
    assert sorted(calls[0]) == ["ns/a", "ns/b", "ns/c", "ns/d"]
    assert calls[1].keys() == {"ns/b", "ns/c"}
    assert calls[1]["ns/c"] is None
    changed = calls[1]["ns/b"]
    assert changed is not None
    assert changed.pod_uids == {"p1"}
    assert calls[2] == {}


class _MemoryStore:
    def store(self, entries: object) -> None:
        return None


def test_readers_refresh_and_read_the_indexes_under_the_touch_lock() -> None:
    """Readers refresh the indexes concurrently: a reader that saw nothing left to refresh while
    another was half-way through would read a half-updated index (a claim missing from
    claimNamesForPod skips the pod-spec fallback of unprepare)."""
    cache = ClaimInfoCache(_MemoryStore(), Metrics(), [])
    with cache.write_locked():
        cache.add(ClaimInfo(claim_uid="u1", claim_name="a", namespace="ns", pod_uids={"p1"}))
    seen: list[str] = []

    class Guarded(dict[str, set[str]]):
        """The pod index, checking that whoever reads it holds the touch lock."""

        def get(self, key: str, default: object = None) -> object:
            seen.append("get" if cache._touch_lock.locked() else "get without the lock")
            return super().get(key, default)

        def __contains__(self, key: object) -> bool:
            seen.append("in" if cache._touch_lock.locked() else "in without the lock")
            return super().__contains__(key)

    with cache.read_locked():
        assert cache.has_pod_reference("p1")  # the first refresh indexes "a"
        cache._claims_of_pod = Guarded(cache._claims_of_pod)
        assert cache.claim_names_for_pod("p1") == ["a"]
        assert cache.has_pod_reference("p1")
        assert not cache.has_pod_reference("p2")
    assert seen == ["get", "in", "in"]
    with cache.read_locked():
        assert cache.claims_in_use() == {ANY_DRIVER: 0}
    assert not cache._touch_lock.locked()
