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
import time
from typing import TYPE_CHECKING, Any

from drasim.errors import ApiError, DrasimError, KubeletError
from drasim.runner.pods import PodRecord, split_ref

if TYPE_CHECKING:
    from drasim.runner.world import World

RESOURCE_V1 = "resource.k8s.io/v1"
JITTER_FACTOR = 0.5
"""pod_workers.go workerBackOffPeriodJitterFactor and workerResyncIntervalJitterFactor."""
EPSILON = 1e-9
"""Nominal seconds within which two moments count as the same (float sums of periods)."""
DELETION_FINALIZER = "drasim.dev/kubelet-termination"
"""Holds a gracefully deleted Pod (with its deletionTimestamp) until the kubelet finished it."""

REGISTRATION_MOVE = 1.0
"""Nominal seconds from which ``advanceClock`` settles registrations around the move (failed
ones are retried every nominal second)."""
REGISTRATION_SYNC = 15.0
"""Real seconds ``advanceClock`` waits for the kubelet's registrations to settle."""
CONNECT_WAIT = 5.0
"""The longest ``advanceClock`` waits for registered plugins' connections (real seconds)."""


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
            rec.cdi[ctr.name] = world.kubelet.get_resources_by_device(
                pod, rec.container_manifest(ctr.name, world.node)
            )
            if world.plan.options.record_checkpoint_bytes:
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
        world.kubelet.prepare_resources(rec.manifest(world.node))
    except KubeletError as err:
        rec.retry_due = world.clock.now + retry_delay(world, world.profile.timers.resync_interval)
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
        world.kubelet.unprepare_resources(rec.manifest(world.node))
    except KubeletError as err:
        rec.retry_due = world.clock.now + retry_delay(world, world.profile.timers.backoff_period)
        return str(err)
    finish_termination(world, rec)
    return None


def finish_termination(world: World, rec: PodRecord) -> None:
    """The pod's resources are released: Succeeded, or removed when it was being deleted."""
    rec.retry_due = None
    rec.cdi.clear()
    if rec.remove_after_unprepare:
        try:
            remove_from_api(world, rec)
        finally:
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
    api = world.api.runner_api
    verb = "get"
    try:
        pod = api.get("v1", "Pod", rec.name, rec.namespace)
        md = pod.setdefault("metadata", {})
        md["finalizers"] = [*(md.get("finalizers") or []), DELETION_FINALIZER]
        verb = "update"
        api.update(pod)
        verb = "delete"
        api.delete("v1", "Pod", rec.name, rec.namespace)
    except ApiError as err:
        if err.code in (401, 403):  # the run cannot work this way: say which permission is missing
            raise DrasimError(_denied_message(rec, verb, err)) from None
        return  # the pod went away meanwhile, or a transient answer: the kubelet goes on without it
    rec.deletion_marked = True


def _denied_message(rec: PodRecord, verb: str, err: ApiError, *, why: str = "") -> str:
    """A clear step error for a Pod write the API server refused to drasim's runner."""
    why = (
        why
        or {
            "get": "to read it",
            "update": f"to add the finalizer {DELETION_FINALIZER} that keeps it, with its deletionTimestamp, "
            "until the kubelet has finished it",
            "delete": "to delete it gracefully",
        }[verb]
    )
    return (
        f"pod {rec.key}: the API server refused drasim's runner '{verb} pods' ({why}): "
        f"{err.code} {err.reason}: {err.message}; the runner needs the permission '{verb} pods' "
        "(the RBAC a run needs: docs/backends.md)"
    )


def remove_from_api(world: World, rec: PodRecord) -> None:
    """Delete the Pod object, drop it from claims' reservedFor, delete its generated claims.

    A Pod that is already gone is no error. A refusal (401/403) is: the Pod would stay on the
    server, held by drasim's finalizer; the rest of the clean-up still runs, then the refusal
    is raised as a :class:`DrasimError` naming the permission.
    """
    denied = _delete_pod_object(world, rec) if rec.in_api else None
    rec.in_api = False
    for pc in rec.claims:
        name = rec.claim_name(pc)
        if not name:
            continue
        if pc.template:
            with contextlib.suppress(ApiError):
                world.api.runner_api.delete(RESOURCE_V1, "ResourceClaim", name, rec.namespace)
            continue
        unreserve(world, rec.namespace, name, rec.uid)
    if denied is not None:
        raise DrasimError(denied)


def _delete_pod_object(world: World, rec: PodRecord) -> str | None:
    """Remove the deletion finalizer (if set) and delete the Pod; the refusal's message, if any."""
    api = world.api.runner_api
    denied: str | None = None
    if rec.deletion_marked:
        verb = "get"
        try:
            pod = api.get("v1", "Pod", rec.name, rec.namespace)
            md = pod.setdefault("metadata", {})
            md["finalizers"] = [f for f in md.get("finalizers") or [] if f != DELETION_FINALIZER]
            verb = "update"
            api.update(pod)
        except ApiError as err:
            if err.code in (401, 403):
                why = f"to remove its finalizer {DELETION_FINALIZER}, or the Pod stays on the server"
                denied = _denied_message(rec, verb, err, why=why)
    try:
        # The kubelet's status manager deletes a terminated pod with grace period 0.
        api.delete("v1", "Pod", rec.name, rec.namespace, grace_period_seconds=0)
    except ApiError as err:
        if err.code in (401, 403) and denied is None:
            denied = _denied_message(rec, "delete", err, why="to delete it once the kubelet is done")
    return denied


