"""Scenario fault rules for the API server, installed in the store's fault injector."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drasim.faults import ApiFault, describe, scaled

if TYPE_CHECKING:
    from drasim.runner.world import World

__all__ = ["api_fault"]


def api_fault(world: World, fault: ApiFault) -> None:
    """Install one ``ApiFault`` rule on the world's object store, its delay scaled to real seconds."""
    rule = scaled(fault, world.time_scale)
    if not rule.effective:  # only a delay, and time scale 0
        world.journal.record("fault", where="apiserver", description="no effect at time scale 0", spec=rule)
        return
    installed = world.store.faults.add(rule)
    world.journal.record("fault", where="apiserver", description=describe(installed), spec=installed)
