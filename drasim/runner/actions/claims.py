"""Action steps on ResourceClaims, and the scheduler's part: allocation and reservation."""

from __future__ import annotations

from typing import Any

from drasim.allocator import AllocationError, allocate
from drasim.errors import ApiError, ConfigError
from drasim.runner.actions.registry import RESOURCE_V1, check_error, handles
from drasim.runner.context import StepContext
from drasim.runner.pods import PodRecord, split_ref
from drasim.runner.world import World
from drasim.scenario import steps as S  # noqa: N812 - S.Allocate reads like the YAML


def _claim(world: World, ref: str, namespace: str = "default") -> dict[str, Any]:
    ns, name = split_ref(ref, namespace)
    return world.api.runner_api.get(RESOURCE_V1, "ResourceClaim", name, world.api.namespace(ns))


def allocate_from_slices(world: World, claim: dict[str, Any]) -> dict[str, Any]:
    """Allocate ``claim`` from the published ResourceSlices, as the scheduler would."""
    world.fleet.wait_republished_slices()
    slices = world.api.runner_api.list(RESOURCE_V1, "ResourceSlice")
    classes = world.api.runner_api.list(RESOURCE_V1, "DeviceClass")
    others = [
        c
        for c in world.api.runner_api.list(RESOURCE_V1, "ResourceClaim")
        if (c.get("status") or {}).get("allocation")
    ]
    return allocate(
        claim,
        slices=slices,
        classes=classes,
        allocated_claims=others,
        node_name=world.node,
        pods=[],
        cancelled=world.aborted.is_set,
    )


def _explicit_results(
    world: World, claim: dict[str, Any], devices: list[S.DeviceRef]
) -> list[dict[str, Any]]:
    requests = [r.get("name") for r in (claim.get("spec") or {}).get("devices", {}).get("requests", [])]
    results = []
    for ref in devices:
        driver = world.fleet.driver(ref.driver).name
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


@handles(S.Allocate)
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
            claim = allocate_from_slices(world, claim)
        world.api.runner_api.update_status(claim)
    except (ApiError, AllocationError, ConfigError) as err:
        error = str(err)
    check_error(args.expect_error, error, f"allocate {args.claim}")


@handles(S.Deallocate)
def deallocate(world: World, args: S.Deallocate, ctx: StepContext) -> None:
    """Clear allocation and reservations."""
    claim = _claim(world, args.claim)
    claim["status"] = {}
    world.api.runner_api.update_status(claim)


def reserve(claim: dict[str, Any], rec: PodRecord) -> dict[str, Any]:
    """Add the pod to the claim's status.reservedFor (once)."""
    status = claim.setdefault("status", {})
    reserved = status.setdefault("reservedFor", [])
    if not any(r.get("uid") == rec.uid for r in reserved):
        reserved.append({"resource": "pods", "name": rec.name, "uid": rec.uid})
    return claim
