"""The kubelet's per-claim state and the locked cache that holds it.

A port of pkg/kubelet/cm/dra/claiminfo.go: :class:`ClaimInfo` is a checkpointed
:class:`~drasim.kubelet.state.ClaimInfoState` plus the ``prepared`` flag that is never
written to disk, and :class:`ClaimInfoCache` is the readers-writer-locked map keyed
``"<namespace>/<claim name>"`` that the manager works on. The cache also keeps the
``dra_resource_claims_in_use`` gauge, which upstream computes at scrape time and
which is refreshed here whenever a write lock is released.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from drasim.errors import KubeletError
from drasim.interfaces import CheckpointStore
from drasim.kubelet.objects import ClaimView, claim_view
from drasim.kubelet.rwlock import RWLock
from drasim.kubelet.state import ClaimInfoState, Device, DriverState
from drasim.metrics import Metrics

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
    """

    def __init__(self, checkpoint: CheckpointStore, metrics: Metrics, entries: list[ClaimInfoState]) -> None:
        """Build the cache from already-loaded checkpoint entries (every one unprepared)."""
        self.lock = RWLock()
        self._checkpoint = checkpoint
        self._metrics = metrics
        self._claim_info: dict[str, ClaimInfo] = {}
        for entry in entries:
            info = new_claim_info_from_state(entry)
            self._claim_info[info.key] = info
        metrics.describe(CLAIMS_IN_USE, kind="gauge", help_text=_CLAIMS_IN_USE_HELP)
        self._publish_claims_in_use()

    @contextmanager
    def write_locked(self) -> Iterator[None]:
        """Mirrors ``withLock``; the claims-in-use gauge is refreshed on the way out."""
        with self.lock.write():
            try:
                yield
            finally:
                self._publish_claims_in_use()

    @contextmanager
    def read_locked(self) -> Iterator[None]:
        """Mirrors ``withRLock``."""
        with self.lock.read():
            yield

    def add(self, info: ClaimInfo) -> None:
        """Mirrors ``add``: insert or replace under the info's own key."""
        self._claim_info[info.key] = info

    def contains(self, claim_name: str, namespace: str) -> bool:
        """Mirrors ``contains``."""
        return _key(claim_name, namespace) in self._claim_info

    def get(self, claim_name: str, namespace: str) -> ClaimInfo | None:
        """Mirrors ``get`` (``None`` for a miss)."""
        return self._claim_info.get(_key(claim_name, namespace))

    def delete(self, claim_name: str, namespace: str) -> None:
        """Mirrors ``delete``; a miss is a no-op."""
        self._claim_info.pop(_key(claim_name, namespace), None)

    def infos(self) -> list[ClaimInfo]:
        """The cached infos (live objects), in insertion order."""
        return list(self._claim_info.values())

    def has_pod_reference(self, pod_uid: str) -> bool:
        """Mirrors ``hasPodReference``: some claim is referenced by the pod."""
        return any(info.has_pod_reference(pod_uid) for info in self._claim_info.values())

    def claim_names_for_pod(self, pod_uid: str) -> list[str]:
        """Mirrors ``claimNamesForPod``: names of cached claims referenced by the pod."""
        return [info.claim_name for info in self._claim_info.values() if info.has_pod_reference(pod_uid)]

    def sync_to_checkpoint(self) -> None:
        """Mirrors ``syncToCheckpoint``: write the whole cache through the store.

        Entries are written sorted by namespace/name so that equal states give
        equal bytes (upstream walks a Go map, so its order is unspecified).
        """
        states = [self._claim_info[key].to_state() for key in sorted(self._claim_info)]
        self._checkpoint.store(states)

    def claims_in_use(self) -> dict[str, int]:
        """Mirrors ``claimsInUse``: prepared claims per driver plus ``<any>`` for the total."""
        counts: dict[str, int] = {}
        total = 0
        for info in self._claim_info.values():
            if not info.is_prepared():
                continue
            total += 1
            for driver in info.driver_state or {}:
                counts[driver] = counts.get(driver, 0) + 1
        counts[ANY_DRIVER] = total
        return counts

    def _publish_claims_in_use(self) -> None:
        counts = self.claims_in_use()
        samples = [({"driver_name": driver}, float(count)) for driver, count in sorted(counts.items())]
        self._metrics.set_gauge_family(CLAIMS_IN_USE, samples)


def claims_in_use_delta(before: Mapping[str, int], after: Mapping[str, int]) -> list[str]:
    """Mirrors ``claimsInUseDelta`` + ``String``: ``"<driver>: <count> (<+delta>)"`` sorted by driver."""
    rows = {driver: (0, -count) for driver, count in before.items() if driver not in after}
    rows.update({driver: (count, count - before.get(driver, 0)) for driver, count in after.items()})
    return [f"{driver}: {count} ({delta:+d})" for driver, (count, delta) in sorted(rows.items())]
