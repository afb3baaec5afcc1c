"""The emulated kubelet DRA manager: a port of pkg/kubelet/cm/dra/manager.go.

:class:`Manager` prepares the ResourceClaims of a pod before its sandbox starts,
unprepares them after its containers stopped, hands CDI device IDs to containers
and garbage-collects claims of pods that went away. It talks to the world only
through the ports in :mod:`drasim.interfaces` and does no I/O of its own.

Crash points. If a ``hooks`` callable is given, the manager calls ``hooks(point)``
at these named points; a hook that raises simulates a kubelet crash there (the
exception propagates unchanged, nothing more is recorded or written):

``prepare:after-validation``
    every claim fetched and checked, nothing changed yet.
``prepare:after-pod-reference-checkpoint``
    pod UIDs added to the cache and checkpointed, no RPC made yet.
``prepare:after-batch``
    one NodePrepareResources batch succeeded and its devices were appended
    (called once per batch).
``prepare:after-rpc``
    every batch succeeded; claims not yet marked prepared, final checkpoint not written.
``unprepare:after-claim-selection``
    the claims to unprepare are chosen (pod references of shared claims dropped in
    memory only), no RPC made yet.
``unprepare:after-batch``
    one NodeUnprepareResources batch succeeded (called once per batch).
``unprepare:after-rpc``
    every batch succeeded; cache entries not yet deleted, checkpoint not written.

Known differences from upstream are listed in docs/kubelet-fidelity.md.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from drasim.errors import (
    CheckpointError,
    CorruptCheckpointError,
    DrasimError,
    KubeletError,
)
from drasim.interfaces import (
    CheckpointStore,
    ClaimReader,
    Clock,
    DriverClient,
    DriverDirectory,
    Recorder,
    ready_recording,
)
from drasim.kubelet.batches import prepare_batch, unprepare_batch
from drasim.kubelet.claiminfo import ClaimInfo, ClaimInfoCache, new_claim_info_from_claim
from drasim.kubelet.containers import container_claim_infos, get_resources, get_resources_by_device
from drasim.kubelet.features import FeatureGates
from drasim.kubelet.objects import (
    ClaimView,
    ContainerView,
    PodResourceClaim,
    PodView,
    claim_view,
    container_view,
    pod_view,
)
from drasim.kubelet.resourceclaim import claim_name, is_for_pod, is_reserved_for_pod
from drasim.metrics import Metrics
from drasim.profiles import KubeletVersion
from drasim.profiles import profile as version_profile
from drasim.state import ClaimInfoState
from drasim.values import KUBELET_HOOK_POINTS, ClaimRef

__all__ = ["HOOK_POINTS", "OPERATIONS_DURATION", "Manager"]

OPERATIONS_DURATION = "dra_operations_duration_seconds"
_OPERATIONS_HELP = (
    "[ALPHA] Latency histogram in seconds for the duration of handling all ResourceClaims referenced by "
    "a pod when the pod starts or stops. Identified by the name of the operation (PrepareResources or "
    "UnprepareResources) and separated by the success of the operation. The number of failed operations "
    "is provided through the histogram's overall count."
)
HOOK_POINTS = KUBELET_HOOK_POINTS
#: How many parsed claims a Manager keeps for a shared-reads claim reader before starting over.
_CLAIM_VIEWS_LIMIT = 16384


@dataclass
class _Validated:
    """What the validation pass learned about one pod claim (upstream's ``infos[i]``)."""

    claim: ClaimView
    claim_info: ClaimInfo
    plugins: dict[str, DriverClient]


def _pod_ref(pod: Any) -> tuple[str, str]:
    """Best-effort ``(namespace/name, uid)`` of a raw pod, for the journal."""
    meta = pod.get("metadata") if isinstance(pod, dict) else None
    if not isinstance(meta, dict):
        return "", ""
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}", str(meta.get("uid") or "")


