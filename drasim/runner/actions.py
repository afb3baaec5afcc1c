"""Action steps: one handler per step type of :mod:`drasim.scenario.steps`.

Each handler does what the step's docstring promises and raises
:class:`~drasim.runner.context.StepFailure` when the step's own ``expectError`` does
not hold (an error that was not expected, or an expected error that did not come).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable
from typing import Any

from drasim.allocator import AllocationError, allocate
from drasim.errors import ApiError, ConfigError, DrasimError, KubeletError
from drasim.plugins.health import health_check_timeout, truncate_health_message
from drasim.runner import podworker
from drasim.runner.backends import CLUSTER_SCOPED
from drasim.runner.checks_node import list_slices, slice_identities
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.pods import PodRecord, claim_from_template, containers_of, pod_claims, split_ref
from drasim.runner.world import SimulatedCrash, World
from drasim.scenario import steps as S  # noqa: N812 - S.StartPod reads like the YAML
from drasim.scenario.common import ErrorMatch

RESOURCE_V1 = "resource.k8s.io/v1"
HEALTH_REPORT_WAIT = 10.0
"""Real seconds ``setDeviceHealth`` waits for the kubelet to store the report it sent."""
Handler = Callable[[World, Any, StepContext], None]


def check_error(expect: ErrorMatch | str | None, error: str | None, what: str) -> None:
    """Compare an operation's outcome with a step's ``expectError``."""
    if expect is None:
        if error is not None:
            raise StepFailure(f"{what} failed: {error}", expected="success", actual=error)
        return
    matcher = ErrorMatch(contains=expect) if isinstance(expect, str) else expect
    if error is None:
        raise StepFailure(
            f"{what} succeeded, but an error that {matcher.describe()} was expected",
            expected=matcher.describe(),
            actual="success",
        )
    if matcher.contains and matcher.contains not in error:
        raise StepFailure(
            f"{what} failed with an unexpected error: {error}", expected=matcher.describe(), actual=error
        )
    if matcher.matches and not re.search(matcher.matches, error):
        raise StepFailure(
            f"{what} failed with an unexpected error: {error}", expected=matcher.describe(), actual=error
        )


def _api(fn: Callable[[], object]) -> str | None:
    try:
        fn()
    except (ApiError, ConfigError) as err:
        return str(err)
    return None


# ----------------------------------------------------------------------------- objects
def _write_objects(
    world: World, objects: list[dict[str, Any]], write: Callable[[dict[str, Any]], object]
) -> str | None:
    """Write manifests in order; the first API error stops the step and is returned."""
    for obj in objects:
        manifest = world.manifest(obj)
        error = _api(lambda: write(manifest))  # noqa: B023 - called at once
        if error is not None:
            return error
    return None


def apply(world: World, args: S.Apply, ctx: StepContext) -> None:
    """kubectl apply."""
    check_error(args.expect_error, _write_objects(world, args.objects, world.runner_api.apply), "apply")


def create(world: World, args: S.Create, ctx: StepContext) -> None:
    """kubectl create."""
    check_error(args.expect_error, _write_objects(world, args.objects, world.runner_api.create), "create")


def _api_version(kind: str, given: str) -> str:
    if given:
        return given
    core = {"Pod", "Node", "Namespace", "Event", "ConfigMap", "Secret"}
    return "v1" if kind in core else RESOURCE_V1


def delete(world: World, args: S.Delete, ctx: StepContext) -> None:
    """Delete one object."""
    api_version = _api_version(args.kind, args.api_version)
    name = world.backend.object_name(args.kind, args.name)
    namespace = "" if args.kind in CLUSTER_SCOPED else world.namespace(args.namespace)
    error = _api(lambda: world.runner_api.delete(api_version, args.kind, name, namespace))
    check_error(args.expect_error, error, f"delete {args.kind} {args.namespace}/{args.name}")


# ----------------------------------------------------------------------------- claims
def _claim(world: World, ref: str, namespace: str = "default") -> dict[str, Any]:
    ns, name = split_ref(ref, namespace)
    return world.runner_api.get(RESOURCE_V1, "ResourceClaim", name, world.namespace(ns))


def _allocate_from_slices(world: World, claim: dict[str, Any]) -> dict[str, Any]:
    world.wait_republished_slices()
    slices = world.runner_api.list(RESOURCE_V1, "ResourceSlice")
    classes = world.runner_api.list(RESOURCE_V1, "DeviceClass")
    others = [
        c
        for c in world.runner_api.list(RESOURCE_V1, "ResourceClaim")
        if (c.get("status") or {}).get("allocation")
    ]
    return allocate(
        claim, slices=slices, classes=classes, allocated_claims=others, node_name=world.node, pods=[]
    )


def _explicit_results(
    world: World, claim: dict[str, Any], devices: list[S.DeviceRef]
) -> list[dict[str, Any]]:
    requests = [r.get("name") for r in (claim.get("spec") or {}).get("devices", {}).get("requests", [])]
    results = []
    for ref in devices:
        driver = world.driver(ref.driver).name
        result: dict[str, Any] = {
            "request": ref.request or (requests[0] if requests else "req-0"),
            "driver": driver,
            "pool": ref.pool or world.node,
            "device": ref.device,
        }
        if ref.admin_access:
            result["adminAccess"] = True
        if ref.share_id:
            result["shareID"] = ref.share_id
        results.append(result)
    return results


def _node_selector(node: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
    }


def allocate_claim(world: World, args: S.Allocate, ctx: StepContext) -> None:
    """Fill status.allocation from slices, explicit devices or another claim."""
    error: str | None = None
    try:
        claim = _claim(world, args.claim)
        status = claim.setdefault("status", {})
        if args.same_as:
            other = _claim(world, args.same_as)
            allocation = (other.get("status") or {}).get("allocation")
            if not allocation:
                raise ConfigError(f"allocate: sameAs claim {args.same_as} is not allocated")
            status["allocation"] = allocation
        elif args.devices:
            status["allocation"] = {
                "devices": {"results": _explicit_results(world, claim, args.devices)},
                "nodeSelector": _node_selector(world.node),
            }
        else:
            claim = _allocate_from_slices(world, claim)
        world.runner_api.update_status(claim)
    except (ApiError, AllocationError, ConfigError) as err:
        error = str(err)
    check_error(args.expect_error, error, f"allocate {args.claim}")


def deallocate(world: World, args: S.Deallocate, ctx: StepContext) -> None:
    """Clear allocation and reservations."""
    claim = _claim(world, args.claim)
    claim["status"] = {}
    world.runner_api.update_status(claim)


def _reserve(claim: dict[str, Any], rec: PodRecord) -> dict[str, Any]:
    status = claim.setdefault("status", {})
    reserved = status.setdefault("reservedFor", [])
    if not any(r.get("uid") == rec.uid for r in reserved):
        reserved.append({"resource": "pods", "name": rec.name, "uid": rec.uid})
    return claim


# ----------------------------------------------------------------------------- pods
def _schedule(world: World, args: S.StartPod, rec: PodRecord) -> None:
    """What the resourceclaim controller and scheduler do before the pod reaches the node."""
    for pc in rec.claims:
        if pc.template:
            template = world.runner_api.get(RESOURCE_V1, "ResourceClaimTemplate", pc.template, rec.namespace)
            generated = f"{rec.name}-{pc.name}"
            world.runner_api.create(claim_from_template(template, name=generated, pod=rec))
            rec.generated_claims[pc.name] = generated
    if not (args.allocate or args.reserve):
        return
    for pc in rec.claims:
        name = rec.claim_name(pc)
        if not name:
            continue
        claim = world.runner_api.get(RESOURCE_V1, "ResourceClaim", name, rec.namespace)
        if args.allocate and not (claim.get("status") or {}).get("allocation"):
            claim = _allocate_from_slices(world, claim)
        if args.reserve:
            claim = _reserve(claim, rec)
        world.runner_api.update_status(claim)


def start_pod(world: World, args: S.StartPod, ctx: StepContext) -> None:
    """Bind a pod: claims from templates, allocation, reservation, then PrepareResources."""
    namespace = world.namespace(args.namespace)
    key = f"{namespace}/{args.name}"
    if key in world.pods and world.pods[key].phase != "Gone":
        raise StepFailure(f"startPod: pod {key} already exists in this scenario")
    claims = pod_claims(args.claims)
    rec = PodRecord(
        name=args.name,
        namespace=namespace,
        uid=args.uid or world.new_uid("Pod", key),
        claims=claims,
        containers=containers_of(args.containers, claims),
    )
    error: str | None = None
    if world.backend.real_cluster:
        error = _create_then_schedule(world, args, rec)
    else:
        try:
            with world.scheduling:
                _schedule(world, args, rec)
        except (ApiError, AllocationError, ConfigError) as err:
            error = f"scheduling pod {key}: {err}"
        if error is None:
            world.runner_api.create(rec.manifest(world.node))
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
    created = world.runner_api.create(rec.manifest(world.node))
    rec.uid = str((created.get("metadata") or {}).get("uid") or rec.uid)
    try:
        with world.scheduling:
            _schedule(world, args, rec)
    except (ApiError, AllocationError, ConfigError) as err:
        with contextlib.suppress(ApiError):
            world.runner_api.delete("v1", "Pod", rec.name, rec.namespace, grace_period_seconds=0)
        return f"scheduling pod {rec.key}: {err}"
    if rec.generated_claims:
        status = {"status": rec.manifest(world.node)["status"]}
        world.runner_api.patch("v1", "Pod", rec.name, status, rec.namespace, subresource="status")
    return None


def sync_pod(world: World, args: S.SyncPod, ctx: StepContext) -> None:
    """Make the pod worker sync the pod now."""
    rec = podworker.find_pod(world, args.pod)
    check_error(args.expect_error, podworker.sync(world, rec), f"syncPod {rec.key}")


def recreate_sandbox(world: World, args: S.RecreateSandbox, ctx: StepContext) -> None:
    """A Running pod gets a new sandbox: PrepareResources again."""
    rec = podworker.find_pod(world, args.pod)
    if rec.phase != "Running":
        raise StepFailure(f"recreateSandbox: pod {rec.key} is {rec.phase}, not Running")
    check_error(args.expect_error, podworker.prepare(world, rec), f"recreateSandbox {rec.key}")


def restart_container(world: World, args: S.RestartContainer, ctx: StepContext) -> None:
    """A container restarts in its sandbox: no DRA call, CDI devices computed again."""
    rec = podworker.find_pod(world, args.pod)
    podworker.compute_cdi(world, rec)


def stop_pod(world: World, args: S.StopPod, ctx: StepContext) -> None:
    """Containers finish: UnprepareResources; the pod object stays."""
    rec = podworker.find_pod(world, args.pod)
    check_error(args.expect_error, podworker.unprepare(world, rec), f"stopPod {rec.key}")


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


def reconcile(world: World, args: S.Reconcile, ctx: StepContext) -> None:
    """One reconcile pass now."""
    if world.kubelet is None:
        raise StepFailure("reconcile: the kubelet is stopped")
    podworker.reconcile(world)


def advance_clock(world: World, args: S.AdvanceClock, ctx: StepContext) -> None:
    """Move nominal time; due timers fire."""
    podworker.advance(world, args.seconds)


# ----------------------------------------------------------------------------- kubelet
def _start_kubelet(world: World, expect: ErrorMatch | str | None, *, running_too: bool) -> None:
    error: str | None = None
    try:
        world.start_kubelet()
    except KubeletError as err:
        error = str(err)
    check_error(expect, error, "kubelet start")
    if world.kubelet is not None:
        podworker.sync_all(world, running_too=running_too)


def stop_kubelet(world: World, args: S.StopKubelet, ctx: StepContext) -> None:
    """Stop the kubelet cleanly."""
    world.stop_kubelet()


def start_kubelet(world: World, args: S.StartKubelet, ctx: StepContext) -> None:
    """Start a kubelet from the checkpoint and sync pods."""
    if world.kubelet is not None:
        raise StepFailure("startKubelet: the kubelet is already running")
    if args.version:
        world.set_version(args.version)
    _start_kubelet(world, args.expect_error, running_too=world.profile.re_prepare_after_restart == "allPods")


def restart_kubelet(world: World, args: S.RestartKubelet, ctx: StepContext) -> None:
    """Stop (or crash at a hook point while running ``during``) and start again."""
    if args.crash_at:
        if args.during is None:
            raise StepFailure("restartKubelet: crashAt needs a 'during' action that reaches the hook point")
        world.crash_at, world.crashed_at = args.crash_at, None
        try:
            run_action(world, args.during.name, args.during.args, ctx)
        except SimulatedCrash:
            pass
        finally:
            world.crash_at = None
        if world.crashed_at is None:
            raise StepFailure(
                f"restartKubelet: the kubelet never reached hook point {args.crash_at} during "
                f"{args.during.name}",
                expected=args.crash_at,
                actual="not reached",
            )
        world.journal.record("kubelet", operation="crash", point=args.crash_at, error=None)
    world.stop_kubelet()
    podworker.advance(world, args.downtime)
    if args.version:
        world.set_version(args.version)
    if args.stay_down:
        return
    _start_kubelet(world, args.expect_error, running_too=world.profile.re_prepare_after_restart == "allPods")


# ----------------------------------------------------------------------------- plugins
def restart_plugin(world: World, args: S.RestartPlugin, ctx: StepContext) -> None:
    """Graceful stop, downtime, start."""
    handle = world.driver(args.driver)
    world.stop_driver(handle, kill=False)
    podworker.advance(world, args.downtime)
    world.start_driver(handle)


def kill_plugin(world: World, args: S.KillPlugin, ctx: StepContext) -> None:
    """SIGKILL: stale sockets stay."""
    world.stop_driver(world.driver(args.driver), kill=True)


def stop_plugin(world: World, args: S.StopPlugin, ctx: StepContext) -> None:
    """Graceful stop."""
    world.stop_driver(world.driver(args.driver), kill=False)


def start_plugin(world: World, args: S.StartPlugin, ctx: StepContext) -> None:
    """Start again."""
    world.start_driver(world.driver(args.driver))


def deregister_plugin(world: World, args: S.DeregisterPlugin, ctx: StepContext) -> None:
    """Remove only the registration socket."""
    handle = world.driver(args.driver)
    path = handle.registration_socket()
    if path is None:
        raise StepFailure(f"deregisterPlugin: the registration socket of {handle.name} is not known")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    if world.kubelet is not None:
        world.settle_registrations()


def fault(world: World, args: S.Fault, ctx: StepContext) -> None:
    """Add a plugin or API-server fault rule."""
    if (args.plugin is None) == (args.api_server is None):
        raise ConfigError("fault: give exactly one of plugin or apiServer")
    if args.plugin is not None:
        handle = world.driver(args.plugin.driver)
        handle.add_fault(world.plugin_fault(args.plugin), world.time_scale)
        world.journal.record("fault", where="plugin", driver=handle.name, spec=args.plugin)
    else:
        world.add_api_fault(args.api_server)


def clear_faults(world: World, args: S.ClearFaults, ctx: StepContext) -> None:
    """Remove fault rules."""
    handles = [world.driver(args.driver)] if args.driver else list(world.drivers.values())
    for handle in handles:
        handle.clear_faults()
    if not args.driver and world.backend.store is not None:
        world.backend.store.faults.clear()


UNBLOCK_WAIT = 10.0
"""Real seconds ``unblock`` waits for each released call to finish at the plugin."""


def unblock(world: World, args: S.Unblock, ctx: StepContext) -> None:
    """Release the calls held by block/hang faults and wait until the plugin finished them."""
    handle = world.driver(args.driver)
    driver = getattr(handle, "driver", None)
    if driver is None or not hasattr(driver, "held_calls"):
        raise ConfigError(f"unblock: driver {handle.name} is a real driver process; it needs the fake plugin")
    held = int(driver.held_calls())
    if held == 0:
        raise StepFailure(
            f"unblock: no call of {handle.name} is held by a block or hang fault",
            expected={"held": ">= 1"},
            actual={"held": 0},
        )
    mark = world.journal.mark()
    driver.release_hangs()
    for _ in range(held):
        event = world.journal.wait_for(UNBLOCK_WAIT, kind="rpc", since_seq=mark, side="plugin")
        if event is None:
            raise StepFailure(
                f"unblock: a released call of {handle.name} did not finish within {UNBLOCK_WAIT:g}s"
            )
        mark = int(event["seq"])
    world.journal.record("fault", where="plugin", driver=handle.name, description=f"unblocked {held} call(s)")


# ----------------------------------------------------------------------------- node state
_LEGACY_CHECKPOINT = (
    '{"version":"v1","entries":[{"DriverName":"test-driver.cdi.k8s.io","ClassName":"class-name",'
    '"ClaimUID":"067798be-454e-4be4-9047-1aa06aea63f7","ClaimName":"example","Namespace":"default",'
    '"PodUIDs":{"139cdb46-f989-4f17-9561-ca10cfb509a6":{}},"ResourceHandles":[{"driverName":'
    '"test-driver.cdi.k8s.io","data":"{\\"a\\": \\"b\\"}"}],"CDIDevices":{"test-driver.cdi.k8s.io":'
    '["example.com/example=cdi-example"]}}],"checksum":113577689}'
)


def corrupt_checkpoint(world: World, args: S.CorruptCheckpoint, ctx: StepContext) -> None:
    """Damage dra_manager_state."""
    path = world.workspace.checkpoint_path
    data = path.read_bytes() if path.exists() else b""
    if args.mode == "checksum":
        match = re.search(rb'"Checksum":(\d+)', data)
        if match is None:
            raise StepFailure("corruptCheckpoint: the checkpoint has no Checksum to damage")
        wrong = str((int(match.group(1)) + 1) % 2**32).encode()
        data = data[: match.start(1)] + wrong + data[match.end(1) :]
    elif args.mode == "truncate":
        data = data[: len(data) // 2]
    elif args.mode == "invalidJson":
        data = b"{"
    elif args.mode == "legacyFormat":
        data = _LEGACY_CHECKPOINT.encode()
    else:
        data = args.content.encode()
    path.write_bytes(data)
    world.journal.record("fault", where="checkpoint", description=f"corruptCheckpoint {args.mode}")


def delete_checkpoint(world: World, args: S.DeleteCheckpoint, ctx: StepContext) -> None:
    """Remove dra_manager_state."""
    with contextlib.suppress(FileNotFoundError):
        world.workspace.checkpoint_path.unlink()


def clear_cdi_dir(world: World, args: S.ClearCdiDir, ctx: StepContext) -> None:
    """Delete every CDI spec file."""
    for path in world.workspace.cdi_dir.iterdir():
        if path.is_file():
            path.unlink()


def reboot_node(world: World, args: S.RebootNode, ctx: StepContext) -> None:
    """Kubelet down, plugins killed, CDI tmpfs cleared, stale sockets gone, then everything back."""
    world.stop_kubelet()
    for handle in world.drivers.values():
        handle.kill()
    clear_cdi_dir(world, S.ClearCdiDir(), ctx)
    for directory in (world.workspace.registry_dir, world.workspace.plugins_dir):
        for path in directory.rglob("*"):
            if path.is_socket():
                path.unlink()
    podworker.advance(world, args.downtime)
    for handle in world.drivers.values():
        world.start_driver(handle, wait=False)
    _start_kubelet(world, None, running_too=True)


def set_device_health(world: World, args: S.SetDeviceHealth, ctx: StepContext) -> None:
    """Report health on the fake plugin's stream and wait for the kubelet to store that report.

    The wait is for a report stored after this step sent it, with this health, message and
    timeout: re-sending the current health with another message or timeout (or the same
    one, which restarts the timeout) must not return before the kubelet got it.
    """
    handle = world.driver(args.driver)
    pool = args.pool or world.node
    key = (handle.name, pool, args.device)
    want = {
        "health": args.health,
        # What this kubelet version keeps: messages since 1.36, per-device timeouts since 1.35.
        "message": truncate_health_message(args.message) if world.version.health_message else "",
        "timeout": health_check_timeout(
            args.timeout_seconds if world.version.per_device_health_timeout else 0
        ),
    }
    with world.health_changed:
        before = world.health.get(key)
    handle.set_health(
        args.device, args.health, pool=pool, message=args.message, timeout_seconds=args.timeout_seconds
    )
    if world.kubelet is None:
        return

    def stored() -> bool:
        entry = world.health.get(key)
        return entry is not None and entry is not before and all(entry.get(k) == v for k, v in want.items())

    with world.health_changed:
        arrived = world.health_changed.wait_for(stored, HEALTH_REPORT_WAIT)
    if arrived:
        return
    with world.health_changed:
        latest = world.health.get(key)
    if latest is None or latest is before:
        raise StepFailure(
            f"setDeviceHealth: the kubelet did not receive {args.health} for {pool}/{args.device} "
            f"from {handle.name} within {HEALTH_REPORT_WAIT:g}s (is the health service advertised?)",
            expected=want,
            actual=None if latest is None else {k: latest.get(k) for k in want},
        )
    got = {k: latest.get(k) for k in want}
    raise StepFailure(
        f"setDeviceHealth: the kubelet's newest report for {pool}/{args.device} from {handle.name} "
        f"differs from what was sent: expected {want}, got {got}",
        expected=want,
        actual=got,
    )


def mark(world: World, args: S.Mark, ctx: StepContext) -> None:
    """Name this point of the journal (and record the ResourceSlices there)."""
    if args.name in ctx.marks:
        raise ConfigError(f"mark: {args.name!r} is used twice")
    ctx.marks[args.name] = world.journal.mark()
    # The ResourceSlices as they are now, for expectResourceSlices' unchangedSince.
    slices = list_slices(world, "")
    world.journal.record("mark", name=args.name, slices=slice_identities(slices))


def parallel(world: World, args: S.Parallel, ctx: StepContext) -> None:
    """Run actions concurrently; each checks its own expectError."""
    failures: list[BaseException] = []
    lock = threading.Lock()

    def run(step: Any) -> None:
        try:
            run_action(world, step.name, step.args, ctx)
        except BaseException as err:
            with lock:
                failures.append(err)

    threads = [threading.Thread(target=run, args=(s,), daemon=True) for s in args.steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


HANDLERS: dict[type, Handler] = {
    S.Apply: apply,
    S.Create: create,
    S.Delete: delete,
    S.Allocate: allocate_claim,
    S.Deallocate: deallocate,
    S.StartPod: start_pod,
    S.SyncPod: sync_pod,
    S.RecreateSandbox: recreate_sandbox,
    S.RestartContainer: restart_container,
    S.StopPod: stop_pod,
    S.DeletePod: delete_pod,
    S.ForceDeletePod: force_delete_pod,
    S.Reconcile: reconcile,
    S.AdvanceClock: advance_clock,
    S.StopKubelet: stop_kubelet,
    S.StartKubelet: start_kubelet,
    S.RestartKubelet: restart_kubelet,
    S.RestartPlugin: restart_plugin,
    S.KillPlugin: kill_plugin,
    S.StopPlugin: stop_plugin,
    S.StartPlugin: start_plugin,
    S.DeregisterPlugin: deregister_plugin,
    S.Fault: fault,
    S.ClearFaults: clear_faults,
    S.Unblock: unblock,
    S.CorruptCheckpoint: corrupt_checkpoint,
    S.DeleteCheckpoint: delete_checkpoint,
    S.ClearCdiDir: clear_cdi_dir,
    S.RebootNode: reboot_node,
    S.SetDeviceHealth: set_device_health,
    S.Mark: mark,
    S.Parallel: parallel,
}


def run_action(world: World, name: str, args: object, ctx: StepContext) -> None:
    """Dispatch one action step."""
    handler = HANDLERS.get(type(args))
    if handler is None:
        raise DrasimError(f"step {name!r} is not implemented by the runner yet")
    handler(world, args, ctx)
