"""Device health as the fake driver reports it on the DRAResourceHealth stream.

The board holds the full device list (every device HEALTHY unless scripted
otherwise) and a version number that grows on every change, so a stream can send
the complete list at start and again after each change.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from fake_plugins.behaviour import HealthSpec


@dataclass(frozen=True)
class DeviceHealthState:
    """One device's reported health."""

    pool: str
    device: str
    health: str
    message: str = ""
    timeout_seconds: int = 0
    last_updated: int = 0


class HealthBoard:
    """Thread-safe current health of every device, with change notification."""

    def __init__(self, pool: str, devices: Sequence[str]) -> None:
        self.pool = pool
        self._cond = threading.Condition()
        self._version = 0
        self._closed = False
        now = int(time.time())
        self._devices: dict[tuple[str, str], DeviceHealthState] = {
            (pool, name): DeviceHealthState(pool, name, "HEALTHY", last_updated=now) for name in devices
        }

    def apply(self, specs: Sequence[HealthSpec]) -> None:
        """Set the health of the named devices (adding unknown ones) and wake the streams."""
        if not specs:
            return
        now = int(time.time())
        with self._cond:
            for spec in specs:
                pool = spec.pool or self.pool
                self._devices[(pool, spec.device)] = DeviceHealthState(
                    pool, spec.device, spec.health.upper(), spec.message, spec.timeout_seconds, now
                )
            self._version += 1
            self._cond.notify_all()

    def snapshot(self) -> tuple[int, list[DeviceHealthState]]:
        """The version and the full device list, sorted."""
        with self._cond:
            return self._version, [self._devices[k] for k in sorted(self._devices)]

    def wait_newer(self, version: int, timeout: float) -> bool:
        """Wait until the version passes ``version`` or the board closes; True if it changed."""
        with self._cond:
            self._cond.wait_for(lambda: self._version > version or self._closed, timeout)
            return self._version > version

    def wake(self) -> None:
        """Wake waiting streams (e.g. because a client went away)."""
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        """Stop every stream."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        """Has :meth:`close` been called?"""
        with self._cond:
            return self._closed
