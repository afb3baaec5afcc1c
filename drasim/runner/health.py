"""Device health as the emulated kubelet learns it from plugins' health streams.

The kubelet keeps the newest report per (driver, pool, device) (upstream
``healthInfoCache``) and derives each container's ``allocatedResourcesStatus`` from
the devices of its claims. The runner keeps the same cache in the world and lets
``setDeviceHealth`` wait until a report arrived.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drasim.runner.world import World


def absorb(world: World, driver: str, reports: tuple[Any, ...]) -> None:
    """Health callback: remember every reported device's health and message."""
    with world.health_changed:
        for report in reports:
            world.health[(driver, report.pool_name, report.device_name)] = {
                "health": report.health,
                "message": report.message,
            }
        world.health_changed.notify_all()
    world.journal.record(
        "kubelet",
        operation="health-update",
        driver=driver,
        devices=[f"{r.pool_name}/{r.device_name}={r.health}" for r in reports],
        error=None,
    )


def wait_health(world: World, key: tuple[str, str, str], health: str, timeout: float) -> bool:
    """Wait until the kubelet recorded ``health`` for ``key``."""
    with world.health_changed:
        arrived = world.health_changed.wait_for(
            lambda: world.health.get(key, {}).get("health") == health, timeout
        )
        return bool(arrived)


def device_health(world: World, driver: str, pool: str, device: str) -> str:
    """The health the kubelet reports for a device (Unknown when it never heard of it)."""
    return str(world.health.get((driver, pool, device), {}).get("health", "Unknown"))
