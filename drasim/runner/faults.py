"""Scenario fault rules for the API server, translated into the store's fault injector."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drasim.errors import ConfigError

if TYPE_CHECKING:
    from drasim.runner.world import World


def api_fault(world: World, fault: Any) -> None:
    """Install one ``ApiFault`` rule (scenario vocabulary) on the world's object store."""
    if fault.client != "any":
        msg = (
            f"apiServer fault: client {fault.client!r} is not supported yet; the fake API server "
            "matches faults by verb, resource and name only (use client: any)"
        )
        raise ConfigError(msg)
    if fault.after:
        msg = "apiServer fault: 'after' is not supported yet by the fake API server"
        raise ConfigError(msg)
    spec: dict[str, Any] = {}
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
    if fault.delay:
        spec["latency"] = fault.delay * world.time_scale
    if fault.drop_watches:
        spec["dropWatch"] = True
    spec["times"] = fault.times if fault.times else None
    installed = world.store.faults.add(spec)
    world.journal.record("fault", where="apiserver", description=repr(installed), spec=spec)
