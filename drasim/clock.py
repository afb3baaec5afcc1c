"""Clocks: real time, scaled time (kubelet timers shrunk for speed) and virtual time for unit tests."""

from __future__ import annotations

import threading
import time


class RealClock:
    """Wall-clock time with kubelet timers taken at face value (``scaled(x) == x``)."""

    def now(self) -> float:
        """Monotonic seconds."""
        return time.monotonic()

    def scaled(self, nominal_seconds: float) -> float:
        """Timers are not shrunk."""
        return nominal_seconds


class ScaledClock(RealClock):
    """Real time, but every kubelet timer lasts ``factor`` times its nominal value.

    With the default factor 0.01 the kubelet's 45 s call timeout becomes 0.45 s and
    its 90 s retry 0.9 s, so scenarios keep upstream's ratios yet run fast.
    """

    def __init__(self, factor: float = 0.01) -> None:
        if factor <= 0:
            msg = f"time scale must be positive, got {factor}"
            raise ValueError(msg)
        self.factor = factor

    def scaled(self, nominal_seconds: float) -> float:
        """``nominal_seconds * factor``."""
        return nominal_seconds * self.factor


class VirtualClock:
    """Time that only moves when told to; for deterministic unit tests."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> float:
        """The current virtual time."""
        with self._lock:
            return self._now

    def scaled(self, nominal_seconds: float) -> float:
        """Virtual timers keep their nominal length."""
        return nominal_seconds

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        with self._lock:
            self._now += seconds