class Manager:
    """Mirrors ``dra.Manager``: prepare/unprepare/reconcile over a claim-info cache.

    Construction loads the checkpoint (``NewManager``): every restored claim is
    unprepared, so the next prepare calls the driver again.
    """

    def __init__(
        self,
        *,
        claims: ClaimReader,
        drivers: DriverDirectory,
        checkpoint: CheckpointStore,
        clock: Clock,
        recorder: Recorder,
        metrics: Metrics | None = None,
        hooks: Callable[[str], None] | None = None,
        feature_gates: FeatureGates | None = None,
        version: KubeletVersion | None = None,
    ) -> None:
        #: The kubelet release whose manager behaviour applies (default: the newest profile).
        self.version = version if version is not None else version_profile()
        self._claims = claims
        # A reader with ``shared_reads`` hands out one object per stored version of a claim
        # and never changes it, so that object's parsed view can be kept:
        # (namespace, name) -> (the object last read, its view).
        self._shared_reads = getattr(claims, "shared_reads", False) is True
        self._claim_views: dict[tuple[str, str], tuple[object, ClaimView]] = {}
        self._drivers = drivers
        self._clock = clock
        self._recorder = recorder
        self._record_ready = ready_recording(recorder)
        self._hooks = hooks
        self.metrics = metrics if metrics is not None else Metrics()
        self.feature_gates = feature_gates if feature_gates is not None else FeatureGates()
        self.metrics.describe(OPERATIONS_DURATION, kind="histogram", help_text=_OPERATIONS_HELP)
        self._durations = self.metrics.histogram_vec(OPERATIONS_DURATION, "operation_name", "is_error")
        try:
            entries = checkpoint.get_or_create()
        except CorruptCheckpointError as err:
            msg = (
                "create ResourceClaim cache: could not initialize checkpoint manager, "
                f"please drain node and remove DRA state file, err: {err}"
            )
            raise KubeletError(msg) from err
        except CheckpointError as err:
            raise KubeletError(
                f"create ResourceClaim cache: GetOrCreate() on checkpoint state: {err}"
            ) from err
        self.cache = ClaimInfoCache(checkpoint, self.metrics, list(entries or []))

    # ----- public operations -------------------------------------------------------------

    def prepare_resources(self, pod: Mapping[str, Any]) -> None:
        """Mirrors ``PrepareResources``; errors are ``KubeletError("prepare dynamic resources: ...")``."""
        self._timed("PrepareResources", "prepare dynamic resources", pod, self._prepare_resources)

    def unprepare_resources(self, pod: Mapping[str, Any]) -> None:
        """Mirrors ``UnprepareResources``; errors are ``KubeletError("unprepare dynamic resources: ...")``."""
        self._timed("UnprepareResources", "unprepare dynamic resources", pod, self._unprepare_for_pod)

    def get_resources(self, pod: Mapping[str, Any], container: Mapping[str, Any] | str) -> list[str]:
        """Mirrors ``GetResources``: CDI device IDs for the container (by dict or by name)."""
        view = pod_view(pod)
        return get_resources(self.cache, view, self._container(view, container), self.feature_gates)

    def get_resources_by_device(
        self, pod: Mapping[str, Any], container: Mapping[str, Any] | str
    ) -> list[tuple[str, ...]]:
        """:meth:`get_resources` grouped per prepared device (not an upstream call; for checks)."""
        view = pod_view(pod)
        return get_resources_by_device(self.cache, view, self._container(view, container), self.feature_gates)

    def get_container_claim_infos(
        self, pod: Mapping[str, Any], container: Mapping[str, Any] | str
    ) -> list[ClaimInfo]:
        """Mirrors ``GetContainerClaimInfos``: deep copies of the container's claim infos."""
        view = pod_view(pod)
        return container_claim_infos(self.cache, view, self._container(view, container), self.feature_gates)

    def pod_might_need_to_unprepare_resources(self, pod_uid: str) -> bool:
        """Mirrors ``PodMightNeedToUnprepareResources`` (takes the write lock, as upstream)."""
        with self.cache.lock.write():
            return self.cache.has_pod_reference(pod_uid)

    def reconcile(self, active_pod_uids: Collection[str]) -> dict[str, str | None]:
        """One pass of ``reconcileLoop``: unprepare the claims of pods that are not active.

        Returns pod UID -> error text (``None`` on success) for every inactive pod
        found. Errors are only recorded, as upstream only logs them.
        """
        active = set(active_pod_uids)
        inactive: dict[str, tuple[str, list[str]]] = {}
        with self.cache.read_locked():
            for info in self.cache.peek_infos():
                for uid in sorted(info.pod_uids or ()):
                    if uid not in active:
                        inactive.setdefault(uid, (info.namespace, []))[1].append(info.claim_name)
        outcome: dict[str, str | None] = {}
        for uid, (namespace, names) in inactive.items():
            start = self._clock.now()
            error: str | None = None
            try:
                self._unprepare(uid, namespace, names)
            except KubeletError as err:
                error = str(err)
            outcome[uid] = error
            self._recorder.record(
                "kubelet",
                operation="ReconcileUnprepare",
                pod_uid=uid,
                namespace=namespace,
                claims=list(names),
                error=error,
                duration=self._clock.now() - start,
            )
        return outcome

    # ----- read-only views ---------------------------------------------------------------

    def claim_infos(self) -> list[ClaimInfoState]:
        """A snapshot of the cache as checkpointable states, sorted by namespace/name."""
        with self.cache.read_locked():
            return [info.to_state() for info in sorted(self.cache.peek_infos(), key=lambda i: i.key)]

    def claim_info(self, namespace: str, name: str) -> ClaimInfo | None:
        """A deep copy of one cached claim info (with its ``prepared`` flag), or ``None``."""
        with self.cache.read_locked():
            info = self.cache.get(name, namespace)
            return None if info is None else info.deep_copy()

    def is_prepared(self, namespace: str, name: str) -> bool:
        """Whether the claim is cached and marked prepared."""
        with self.cache.read_locked():
            info = self.cache.get(name, namespace)
            return info is not None and info.is_prepared()

    # ----- helpers -----------------------------------------------------------------------

    def _hook(self, point: str) -> None:
        if self._hooks is not None:
            self._hooks(point)

    def _timed(
        self, operation: str, prefix: str, pod: Mapping[str, Any], body: Callable[[PodView], None]
    ) -> None:
        """Run one operation: wrap its error, observe the duration, journal it."""
        start = self._clock.now()
        failure: KubeletError | None = None
        view: PodView | None = None
        try:
            view = pod_view(pod)
            body(view)
        except KubeletError as err:
            failure = err
        duration = self._clock.now() - start
        failed = failure is not None
        if self.version.operation_is_error_inverted:
            failed = not failed  # 1.34-1.35 label with err == nil (see the profile field)
        is_error = "true" if failed else "false"
        self._durations.observe(duration, operation, is_error)
        wrapped = None if failure is None else KubeletError(f"{prefix}: {failure}")
        ref, uid = (view.ref, view.uid) if view is not None else _pod_ref(pod)
        self._record_ready(
            "kubelet",
            {
                "operation": operation,
                "pod": ref,
                "pod_uid": uid,
                "error": None if wrapped is None else str(wrapped),
                "duration": duration,
            },
        )
        if wrapped is not None:
            raise wrapped from failure

    def _container(self, pod: PodView, container: Mapping[str, Any] | str) -> ContainerView:
        if not isinstance(container, str):
            return container_view(container)
        for view in pod.containers:
            if view.name == container:
                return view
        raise KubeletError(f"pod {pod.ref} has no container {container!r}")

    def _get_plugin(self, driver_name: str) -> DriverClient:
        """``GetPlugin``; its error ("DRA driver X is not registered") is returned unwrapped."""
        try:
            return self._drivers.get_plugin(driver_name)
        except DrasimError as err:
            raise KubeletError(str(err)) from err

    def _sync(self, context: str) -> None:
        """``syncToCheckpoint`` with upstream's error wrapping; caller holds the write lock."""
        try:
            self.cache.sync_to_checkpoint()
        except CheckpointError as err:
            raise KubeletError(f"{context}: {err}") from err

    # ----- prepare -----------------------------------------------------------------------

    def _pod_claims(self, pod: PodView) -> list[PodResourceClaim]:
        claims = list(pod.resource_claims)
        if self.feature_gates.dra_extended_resource and pod.extended_status is not None:
            claims.append(
                PodResourceClaim(name="", resource_claim_name=pod.extended_status.resource_claim_name)
            )
        return claims

    def _validate(self, pod: PodView, pod_claim: PodResourceClaim) -> _Validated | None:
        """One step of the validation pass: nothing in the cache changes here."""
        name, must_check_owner = claim_name(pod, pod_claim)
        if name is None:
            return None
        try:
            raw = self._claims.get_resource_claim(pod.namespace, name)
        except DrasimError as err:
            raise KubeletError(f"fetch ResourceClaim {name}: {err}") from err
        claim = self._claim_view(pod.namespace, name, raw)
        pod_groups = self.feature_gates.dra_workload_resource_claims
        if must_check_owner:
            is_for_pod(pod, claim, pod_group_enabled=pod_groups)
        if not is_reserved_for_pod(pod, claim, pod_group_enabled=pod_groups):
            msg = f"pod {pod.name} ({pod.uid}) is not allowed to use ResourceClaim {name} ({claim.uid})"
            raise KubeletError(msg)
        try:
            info = new_claim_info_from_claim(claim)
        except KubeletError as err:
            raise KubeletError(f"ResourceClaim {claim.name}: {err}") from err
        plugins = {driver: self._get_plugin(driver) for driver in info.driver_state or {}}
        return _Validated(claim, info, plugins)

    def _claim_view(self, namespace: str, name: str, raw: Any) -> ClaimView:
        """``claim_view(raw)``, parsed once per object a shared-reads reader hands out."""
        if not self._shared_reads:
            return claim_view(raw)
        key = (namespace, name)
        seen = self._claim_views.get(key)
        if seen is not None and seen[0] is raw:
            return seen[1]
        view = claim_view(raw)
        if len(self._claim_views) >= _CLAIM_VIEWS_LIMIT:
            self._claim_views.clear()
        self._claim_views[key] = (raw, view)
        return view

    def _prepare_resources(self, pod: PodView) -> None:
        """Mirrors ``prepareResources``: validate, record pod references, call drivers, mark prepared."""
        validated = [self._validate(pod, pod_claim) for pod_claim in self._pod_claims(pod)]
        self._hook("prepare:after-validation")
        batches, sent = self._add_pod_references(pod, validated)
        self._hook("prepare:after-pod-reference-checkpoint")
        for plugin, claims in batches:
            prepare_batch(self.cache, plugin, claims, sent, replace=self.version.device_merge == "replace")
            self._hook("prepare:after-batch")
        self._hook("prepare:after-rpc")
        with self.cache.write_locked():
            for claim in sent.values():
                info = self.cache.get(claim.name, claim.namespace)
                if info is None:
                    msg = (
                        f"internal error: unable to get claim info for ResourceClaim {claim.name} "
                        f"in namespace {claim.namespace}"
                    )
                    raise KubeletError(msg)
                info.set_prepared()
            self._sync("checkpoint ResourceClaim state")

    def _add_pod_references(
        self, pod: PodView, validated: list[_Validated | None]
    ) -> tuple[list[tuple[DriverClient, list[ClaimRef]]], dict[str, ClaimView]]:
        """The cache pass: add the pod to every claim, checkpoint, batch unprepared claims per plugin."""
        # Keyed by plugin instance, as upstream's map[*DRAPlugin]: (driver, endpoint) names one.
        batches: dict[tuple[str, str], tuple[DriverClient, list[ClaimRef]]] = {}
        sent: dict[str, ClaimView] = {}
        with self.cache.write_locked():
            for item in validated:
                if item is None:
                    continue
                claim = item.claim
                info = self.cache.get(claim.name, claim.namespace)
                if info is None:
                    info = item.claim_info
                    self.cache.add(info)
                elif info.claim_uid != claim.uid:
                    msg = (
                        f"old ResourceClaim with same name {claim.name} and different UID "
                        f"{info.claim_uid} still exists (previous pod force-deleted?!)"
                    )
                    raise KubeletError(msg)
                info.add_pod_reference(pod.uid)
                self._sync("checkpoint ResourceClaim cache")
                if info.is_prepared():
                    continue
                sent[info.claim_uid] = claim
                ref = ClaimRef(namespace=info.namespace, uid=info.claim_uid, name=info.claim_name)
                for driver in info.driver_state or {}:
                    plugin = item.plugins.get(driver)
                    if plugin is None:
                        msg = f"internal error: no plugin resolved for DRA driver {driver}"
                        raise KubeletError(msg)
                    batches.setdefault((plugin.driver_name, plugin.endpoint), (plugin, []))[1].append(ref)
        return list(batches.values()), sent

    # ----- unprepare ---------------------------------------------------------------------

    def _unprepare_for_pod(self, pod: PodView) -> None:
        """Mirrors ``unprepareResourcesForPod``: claim names from the cache first (#139772).

        Kubelets before 1.37 derive the names from the pod only (``unprepare_names_from_cache``).
        """
        names: list[str] = []
        if self.version.unprepare_names_from_cache:
            with self.cache.read_locked():
                names = self.cache.claim_names_for_pod(pod.uid)
        if not names:
            for pod_claim in pod.resource_claims:
                name, _ = claim_name(pod, pod_claim)
                if name is not None:
                    names.append(name)
            if self.feature_gates.dra_extended_resource and pod.extended_status is not None:
                names.append(pod.extended_status.resource_claim_name)
        self._unprepare(pod.uid, pod.namespace, names)

    def _unprepare(self, pod_uid: str, namespace: str, claim_names: list[str]) -> None:
        """Mirrors ``unprepareResources``: unprepare claims this pod is the last user of."""
        batches: dict[str, list[ClaimRef]] = {}
        sent: dict[str, str] = {}
        for name in claim_names:
            with self.cache.write_locked():
                info = self.cache.get(name, namespace)
                if info is None:
                    continue
                if len(info.pod_uids or ()) > 1:
                    # Not checkpointed here: the final write below persists it.
                    info.delete_pod_reference(pod_uid)
                    continue
                sent[info.claim_uid] = info.claim_name
                ref = ClaimRef(namespace=info.namespace, uid=info.claim_uid, name=info.claim_name)
                for driver in info.driver_state or {}:
                    batches.setdefault(driver, []).append(ref)
        self._hook("unprepare:after-claim-selection")
        for driver, claims in batches.items():
            unprepare_batch(self._get_plugin(driver), claims)
            self._hook("unprepare:after-batch")
        self._hook("unprepare:after-rpc")
        with self.cache.write_locked():
            for name in sent.values():
                self.cache.delete(name, namespace)
            self._sync("checkpoint ResourceClaim state")
