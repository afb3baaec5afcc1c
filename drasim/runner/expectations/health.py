"""``expectHealth``: a container's ``allocatedResourcesStatus`` entry, as the kubelet would build it.

Mirrors upstream ``UpdateAllocatedResourcesStatus`` (kubelet-dra.md §3.8): the entry
``claim:<pod claim>[/<request>]`` lists, for every device of the cached claim (devices
of other requests skipped when the container names a request), a resource whose ID is
the device's first CDI ID, else ``<driver>/<pool>/<device>``, with the health the
kubelet last heard from the driver's health stream; resources are de-duplicated by ID
and an entry without resources is dropped. Each resource also carries the message the
kubelet shows (truncated; empty when the device reads Unknown for want of a fresh report),
which ``message`` / ``messageContains`` check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drasim.runner.context import StepContext, StepFailure
from drasim.runner.expectations.common import container_name, find_pod
from drasim.runner.expectations.registry import checks
from drasim.runner.pods import PodRecord, container_claims, containers_of
from drasim.scenario.expectations import ExpectHealth
from drasim.scenario.steps import PodClaim

if TYPE_CHECKING:
    from drasim.runner.world import World


def resource_id(driver: str, pool: str, device: str, cdi_ids: tuple[str, ...] | None) -> str:
    """Upstream ResourceID: the first CDI ID, else ``driver/pool/device``."""
    return cdi_ids[0] if cdi_ids else f"{driver}/{pool}/{device}"


def _pod_claim(record: PodRecord, name: str) -> PodClaim | None:
    return next((c for c in record.claims if c.name == name), None)


def entry_resources(world: World, record: PodRecord, claim_name: str, request: str) -> dict[str, str]:
    """Resource ID -> health for one entry; ``{}`` when the kubelet would not list the entry."""
    return {rid: health for rid, (health, _) in entry_statuses(world, record, claim_name, request).items()}


def entry_statuses(
    world: World, record: PodRecord, claim_name: str, request: str
) -> dict[str, tuple[str, str]]:
    """Resource ID -> (health, message) for one entry; ``{}`` when the kubelet would not list it."""
    assert world.kubelet is not None
    pod_claim = _pod_claim(record, claim_name)
    real = None if pod_claim is None else record.claim_name(pod_claim)
    if real is None:
        return {}
    info = world.kubelet.claim_info(record.namespace, real)
    if info is None:
        return {}
    base = request.split("/", 1)[0]
    resources: dict[str, tuple[str, str]] = {}
    for driver, state in sorted((info.driver_state or {}).items()):
        for device in state.devices or []:
            if request and device.request_names and base not in device.request_names:
                continue
            rid = resource_id(driver, device.pool_name, device.device_name, device.cdi_device_ids)
            resources.setdefault(rid, world.health.info(driver, device.pool_name, device.device_name))
    return resources


@checks(ExpectHealth)
def check_health(world: World, args: ExpectHealth, ctx: StepContext) -> None:
    """expectHealth: every (or the one named) resource of the entry has the expected health and message."""
    record = find_pod(world, args.pod)
    container = container_name(record, args.container)
    entry = f"claim:{args.claim}" + (f"/{args.request}" if args.request else "")
    where = f"allocatedResourcesStatus entry {entry} of container {container} in pod {record.key}"
    ctr = next(c for c in containers_of(record.containers, record.claims) if c.name == container)
    refs = [(c.name, c.request) for c in container_claims(ctr)]
    if (args.claim, args.request) not in refs:
        listed = ", ".join(f"claim:{n}" + (f"/{r}" if r else "") for n, r in refs) or "none"
        raise StepFailure(
            f"expected {where}; the container has no such claim entry (entries: {listed})",
            expected={"entry": entry},
            actual={"entries": [f"claim:{n}" + (f"/{r}" if r else "") for n, r in refs]},
        )
    if world.kubelet is None:
        raise StepFailure(f"expected {where}: the kubelet is not running", actual={"kubelet": "stopped"})
    statuses = entry_statuses(world, record, args.claim, args.request)
    resources = {rid: health for rid, (health, _) in statuses.items()}
    if args.resource_id:
        if args.resource_id not in resources:
            raise StepFailure(
                f"expected resource {args.resource_id} in {where}; found {sorted(resources) or 'none'}",
                expected={args.resource_id: args.health},
                actual=resources,
            )
        resources = {args.resource_id: resources[args.resource_id]}
    if not resources:
        raise StepFailure(
            f"expected {where} with health {args.health}; the kubelet lists no resources for it "
            "(claim not prepared, or no devices for the request)",
            expected={"health": args.health},
            actual={},
        )
    wrong = {rid: health for rid, health in resources.items() if health != args.health}
    if wrong:
        found = ", ".join(f"{rid}: {health}" for rid, health in sorted(wrong.items()))
        raise StepFailure(
            f"expected every resource of {where} to be {args.health}; found {found}",
            expected=dict.fromkeys(resources, args.health),
            actual=resources,
            similar=_health_events(world),
        )
    _check_messages(world, args, where, {rid: statuses[rid][1] for rid in resources})


def _check_messages(world: World, args: ExpectHealth, where: str, messages: dict[str, str]) -> None:
    """``message`` (exact) or ``messageContains`` against the message of every checked resource."""
    if args.message is not None:
        expected = f"message {args.message!r}"
        want = args.message
        wrong = {rid: msg for rid, msg in messages.items() if msg != args.message}
    elif args.message_contains:
        expected = f"a message containing {args.message_contains!r}"
        want = f"contains {args.message_contains!r}"
        wrong = {rid: msg for rid, msg in messages.items() if args.message_contains not in msg}
    else:
        return
    if wrong:
        found = ", ".join(f"{rid}: {msg!r}" for rid, msg in sorted(wrong.items()))
        raise StepFailure(
            f"expected every resource of {where} to have {expected}; found {found}",
            expected=dict.fromkeys(messages, want),
            actual=messages,
            similar=_health_events(world),
        )


def _health_events(world: World) -> list[dict[str, Any]]:
    return world.journal.events("kubelet", operation="health-update")[-5:]
