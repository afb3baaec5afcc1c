"""Device health as the emulated kubelet learns it from plugins' health streams.

The kubelet keeps the newest report per (driver, pool, device) (upstream
``healthInfoCache`` in ``pkg/kubelet/cm/dra/healthinfo.go``) and derives each
container's ``allocatedResourcesStatus`` from the devices of its claims. The runner
keeps the same cache in :class:`DeviceHealth`, a part of the world, and lets ``setDeviceHealth``
wait until a report arrived.

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

Time is the scenario's nominal clock (the node clock's ``now``, moved by ``advanceClock``), so
staleness is deterministic: real time spent running steps never ages a report.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from drasim.journal import Journal
from drasim.plugins.health import DEFAULT_HEALTH_TIMEOUT, health_check_timeout, truncate_health_message
from drasim.profiles import KubeletVersion

UNKNOWN = "Unknown"

HealthKey = tuple[str, str, str]
"""(driver, pool, device)."""


@dataclass
class DeviceHealth:
    """The kubelet's device-health cache; the world's health part (it never imports the world)."""

    now: Callable[[], float]
    """The nominal clock's time."""
    version: Callable[[], KubeletVersion]
    """The running kubelet's version (1.35 added per-device timeouts, 1.36 messages)."""
    journal: Journal
    entries: dict[HealthKey, dict[str, Any]] = field(default_factory=dict)
    changed: threading.Condition = field(default_factory=threading.Condition)
    """Notified whenever a health report arrived (guards ``entries``)."""

    def absorb(self, driver: str, reports: tuple[Any, ...]) -> None:
        """Health callback: remember every reported device, stamped with the kubelet's time."""
        with self.changed:
            now = self.now()
            reported = set()
            version = self.version()
            for report in reports:
                key = (driver, report.pool_name, report.device_name)
                reported.add(key)
                timeout = report.health_check_timeout_seconds if version.per_device_health_timeout else 0
                self.entries[key] = {
                    "health": report.health,
                    "message": truncate_health_message(report.message) if version.health_message else "",
                    "timeout": health_check_timeout(timeout),
                    "last_updated": now,
                }
            for key, entry in self.entries.items():
                if key[0] != driver or key in reported or entry.get("health") == UNKNOWN:
                    continue
                if _stale(entry, now):
                    entry.update(health=UNKNOWN, message="", last_updated=now)
            self.changed.notify_all()
        self.journal.record(
            "kubelet",
            operation="health-update",
            driver=driver,
            devices=[f"{r.pool_name}/{r.device_name}={r.health}" for r in reports],
            error=None,
        )

    def clear_driver(self, driver: str) -> None:
        """A health stream of ``driver`` ended (upstream ``clearDriver``): forget its devices.

        They read ``Unknown`` afterwards until a new stream reports them again.
        """
        with self.changed:
            forgotten = [key for key in self.entries if key[0] == driver]
            for key in forgotten:
                del self.entries[key]
            self.changed.notify_all()
        self.journal.record(
            "kubelet", operation="health-cleared", driver=driver, devices=len(forgotten), error=None
        )

    def clear(self) -> None:
        """A new kubelet starts with an empty cache."""
        with self.changed:
            self.entries.clear()

    def info(self, driver: str, pool: str, device: str) -> tuple[str, str]:
        """``(health, message)`` the kubelet shows for a device (upstream ``getHealthInfo``).

        ``Unknown`` and no message when it never heard of the device or the report is stale.
        """
        entry = self.entries.get((driver, pool, device))
        if entry is None or _stale(entry, self.now()):
            return UNKNOWN, ""
        return str(entry.get("health", UNKNOWN)), str(entry.get("message", ""))

    def health(self, driver: str, pool: str, device: str) -> str:
        """The health the kubelet reports for a device (Unknown when unheard of or stale)."""
        return self.info(driver, pool, device)[0]

    def wait(self, key: HealthKey, health: str, timeout: float) -> bool:
        """Wait until a report for ``key`` arrived and the kubelet shows ``health`` for it.

        A stale report does not count, so re-reporting a health that has timed out waits for
        the new report.
        """
        with self.changed:
            arrived = self.changed.wait_for(
                lambda: key in self.entries and self.health(*key) == health, timeout
            )
            return bool(arrived)

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait (holding the lock while testing) until ``predicate`` holds; False on timeout."""
        with self.changed:
            return bool(self.changed.wait_for(predicate, timeout))

    def get(self, key: HealthKey) -> dict[str, Any] | None:
        """The stored entry of ``key`` (under the lock), or None."""
        with self.changed:
            return self.entries.get(key)


def _stale(entry: dict[str, Any], now: float) -> bool:
    """Upstream's test: more than the timeout has passed since the kubelet stored the report."""
    last = float(entry.get("last_updated", now))
    return now - last > float(entry.get("timeout", DEFAULT_HEALTH_TIMEOUT))