def unreserve(world: World, namespace: str, name: str, pod_uid: str) -> None:
    """Remove a pod from a claim's status.reservedFor (what the resourceclaim controller does)."""
    try:
        claim = world.api.runner_api.get(RESOURCE_V1, "ResourceClaim", name, namespace)
    except ApiError:
        return
    status = claim.get("status") or {}
    reserved = [r for r in status.get("reservedFor") or [] if r.get("uid") != pod_uid]
    if len(reserved) != len(status.get("reservedFor") or []):
        status["reservedFor"] = reserved
        claim["status"] = status
        world.api.runner_api.update_status(claim)


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
    results: Any = world.kubelet.reconcile(active)
    world.journal.record(
        "kubelet",
        operation="reconcile",
        error="; ".join(f"{uid}: {err}" for uid, err in (results or {}).items() if err) or None,
    )


def find_pod(world: World, ref: str) -> PodRecord:
    """A pod by ``name`` or ``namespace/name``; a clear error names the known pods."""
    namespace, name = split_ref(ref)
    namespace = world.api.namespace(namespace)
    rec = world.pods.get(f"{namespace}/{name}")
    if rec is None:
        known = ", ".join(sorted(world.pods)) or "none"
        msg = f"no pod {namespace}/{name} was started in this scenario (pods: {known})"
        raise DrasimError(msg)
    return rec


def advance(world: World, seconds: float) -> None:
    """Move the nominal clock, firing every timer that falls due, in time order."""
    clock = world.clock
    target = clock.now + seconds
    if world.kubelet is not None and seconds >= REGISTRATION_MOVE:
        # A registration attempt still in flight (started while a fault was set, say) ends
        # before time moves: its backoff then runs from now, and the move makes it due.
        world.kubelet.sync_registrations(REGISTRATION_SYNC)
        _let_connections_come_up(world, seconds * clock.scale)
    for _ in range(100_000):  # a guard against timers that keep re-arming at zero delay
        when = _next_due(world, target)
        if when is None:
            break
        _fire(world, when)
    if world.kubelet is not None:
        world.kubelet.advance_timers((target - clock.now) * clock.scale)
        if seconds >= REGISTRATION_MOVE:
            retry_failed_registrations(world)
    clock.now = target


def _let_connections_come_up(world: World, budget: float) -> None:
    """Wait until each running driver the kubelet registered has a connected instance, at
    most ``budget`` real seconds (what the clock's move stands for) and :data:`CONNECT_WAIT`.

    A registered plugin's gRPC connection comes up in real time, while ``advanceClock`` moves
    the kubelet's timers at once. Since 1.34 only a connected instance cancels the driver's
    slice wipe, which is due 30 s after a registration without one: a plugin registered just
    before the move (a retry the move's own registration sync made, say) must not lose its
    slices because its connection was a few milliseconds late. A driver that is down or
    refuses connections costs at most the budget, the real time the move stands for.
    """
    kubelet = world.kubelet
    assert kubelet is not None
    deadline = time.monotonic() + min(budget, CONNECT_WAIT)
    for handle in world.fleet.drivers.values():
        if not handle.running:
            continue
        instances = kubelet.instances(handle.name)
        if instances and not any(bool(i.connected) for i in instances):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            kubelet.wait_registered(handle.name, timeout=remaining, connected=True)


def _next_due(world: World, target: float) -> float | None:
    """The earliest moment, up to ``target``, when a timer of the running kubelet is due:
    a reconcile pass, a pod worker retry or one of its own timers (None: nothing is due)."""
    kubelet, clock = world.kubelet, world.clock
    if kubelet is None:
        return None
    due = [rec.retry_due for rec in world.pods.values() if rec.retry_due is not None]
    if clock.next_reconcile is not None:
        due.append(clock.next_reconcile)
    pending = kubelet.pending_timers()
    if pending:
        due.append(clock.now + pending[0] / clock.scale)
    upcoming = [t for t in due if t <= target + EPSILON]
    return max(min(upcoming), clock.now) if upcoming else None


def _fire(world: World, when: float) -> None:
    """Move the clock to ``when`` and run what is due then: the kubelet's timers, a reconcile
    pass, pod worker retries."""
    kubelet, clock, timers = world.kubelet, world.clock, world.profile.timers
    assert kubelet is not None
    kubelet.advance_timers((when - clock.now) * clock.scale)
    clock.now = when
    if clock.next_reconcile is not None and clock.next_reconcile <= when + EPSILON:
        clock.next_reconcile = when + float(timers.reconcile_period)
        clock.count_timer_run(timers)
        reconcile(world)
    for rec in list(world.pods.values()):
        if rec.retry_due is not None and rec.retry_due <= when + EPSILON:
            rec.retry_due = None
            clock.count_timer_run(timers)
            sync(world, rec)


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
    world.kubelet.sync_registrations(REGISTRATION_SYNC)
    for path in failed:
        world.journal.wait_for(REGISTRATION_SYNC, kind="registration", since_seq=mark, socket=path)
    world.fleet.settle_registrations()
