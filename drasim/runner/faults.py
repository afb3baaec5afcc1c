"""Scenario fault rules for the API server, translated into the store's fault injector."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drasim.apiserver.faults import api_fault_spec

if TYPE_CHECKING:
    from drasim.runner.world import World

__all__ = ["api_fault", "api_fault_spec"]


def api_fault(world: World, fault: Any) -> None:
    """Install one ``ApiFault`` rule (scenario vocabulary) on the world's object store."""
    spec = api_fault_spec(fault, world.time_scale)
    if not ({"code", "latency", "dropWatch"} & set(spec)):  # only a delay, and time scale 0
        world.journal.record("fault", where="apiserver", description="no effect at time scale 0", spec=spec)
        return
    installed = world.store.faults.add(spec)
    world.journal.record("fault", where="apiserver", description=repr(installed), spec=spec)
