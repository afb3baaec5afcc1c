"""The kubelet's pod worker, as far as DRA is concerned, plus the nominal clock.

``prepare``/``unprepare`` call the emulated kubelet at the moments the real one
does and move the pod through its phases. A failed unprepare (SyncTerminatingPod
returns the error) is retried after the pod worker's backoff (``backoffPeriod``,
10 s); a failed prepare is not reported to the pod worker by SyncPod, so it waits
for the next resync (``resyncInterval``, 60 s). Both waits are jittered upstream
(factor 0.5); ``retryJitter`` picks the moment. ``advance`` moves the nominal
clock and fires, in time order, reconcile passes, pod retries and the plugin
layer's timers (slice wipes, registration retries, health re-opens).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

from drasim.errors import ApiError, ConfigError, DrasimError, KubeletError
from drasim.runner.pods import PodRecord, split_ref
from drasim.scenario.limits import MAX_TIMER_RUNS

if TYPE_CHECKING:
    from drasim.runner.world import World

RESOURCE_V1 = "resource.k8s.io/v1"
JITTER_FACTOR = 0.5
"""pod_workers.go workerBackOffPeriodJitterFactor and workerResyncIntervalJitterFactor."""
DELETION_FINALIZER = "drasim.dev/kubelet-termination"
"""Holds a gracefully deleted Pod (with its deletionTimestamp) until the kubelet finished it."""


def retry_delay(world: World, period: float) -> float:
    """``wait.Jitter(period, 0.5)`` with the scenario's fixed ``retryJitter`` instead of a random factor."""
    return float(period) * (1.0 + JITTER_FACTOR * float(world.profile.timers.retry_jitter))


def compute_cdi(world: World, rec: PodRecord) -> None:
    """Remember the CDI devices each container gets at its start (GetResources)."""
    if world.kubelet is None:
        return
    pod = rec.manifest(world.node)
    for ctr in rec.containers:
        try:
            rec.cdi[ctr.name] = world.kubelet.manager.get_resources_by_device(
                pod, rec.container_manifest(ctr.name, world.node)
            )
            if world.options.record_checkpoint_bytes:
                world.journal.record(
                    "kubelet",
                    operation="GetResources",
                    pod=rec.key,
                    container=ctr.name,
                    cdi=[list(group) for group in rec.cdi[ctr.name]],
                    error=None,
                )
        except DrasimError as err:
            world.journal.record(
                "kubelet", operation="GetResources", pod=rec.key, pod_uid=rec.uid, error=str(err)
            )
            rec.cdi[ctr.name] = []


def prepare(world: World, rec: PodRecord) -> str | None:
    """PrepareResources for a pod that needs a sandbox; returns the error text, if any."""
    if world.kubelet is None:
        return None
    try:
        world.kubelet.manager.prepare_resources(rec.manifest(world.node))
    except KubeletError as err:
        rec.retry_due = world.now + retry_delay(world, world.profile.timers.resync_interval)
        return str(err)
    rec.phase = "Running"
    rec.retry_due = None
    compute_cdi(world, rec)
    return None


def unprepare(world: World, rec: PodRecord) -> str | None:
    """UnprepareResources for a pod whose containers stopped; returns the error text, if any."""
    rec.phase = "Terminating"
    if world.kubelet is None:
        return None
    try:
        world.kubelet.manager.unprepare_resources(rec.manifest(world.node))
    except KubeletError as err:
        rec.retry_due = world.now + retry_delay(world, world.profile.timers.backoff_period)
        return str(err)
    finish_termination(world, rec)
    return None


def finish_termination(world: World, rec: PodRecord) -> None:
    """The pod's resources are released: Succeeded, or removed when it was being deleted."""
    rec.retry_due = None
    rec.cdi.clear()
    if rec.remove_after_unprepare:
        remove_from_api(world, rec)
        rec.phase = "Gone"
    else:
        rec.phase = "Succeeded"


def mark_deleted(world: World, rec: PodRecord) -> None:
    """A graceful delete the kubelet has not finished: the Pod stays, with a deletionTimestamp.

    The fake API server deletes a Pod at once, so a finalizer keeps it until the kubelet is
    done (upstream the status manager deletes it then, with grace period 0).
    """
    if not rec.in_api or rec.deletion_marked:
        return
    with contextlib.suppress(ApiError):
        pod = world.runner_api.get("v1", "Pod", rec.name, rec.namespace)
        md = pod.setdefault("metadata", {})
        md["finalizers"] = [*(md.get("finalizers") or []), DELETION_FINALIZER]
        world.runner_api.update(pod)
        world.runner_api.delete("v1", "Pod", rec.name, rec.namespace)
        rec.deletion_marked = True


def remove_from_api(world: World, rec: PodRecord) -> None:
    """Delete the Pod object, drop it from claims' reservedFor, delete its generated claims."""
    if rec.in_api and rec.deletion_marked:
        with contextlib.suppress(ApiError):
            pod = world.runner_api.get("v1", "Pod", rec.name, rec.namespace)
            md = pod.setdefault("metadata", {})
            md["finalizers"] = [f for f in md.get("finalizers") or [] if f != DELETION_FINALIZER]
            world.runner_api.update(pod)
    if rec.in_api:
        with contextlib.suppress(ApiError):
            # The kubelet's status manager deletes a terminated pod with grace period 0.
            world.runner_api.delete("v1", "Pod", rec.name, rec.namespace, grace_period_seconds=0)
    rec.in_api = False
    for pc in rec.claims:
        name = rec.claim_name(pc)
        if not name:
            continue
        if pc.template:
            with contextlib.suppress(ApiError):
                world.runner_api.delete(RESOURCE_V1, "ResourceClaim", name, rec.namespace)
            continue
        unreserve(world, rec.namespace, name, rec.uid)


