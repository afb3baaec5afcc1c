"""Scenario fault rules for the API server, translated into the store's fault injector."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drasim.runner.world import World


def api_fault_spec(fault: Any, time_scale: float) -> dict[str, Any]:
    """An ``ApiFault`` rule (scenario vocabulary) as the store's fault injector spells it."""
    spec: dict[str, Any] = {}
    if fault.client != "any":
        spec["client"] = fault.client
    if fault.after:
        spec["after"] = fault.after
    if fault.verb != "any":
        spec["verb"] = fault.verb
    if fault.resource:
        spec["resource"] = fault.resource
    if fault.name:
        spec["name"] = fault.name
    if fault.code:
        spec["code"] = fault.code
    if fault.message:
        spec["message"] = fault.message
    if fault.delay and time_scale:
        spec["latency"] = fault.delay * time_scale
    if fault.drop_watches:
        spec["dropWatch"] = True
    spec["times"] = fault.times if fault.times else None
    return spec


def api_fault(world: World, fault: Any) -> None:
    """Install one ``ApiFault`` rule (scenario vocabulary) on the world's object store."""
    spec = api_fault_spec(fault, world.time_scale)
    if not ({"code", "latency", "dropWatch"} & set(spec)):  # only a delay, and time scale 0
        world.journal.record("fault", where="apiserver", description="no effect at time scale 0", spec=spec)
        return
    installed = world.store.faults.add(spec)
    world.journal.record("fault", where="apiserver", description=repr(installed), spec=spec)
