"""Action steps of a pod's life on the node: start, sync, sandbox and container restarts,
stop, graceful and forced deletion, and the pod worker's timers (reconcile, clock)."""

from __future__ import annotations

import contextlib

from drasim.allocator import AllocationError
from drasim.errors import ApiError, ConfigError
from drasim.runner import podworker
from drasim.runner.actions.claims import allocate_from_slices, reserve
from drasim.runner.actions.registry import RESOURCE_V1, check_error, handles
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.pods import PodRecord, claim_from_template, containers_of, pod_claims
from drasim.runner.world import World
from drasim.scenario import steps as S  # noqa: N812 - S.StartPod reads like the YAML


def _schedule(world: World, args: S.StartPod, rec: PodRecord) -> None:
    """What the resourceclaim controller and scheduler do before the pod reaches the node."""
    for pc in rec.claims:
        if pc.template:
            template = world.api.runner_api.get(
                RESOURCE_V1, "ResourceClaimTemplate", pc.template, rec.namespace
            )
            generated = f"{rec.name}-{pc.name}"
            world.api.runner_api.create(claim_from_template(template, name=generated, pod=rec))
            rec.generated_claims[pc.name] = generated
    if not (args.allocate or args.reserve):
        return
    for pc in rec.claims:
        name = rec.claim_name(pc)
        if not name:
            continue
        claim = world.api.runner_api.get(RESOURCE_V1, "ResourceClaim", name, rec.namespace)
        if args.allocate and not (claim.get("status") or {}).get("allocation"):
            claim = allocate_from_slices(world, claim)
        if args.reserve:
            claim = reserve(claim, rec)
        world.api.runner_api.update_status(claim)


@handles(S.StartPod)
def start_pod(world: World, args: S.StartPod, ctx: StepContext) -> None:
    """Bind a pod: claims from templates, allocation, reservation, then PrepareResources."""
    namespace = world.api.namespace(args.namespace)
    key = f"{namespace}/{args.name}"
    if key in world.pods and world.pods[key].phase != "Gone":
        raise StepFailure(f"startPod: pod {key} already exists in this scenario")
    claims = pod_claims(args.claims)
    rec = PodRecord(
        name=args.name,
        namespace=namespace,
        uid=args.uid or world.api.new_uid("Pod", key),
        claims=claims,
        containers=containers_of(args.containers, claims),
    )
    error: str | None = None
    if world.api.backend.real_cluster:
        error = _create_then_schedule(world, args, rec)
    else:
        try:
            with world.scheduling:
                _schedule(world, args, rec)
        except (ApiError, AllocationError, ConfigError) as err:
            error = f"scheduling pod {key}: {err}"
        if error is None:
            world.api.runner_api.create(rec.manifest(world.node))
    if error is None:
        world.pods[key] = rec
        error = podworker.prepare(world, rec)
    check_error(args.expect_error, error, f"startPod {key}")


def _create_then_schedule(world: World, args: S.StartPod, rec: PodRecord) -> str | None:
    """On a real cluster: create the pod first, then reserve its claims for the server's UID.

    A real API server assigns the pod's UID, and the resourceclaim controller drops a
    reservation whose pod it cannot find; so the pod exists before any claim names it. A
    scheduling failure deletes the pod again, leaving what the other backends leave.
    """
    created = world.api.runner_api.create(rec.manifest(world.node))
    rec.uid = str((created.get("metadata") or {}).get("uid") or rec.uid)
    try:
        with world.scheduling:
            _schedule(world, args, rec)
    except (ApiError, AllocationError, ConfigError) as err:
        with contextlib.suppress(ApiError):
            world.api.runner_api.delete("v1", "Pod", rec.name, rec.namespace, grace_period_seconds=0)
        return f"scheduling pod {rec.key}: {err}"
    if rec.generated_claims:
        status = {"status": rec.manifest(world.node)["status"]}
        world.api.runner_api.patch("v1", "Pod", rec.name, status, rec.namespace, subresource="status")
    return None


@handles(S.SyncPod)
def sync_pod(world: World, args: S.SyncPod, ctx: StepContext) -> None:
    """Make the pod worker sync the pod now."""
    rec = podworker.find_pod(world, args.pod)
    check_error(args.expect_error, podworker.sync(world, rec), f"syncPod {rec.key}")


@handles(S.RecreateSandbox)
def recreate_sandbox(world: World, args: S.RecreateSandbox, ctx: StepContext) -> None:
    """A Running pod gets a new sandbox: PrepareResources again."""
    rec = podworker.find_pod(world, args.pod)
    if rec.phase != "Running":
        raise StepFailure(f"recreateSandbox: pod {rec.key} is {rec.phase}, not Running")
    check_error(args.expect_error, podworker.prepare(world, rec), f"recreateSandbox {rec.key}")


@handles(S.RestartContainer)
def restart_container(world: World, args: S.RestartContainer, ctx: StepContext) -> None:
    """A container restarts in its sandbox: no DRA call, CDI devices computed again."""
    rec = podworker.find_pod(world, args.pod)
    podworker.compute_cdi(world, rec)


@handles(S.StopPod)
def stop_pod(world: World, args: S.StopPod, ctx: StepContext) -> None:
    """Containers finish: UnprepareResources; the pod object stays."""
    rec = podworker.find_pod(world, args.pod)
    check_error(args.expect_error, podworker.unprepare(world, rec), f"stopPod {rec.key}")


@handles(S.DeletePod)
def delete_pod(world: World, args: S.DeletePod, ctx: StepContext) -> None:
    """Graceful deletion: unprepare, then remove the pod (it waits with a deletionTimestamp until then)."""
    rec = podworker.find_pod(world, args.pod)
    rec.remove_after_unprepare = True
    error: str | None = None
    if world.kubelet is None:
        # The pod waits in the API server; the next kubelet's pod worker terminates it at start.
        if rec.phase in ("Pending", "Running"):
            rec.phase = "Terminating"
        rec.retry_due = None
    elif rec.phase in ("Succeeded", "Gone"):
        podworker.finish_termination(world, rec)
    else:
        error = podworker.unprepare(world, rec)
    if rec.phase != "Gone":
        podworker.mark_deleted(world, rec)
    check_error(args.expect_error, error, f"deletePod {rec.key}")


@handles(S.ForceDeletePod)
def force_delete_pod(world: World, args: S.ForceDeletePod, ctx: StepContext) -> None:
    """Remove the pod from the API at once; a running kubelet's pod worker unprepares it now.

    Upstream HandlePodRemoves → deletePod → pod worker → SyncTerminatingPod →
    UnprepareDynamicResources. A stopped kubelet never learns of the pod: only reconcile finds it.
    """
    rec = podworker.find_pod(world, args.pod)
    podworker.remove_from_api(world, rec)
    rec.remove_after_unprepare = True
    error: str | None = None
    if world.kubelet is None or rec.phase in ("Succeeded", "Gone"):
        rec.retry_due = None
        rec.cdi.clear()
        rec.phase = "Gone"
    else:
        error = podworker.unprepare(world, rec)
    check_error(args.expect_error, error, f"forceDeletePod {rec.key}")


@handles(S.Reconcile)
def reconcile(world: World, args: S.Reconcile, ctx: StepContext) -> None:
    """One reconcile pass now."""
    if world.kubelet is None:
        raise StepFailure("reconcile: the kubelet is stopped")
    podworker.reconcile(world)


@handles(S.AdvanceClock)
def advance_clock(world: World, args: S.AdvanceClock, ctx: StepContext) -> None:
    """Move nominal time; due timers fire."""
    podworker.advance(world, args.seconds)
