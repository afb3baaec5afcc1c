"""Device health as the emulated kubelet learns it from plugins' health streams.

The kubelet keeps the newest report per (driver, pool, device) (upstream
``healthInfoCache`` in ``pkg/kubelet/cm/dra/healthinfo.go``) and derives each
container's ``allocatedResourcesStatus`` from the devices of its claims. The runner
keeps the same cache in the world and lets ``setDeviceHealth`` wait until a report arrived.

Upstream rules modelled here (``manager.go`` ``buildDeviceHealth`` and ``healthinfo.go``):

* A report's timeout is its ``health_check_timeout_seconds`` when positive, else 30 s.
* Its message is cut to 1024 bytes (1021 bytes and ``...``).
* The kubelet stamps each reported device with the time it received the report; the
  plugin's ``last_updated_time`` is not used for staleness.
* A device whose stamp is more than its timeout old reads as ``Unknown`` with no
  message (``getHealthInfo``). A device missing from a report that has gone stale is
  stored as ``Unknown`` and stamped again (``updateHealthInfo`` phase 2).
* When a driver's health stream ends, for any reason, the driver's devices are
  forgotten (``HandleWatchResourcesStream`` defers ``clearDriver``) and read ``Unknown``.

Time is the scenario's nominal clock (``World.now``, moved by ``advanceClock``), so
staleness is deterministic: real time spent running steps never ages a report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drasim.plugins.health import DEFAULT_HEALTH_TIMEOUT, health_check_timeout, truncate_health_message

if TYPE_CHECKING:
    from drasim.runner.world import World

UNKNOWN = "Unknown"


def absorb(world: World, driver: str, reports: tuple[Any, ...]) -> None:
    """Health callback: remember every reported device, stamped with the kubelet's time."""
    with world.health_changed:
        now = world.now
        reported = set()
        for report in reports:
            key = (driver, report.pool_name, report.device_name)
            reported.add(key)
            version = world.version  # 1.35 added per-device timeouts, 1.36 messages
            timeout = report.health_check_timeout_seconds if version.per_device_health_timeout else 0
            world.health[key] = {
                "health": report.health,
                "message": truncate_health_message(report.message) if version.health_message else "",
                "timeout": health_check_timeout(timeout),
                "last_updated": now,
            }
        for key, entry in world.health.items():
            if key[0] != driver or key in reported or entry.get("health") == UNKNOWN:
                continue
            if _stale(entry, now):
                entry.update(health=UNKNOWN, message="", last_updated=now)
        world.health_changed.notify_all()
    world.journal.record(
        "kubelet",
        operation="health-update",
        driver=driver,
        devices=[f"{r.pool_name}/{r.device_name}={r.health}" for r in reports],
        error=None,
    )


def clear_driver(world: World, driver: str) -> None:
    """A health stream of ``driver`` ended (upstream ``clearDriver``): forget its devices.

    They read ``Unknown`` afterwards until a new stream reports them again.
    """
    with world.health_changed:
        forgotten = [key for key in world.health if key[0] == driver]
        for key in forgotten:
            del world.health[key]
        world.health_changed.notify_all()
    world.journal.record(
        "kubelet", operation="health-cleared", driver=driver, devices=len(forgotten), error=None
    )


def _stale(entry: dict[str, Any], now: float) -> bool:
    """Upstream's test: more than the timeout has passed since the kubelet stored the report."""
    last = float(entry.get("last_updated", now))
    return now - last > float(entry.get("timeout", DEFAULT_HEALTH_TIMEOUT))


def device_health_info(world: World, driver: str, pool: str, device: str) -> tuple[str, str]:
    """``(health, message)`` the kubelet shows for a device (upstream ``getHealthInfo``).

    ``Unknown`` and no message when it never heard of the device or the report is stale.
    """
    entry = world.health.get((driver, pool, device))
    if entry is None or _stale(entry, world.now):
        return UNKNOWN, ""
    return str(entry.get("health", UNKNOWN)), str(entry.get("message", ""))


def device_health(world: World, driver: str, pool: str, device: str) -> str:
    """The health the kubelet reports for a device (Unknown when unheard of or stale)."""
    return device_health_info(world, driver, pool, device)[0]


def wait_health(world: World, key: tuple[str, str, str], health: str, timeout: float) -> bool:
    """Wait until a report for ``key`` arrived and the kubelet shows ``health`` for it.

    A stale report does not count, so re-reporting a health that has timed out waits for
    the new report.
    """
    with world.health_changed:
        arrived = world.health_changed.wait_for(
            lambda: key in world.health and device_health(world, *key) == health, timeout
        )
        return bool(arrived)
