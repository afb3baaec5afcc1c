"""The kubelet's per-claim state and the locked cache that holds it.

A port of pkg/kubelet/cm/dra/claiminfo.go: :class:`ClaimInfo` is a checkpointed
:class:`~drasim.state.ClaimInfoState` plus the ``prepared`` flag that is never
written to disk, and :class:`ClaimInfoCache` is the readers-writer-locked map keyed
``"<namespace>/<claim name>"`` that the manager works on. The cache also answers the
``dra_resource_claims_in_use`` gauge, computed when metrics are read (as upstream's
collector computes it at scrape time).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from drasim.errors import KubeletError
from drasim.interfaces import CheckpointStore
from drasim.kubelet.objects import ClaimView, claim_view
from drasim.kubelet.rwlock import RWLock
from drasim.metrics import Metrics
from drasim.state import ClaimInfoState, Device, DriverState

__all__ = [
    "ANY_DRIVER",
    "CLAIMS_IN_USE",
    "ClaimInfo",
    "ClaimInfoCache",
    "claims_in_use_delta",
    "new_claim_info_from_claim",
    "new_claim_info_from_state",
]

CLAIMS_IN_USE = "dra_resource_claims_in_use"
ANY_DRIVER = "<any>"  # kubeletmetrics.DRAResourceClaimsInUseAnyDriver
_CLAIMS_IN_USE_HELP = (
    "[ALPHA] The number of ResourceClaims that are currently in use on the node, by driver name "
    "(driver_name label value) and across all drivers (special value <any> for driver_name). Note that "
    "the sum of all by-driver counts is not the total number of in-use ResourceClaims because the same "
    "ResourceClaim might use devices from different drivers. Instead, use the count for the <any> "
    "driver_name."
)


@dataclass
class ClaimInfo(ClaimInfoState):
    """Mirrors ``ClaimInfo``: the checkpointed state plus the in-memory ``prepared`` flag."""

    prepared: bool = False

    def add_device(self, driver_name: str, device: Device) -> None:
        """Mirrors ``addDevice``: append (never replace) a device under a driver."""
        if self.driver_state is None:
            self.driver_state = {}
        driver_state = self.driver_state.setdefault(driver_name, DriverState())
        if driver_state.devices is None:
            driver_state.devices = []
        driver_state.devices.append(device)

    def reset_devices(self, driver_name: str) -> None:
        """Mirrors ``resetDevices`` (kubernetes/kubernetes#140274): forget one driver's devices.

        Called before a driver's prepare reply for the claim is recorded, so the reply is
        authoritative and a retry or a re-prepare after a restart does not duplicate devices.
        """
        if self.driver_state is not None and driver_name in self.driver_state:
            self.driver_state[driver_name].devices = None

    def add_pod_reference(self, pod_uid: str) -> None:
        """Mirrors ``addPodReference`` (a nil set is created instead of panicking as Go would)."""
        if self.pod_uids is None:
            self.pod_uids = set()
        self.pod_uids.add(pod_uid)

    def has_pod_reference(self, pod_uid: str) -> bool:
        """Mirrors ``hasPodReference``."""
        return self.pod_uids is not None and pod_uid in self.pod_uids

    def delete_pod_reference(self, pod_uid: str) -> None:
        """Mirrors ``deletePodReference``; a no-op on a nil set."""
        if self.pod_uids is not None:
            self.pod_uids.discard(pod_uid)

    def set_prepared(self) -> None:
        """Mirrors ``setPrepared``."""
        self.prepared = True

    def is_prepared(self) -> bool:
        """Mirrors ``isPrepared``."""
        return self.prepared

    def cdi_devices_as_list(self, request_name: str) -> list[str]:
        """Mirrors ``cdiDevicesAsList``: CDI IDs of devices serving ``request_name``.

        A device matches when the request is ``""``, the device lists no request
        names, or its request names contain the request. Drivers are walked in
        insertion order (Go walks its map in random order); duplicates are kept.
        """
        return [cdi_id for ids in self.cdi_devices_by_device(request_name) for cdi_id in ids]

    def cdi_devices_by_device(self, request_name: str) -> list[tuple[str, ...]]:
        """The same walk as :meth:`cdi_devices_as_list`, one tuple of CDI IDs per matching device."""
        groups: list[tuple[str, ...]] = []
        for driver_state in (self.driver_state or {}).values():
            for device in driver_state.devices or []:
                names = device.request_names
                if request_name == "" or not names or request_name in names:
                    groups.append(tuple(device.cdi_device_ids or ()))
        return groups

    def to_state(self) -> ClaimInfoState:
        """A copy of the checkpointed part (what ``syncToCheckpoint`` writes).

        Containers are copied; devices are frozen values and shared. This runs for every
        cached claim on every checkpoint write, so a generic deep copy would dominate.
        """
        return ClaimInfoState(
            claim_uid=self.claim_uid,
            claim_name=self.claim_name,
            namespace=self.namespace,
            pod_uids=None if self.pod_uids is None else set(self.pod_uids),
            driver_state=None
            if self.driver_state is None
            else {
                name: DriverState(
                    devices=None if state.devices is None else list(state.devices),
                    skip_node_operations=state.skip_node_operations,
                )
                for name, state in self.driver_state.items()
            },
        )

    def deep_copy(self) -> ClaimInfo:
        """Mirrors ``DeepCopy`` (the ``prepared`` flag is copied too)."""
        copy = self.clone()
        assert isinstance(copy, ClaimInfo)
        return copy


def new_claim_info_from_claim(claim: Mapping[str, Any] | ClaimView) -> ClaimInfo:
    """Mirrors ``newClaimInfoFromClaim``: one empty DriverState per distinct result driver.

    Raises :class:`KubeletError` ``"not allocated"`` when ``status.allocation`` is
    missing or null. An allocation without results gives an empty DriverState.
    """
    view = claim if isinstance(claim, ClaimView) else claim_view(claim)
    if not view.allocated:
        raise KubeletError("not allocated")
    drivers: dict[str, DriverState] = {}
    for driver in view.result_drivers:
        drivers.setdefault(driver, DriverState())
    return ClaimInfo(
        claim_uid=view.uid,
        claim_name=view.name,
        namespace=view.namespace,
        pod_uids=set(),
        driver_state=drivers,
    )


def new_claim_info_from_state(state: ClaimInfoState) -> ClaimInfo:
    """Mirrors ``newClaimInfoFromState``: a deep copy of checkpointed state, not prepared."""
    copy = state.clone()
    return ClaimInfo(
        claim_uid=copy.claim_uid,
        claim_name=copy.claim_name,
        namespace=copy.namespace,
        pod_uids=copy.pod_uids,
        driver_state=copy.driver_state,
        prepared=False,
    )


def _key(claim_name: str, namespace: str) -> str:
    return f"{namespace}/{claim_name}"


class ClaimInfoCache:
    """Mirrors ``claimInfoCache``: claim infos keyed by namespace/name behind a RW lock.

    The map methods (:meth:`add`, :meth:`get`, ...) do not lock, exactly as
    upstream: callers hold :meth:`write_locked` or :meth:`read_locked` around them.

    Upstream answers ``claimNamesForPod``, ``hasPodReference``, the claims-in-use gauge
    and ``syncToCheckpoint`` by walking every cached claim. Here they cost what changed
    instead, with identical results: every key handed out or changed through the cache
    (:meth:`add`, :meth:`get`, :meth:`delete`, :meth:`infos`) is noted as *touched*, since
    its live :class:`ClaimInfo` may be changed by the caller; the indexes (pod UID ->
    claims, prepared claims per driver) are brought up to date for touched keys before
    they are read, and a checkpoint write re-encodes only the entries touched since the
    previous write (:meth:`FileCheckpointStore.store_changes
    <drasim.checkpoint.store.FileCheckpointStore.store_changes>`). Change a cached claim
    info only through an object obtained from these methods.
    """

    def __init__(self, checkpoint: CheckpointStore, metrics: Metrics, entries: list[ClaimInfoState]) -> None:
        """Build the cache from already-loaded checkpoint entries (every one unprepared)."""
        self.lock = RWLock()
        # One context manager of each kind, used again and again (they hold no state of their own).
        self._write_locked = _WriteLocked(self.lock)
        self._read_locked = _ReadLocked(self.lock)
        self._checkpoint = checkpoint
        self._store_changes = getattr(checkpoint, "store_changes", None)
        self._claim_info: dict[str, ClaimInfo] = {}
        # Bookkeeping that keeps per-operation costs independent of the cache's size.
        self._token = object()  # identifies this cache to the checkpoint store
        # Readers refresh the indexes concurrently: the refresh and every read of the
        # indexes hold this lock (touches do not need it, see _touch).
        self._touch_lock = threading.Lock()
        self._unsynced: set[str] = set()  # keys touched since the last checkpoint write
        self._unindexed: set[str] = set()  # keys touched since the indexes were refreshed
        self._order: dict[str, int] = {}  # key -> insertion number (the dict's iteration order)
        self._inserted = 0
        self._pods_of: dict[str, frozenset[str]] = {}  # key -> pod UIDs, as indexed
        self._claims_of_pod: dict[str, set[str]] = {}  # pod UID -> keys
        self._in_use_of: dict[str, tuple[str, ...]] = {}  # key of a prepared claim -> its drivers
        self._in_use: dict[str, int] = {}  # driver -> prepared claims
        for entry in entries:
            self.add(new_claim_info_from_state(entry))
        metrics.describe(CLAIMS_IN_USE, kind="gauge", help_text=_CLAIMS_IN_USE_HELP)
        # Like upstream's collector, the gauge is computed when metrics are read, not kept
        # up to date on every change (a restarted kubelet's cache takes the family over).
        metrics.collect(CLAIMS_IN_USE, self._claims_in_use_samples)

    def write_locked(self) -> AbstractContextManager[None]:
        """Mirrors ``withLock``."""
        return self._write_locked

    def read_locked(self) -> AbstractContextManager[None]:
        """Mirrors ``withRLock``."""
        return self._read_locked

    def _touch(self, key: str) -> None:
        # Without the touch lock: set.add is atomic, and the only touches that matter (of a
        # claim info its caller may change) come from callers holding the write lock, while
        # no reader refreshes and no other writer syncs. A reader's touch racing another
        # reader's refresh may be lost, which is harmless: a reader changes nothing.
        self._unsynced.add(key)
        self._unindexed.add(key)

    def add(self, info: ClaimInfo) -> None:
        """Mirrors ``add``: insert or replace under the info's own key."""
        key = info.key
        if key not in self._claim_info:
            self._order[key] = self._inserted
            self._inserted += 1
        self._claim_info[key] = info
        self._touch(key)

    def contains(self, claim_name: str, namespace: str) -> bool:
        """Mirrors ``contains``."""
        return _key(claim_name, namespace) in self._claim_info

    def get(self, claim_name: str, namespace: str) -> ClaimInfo | None:
        """Mirrors ``get`` (``None`` for a miss)."""
        key = _key(claim_name, namespace)
        info = self._claim_info.get(key)
        if info is not None:
            self._touch(key)
        return info

    def delete(self, claim_name: str, namespace: str) -> None:
        """Mirrors ``delete``; a miss is a no-op."""
        key = _key(claim_name, namespace)
        if self._claim_info.pop(key, None) is not None:
            del self._order[key]
            self._touch(key)

    def infos(self) -> list[ClaimInfo]:
        """The cached infos (live objects, which the caller may change), in insertion order."""
        with self._touch_lock:
            self._unsynced.update(self._claim_info)
            self._unindexed.update(self._claim_info)
        return list(self._claim_info.values())

    def peek_infos(self) -> list[ClaimInfo]:
        """The cached infos (live objects) in insertion order, for reading only: unlike
        :meth:`infos` nothing is noted as touched, so the caller must not change them."""
        return list(self._claim_info.values())

    def _refresh(self) -> None:
        """Bring the pod and claims-in-use indexes up to date for every touched key.

        The caller holds the touch lock (and the cache's read or write lock), and reads the
        indexes before releasing it: another reader's refresh may be under way otherwise.
        """
        if not self._unindexed:
            return
        keys, self._unindexed = self._unindexed, set()
        # A snapshot: a reader's touch may still land in the set swapped out (and be lost,
        # which is harmless: a reader changes nothing), never while it is iterated.
        for key in list(keys):
            self._reindex(key, self._claim_info.get(key))

    def _reindex(self, key: str, info: ClaimInfo | None) -> None:
        pods = frozenset(info.pod_uids) if info is not None and info.pod_uids else None
        if self._pods_of.get(key) != pods:
            self._reindex_pods(key, pods)
        drivers = tuple(info.driver_state or {}) if info is not None and info.is_prepared() else None
        if self._in_use_of.get(key) != drivers:
            self._reindex_in_use(key, drivers)

    def _reindex_pods(self, key: str, pods: frozenset[str] | None) -> None:
        for uid in self._pods_of.pop(key, ()):
            keys = self._claims_of_pod[uid]
            keys.discard(key)
            if not keys:
                del self._claims_of_pod[uid]
        if pods is not None:
            self._pods_of[key] = pods
            for uid in pods:
                self._claims_of_pod.setdefault(uid, set()).add(key)

    def _reindex_in_use(self, key: str, drivers: tuple[str, ...] | None) -> None:
        for driver in self._in_use_of.pop(key, ()):
            count = self._in_use[driver] - 1
            if count:
                self._in_use[driver] = count
            else:
                del self._in_use[driver]
        if drivers is not None:
            self._in_use_of[key] = drivers
            for driver in drivers:
                self._in_use[driver] = self._in_use.get(driver, 0) + 1

    def has_pod_reference(self, pod_uid: str) -> bool:
        """Mirrors ``hasPodReference``: some claim is referenced by the pod."""
        with self._touch_lock:
            self._refresh()
            return pod_uid in self._claims_of_pod

    def claim_names_for_pod(self, pod_uid: str) -> list[str]:
        """Mirrors ``claimNamesForPod``: names of cached claims referenced by the pod (insertion order)."""
        with self._touch_lock:
            self._refresh()
            keys = sorted(self._claims_of_pod.get(pod_uid, ()), key=self._order.__getitem__)
        return [self._claim_info[key].claim_name for key in keys]

    def _states(self) -> list[ClaimInfoState]:
        return [self._claim_info[key].to_state() for key in sorted(self._claim_info)]

    def sync_to_checkpoint(self) -> None:
        """Mirrors ``syncToCheckpoint``: write the whole cache through the store.

        Entries are written sorted by namespace/name so that equal states give
        equal bytes (upstream walks a Go map, so its order is unspecified). A store
        with ``store_changes`` is handed the entries touched since the previous write
        (it re-encodes those and copies the others); any other store gets every entry.
        """
        store_changes = self._store_changes
        if store_changes is None:
            self._checkpoint.store(self._states())
            return
        # The caller holds the write lock: no touch can come in between (see _touch).
        keys, self._unsynced = self._unsynced, set()
        changes: dict[str, ClaimInfoState | None] = {}
        for key in sorted(keys):
            info = self._claim_info.get(key)
            changes[key] = None if info is None else info.to_state()
        store_changes(self._token, changes, self._states)

    def claims_in_use(self) -> dict[str, int]:
        """Mirrors ``claimsInUse``: prepared claims per driver plus ``<any>`` for the total."""
        with self._touch_lock:
            self._refresh()
            counts = dict(self._in_use)
            counts[ANY_DRIVER] = len(self._in_use_of)
        return counts

    def _claims_in_use_samples(self) -> list[tuple[dict[str, str], float]]:
        """The claims-in-use gauge's samples now (upstream ``claimInfoCollector``), under the read lock."""
        with self.read_locked():
            counts = self.claims_in_use()
        return [({"driver_name": driver}, float(count)) for driver, count in sorted(counts.items())]


class _WriteLocked:
    """``with cache.write_locked():`` without a generator per use (it runs several times per call)."""

    __slots__ = ("_lock",)

    def __init__(self, lock: RWLock) -> None:
        self._lock = lock

    def __enter__(self) -> None:
        self._lock.acquire_write()

    def __exit__(self, *exc: object) -> None:
        self._lock.release_write()


class _ReadLocked:
    __slots__ = ("_lock",)

    def __init__(self, lock: RWLock) -> None:
        self._lock = lock

    def __enter__(self) -> None:
        self._lock.acquire_read()

    def __exit__(self, *exc: object) -> None:
        self._lock.release_read()


def claims_in_use_delta(before: Mapping[str, int], after: Mapping[str, int]) -> list[str]:
    """Mirrors ``claimsInUseDelta`` + ``String``: ``"<driver>: <count> (<+delta>)"`` sorted by driver."""
    rows = {driver: (0, -count) for driver, count in before.items() if driver not in after}
    rows.update({driver: (count, count - before.get(driver, 0)) for driver, count in after.items()})
    return [f"{driver}: {count} ({delta:+d})" for driver, (count, delta) in sorted(rows.items())]