def unreserve(world: World, namespace: str, name: str, pod_uid: str) -> None:
    """Remove a pod from a claim's status.reservedFor (what the resourceclaim controller does)."""
    try:
        claim = world.runner_api.get(RESOURCE_V1, "ResourceClaim", name, namespace)
    except ApiError:
        return
    status = claim.get("status") or {}
    reserved = [r for r in status.get("reservedFor") or [] if r.get("uid") != pod_uid]
    if len(reserved) != len(status.get("reservedFor") or []):
        status["reservedFor"] = reserved
        claim["status"] = status
        world.runner_api.update_status(claim)


def sync(world: World, rec: PodRecord, *, running_too: bool = False) -> str | None:
    """One pod-worker sync: Pending → prepare, Terminating → unprepare (Running: only if asked).

    A Succeeded pod whose deletion waited for the kubelet is removed from the API server.
    """
    if rec.phase == "Pending" and rec.in_api:
        return prepare(world, rec)
    if rec.phase == "Terminating":
        return unprepare(world, rec)
    if rec.phase == "Running" and running_too:
        return prepare(world, rec)
    if rec.phase == "Succeeded" and rec.remove_after_unprepare:
        finish_termination(world, rec)
    return None


def sync_all(world: World, *, running_too: bool = False) -> None:
    """A (re)started kubelet syncs every pod bound to the node; errors are only journaled.

    Pods no longer in the API server (force-deleted) are unknown to a new kubelet: only
    its reconcile loop can find their claims.
    """
    for rec in list(world.pods.values()):
        if not rec.in_api and rec.phase != "Gone":
            rec.phase, rec.retry_due = "Gone", None
            rec.cdi.clear()
            continue
        sync(world, rec, running_too=running_too)


def reconcile(world: World) -> None:
    """One reconcile pass; afterwards pods whose claims are gone finish terminating."""
    if world.kubelet is None:
        return
    active = [rec.uid for rec in world.pods.values() if rec.active]
    results: Any = world.kubelet.manager.reconcile(active)
    world.journal.record(
        "kubelet",
        operation="reconcile",
        error="; ".join(f"{uid}: {err}" for uid, err in (results or {}).items() if err) or None,
    )


def find_pod(world: World, ref: str) -> PodRecord:
    """A pod by ``name`` or ``namespace/name``; a clear error names the known pods."""
    namespace, name = split_ref(ref)
    namespace = world.namespace(namespace)
    rec = world.pods.get(f"{namespace}/{name}")
    if rec is None:
        known = ", ".join(sorted(world.pods)) or "none"
        msg = f"no pod {namespace}/{name} was started in this scenario (pods: {known})"
        raise DrasimError(msg)
    return rec


def advance(world: World, seconds: float) -> None:
    """Move the nominal clock, firing every timer that falls due, in time order."""
    target = world.now + seconds
    scale = world.time_scale or 1.0
    for _ in range(100_000):  # a guard against timers that keep re-arming at zero delay
        due: list[float] = []
        kubelet = world.kubelet
        if kubelet is not None:
            if world.next_reconcile is not None:
                due.append(world.next_reconcile)
            due.extend(rec.retry_due for rec in world.pods.values() if rec.retry_due is not None)
            pending = kubelet.scheduler.pending()
            if pending:
                due.append(world.now + pending[0] / scale)
        upcoming = [t for t in due if t <= target + 1e-9]
        if not upcoming:
            break
        when = max(min(upcoming), world.now)
        if kubelet is not None:
            kubelet.scheduler.advance((when - world.now) * scale)
        world.now = when
        if kubelet is not None and world.next_reconcile is not None and world.next_reconcile <= when + 1e-9:
            world.next_reconcile = when + float(world.profile.timers.reconcile_period)
            _count_timer_run(world)
            reconcile(world)
        for rec in list(world.pods.values()):
            if rec.retry_due is not None and rec.retry_due <= when + 1e-9:
                rec.retry_due = None
                _count_timer_run(world)
                sync(world, rec)
    if world.kubelet is not None:
        world.kubelet.scheduler.advance((target - world.now) * scale)
        if seconds >= 1.0:
            retry_failed_registrations(world)
    world.now = target


def _count_timer_run(world: World) -> None:
    """One more reconcile pass or pod retry fired by the clock; a run gets :data:`MAX_TIMER_RUNS`."""
    if world.aborted.is_set():
        msg = "the run was stopped (its time limit passed)"
        raise DrasimError(msg)
    world.timer_runs += 1
    if world.timer_runs > MAX_TIMER_RUNS:
        timers = world.profile.timers
        msg = (
            f"the nominal clock fired more than {MAX_TIMER_RUNS} reconcile passes and pod retries in "
            f"this scenario (reconcile passes every {timers.reconcile_period:g}s, pod retries after "
            f"{timers.backoff_period:g}s / {timers.resync_interval:g}s): advance the clock less or use "
            "longer timer periods"
        )
        raise ConfigError(msg)


def retry_failed_registrations(world: World) -> None:
    """Let the kubelet retry registrations that failed (its backoff starts at 0.5 s).

    The plugin reconciler retries on a real-time backoff; when the scenario's clock moves
    past it, wait until each failed socket that still exists has been tried once more.
    """
    assert world.kubelet is not None
    latest: dict[str, str] = {}
    for event in world.journal.events("registration"):
        latest[str(event.get("socket"))] = str(event.get("outcome"))
    failed = [path for path, outcome in latest.items() if outcome == "failed" and os.path.exists(path)]
    mark = world.journal.mark()
    world.kubelet.host.sync(timeout=15.0)
    for path in failed:
        world.journal.wait_for(15.0, kind="registration", since_seq=mark, socket=path)
    world.settle_registrations()
