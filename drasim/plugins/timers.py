"""Timers and backoff for the plugin layer, injectable so tests never sleep.

The DRA plugin manager delays ResourceSlice wiping by 30 s and retries wipes with
exponential backoff; the reconciler backs off failed registrations. All of those
go through a :class:`Scheduler`, so unit tests use :class:`ManualScheduler` and move
time by hand while the runner uses :class:`ThreadScheduler`.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


class TimerHandle(Protocol):
    """A scheduled callback that may still be cancelled."""

    def cancel(self) -> None:
        """Prevent the callback from running (no effect once it ran)."""
        ...


class Scheduler(Protocol):
    """Runs callbacks after a delay given in real seconds (already scaled by the clock)."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        """Run ``callback`` once after ``delay`` seconds."""
        ...

    def stop(self) -> None:
        """Cancel everything still pending."""
        ...


class _ThreadTimer:
    def __init__(self, owner: ThreadScheduler, delay: float, callback: Callable[[], None]) -> None:
        self._owner = owner
        self._callback = callback
        self._timer = threading.Timer(max(delay, 0.0), self._run)
        self._timer.daemon = True

    def _run(self) -> None:
        self._owner.discard(self)
        self._callback()

    def start(self) -> None:
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()
        self._owner.discard(self)


class ThreadScheduler:
    """Real timers: each callback runs on its own daemon thread when due."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: set[_ThreadTimer] = set()
        self._stopped = False

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        """Start a :class:`threading.Timer`; after :meth:`stop` nothing runs any more."""
        timer = _ThreadTimer(self, delay, callback)
        with self._lock:
            if self._stopped:
                return timer
            self._pending.add(timer)
        timer.start()
        return timer

    def discard(self, timer: _ThreadTimer) -> None:
        """Forget a timer that ran or was cancelled."""
        with self._lock:
            self._pending.discard(timer)

    def stop(self) -> None:
        """Cancel all pending timers; later ``call_later`` calls are ignored."""
        with self._lock:
            self._stopped = True
            pending = list(self._pending)
            self._pending.clear()
        for timer in pending:
            timer.cancel()


@dataclass(order=True)
class _ManualTimer:
    due: float
    seq: int
    callback: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class ManualScheduler:
    """A scheduler whose time only moves by :meth:`advance`; callbacks run on the caller's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._heap: list[_ManualTimer] = []
        self._seq = itertools.count()
        self.now = 0.0

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        """Queue ``callback`` to run when time reaches ``now + delay``."""
        timer = _ManualTimer(self.now + max(delay, 0.0), next(self._seq), callback)
        with self._lock:
            heapq.heappush(self._heap, timer)
        return timer

    def pending(self) -> list[float]:
        """The delays (from now) of the callbacks still due to run, soonest first."""
        with self._lock:
            return sorted(t.due - self.now for t in self._heap if not t.cancelled)

    def advance(self, seconds: float) -> int:
        """Move time forward, running every callback that falls due; returns how many ran."""
        target = self.now + seconds
        ran = 0
        while True:
            with self._lock:
                while self._heap and self._heap[0].cancelled:
                    heapq.heappop(self._heap)
                if not self._heap or self._heap[0].due > target:
                    break
                timer = heapq.heappop(self._heap)
            self.now = max(self.now, timer.due)
            timer.callback()
            ran += 1
        self.now = target
        return ran

    def stop(self) -> None:
        """Drop everything pending."""
        with self._lock:
            for timer in self._heap:
                timer.cancel()
            self._heap.clear()


@dataclass
class ExponentialBackoff:
    """Delay before the next retry, doubling after each failure (``goroutinemap`` style).

    Values are nominal seconds. The kubelet plugin reconciler starts at 0.5 s and caps at
    2 min 2 s (``pkg/util/goroutinemap/exponentialbackoff``).
    """

    initial: float = 0.5
    cap: float = 122.0
    factor: float = 2.0
    failures: int = 0

    def next_delay(self) -> float:
        """Record one more failure and return the delay it imposes."""
        delay = min(self.initial * self.factor**self.failures, self.cap)
        self.failures += 1
        return delay

    def reset(self) -> None:
        """Forget earlier failures (after a success)."""
        self.failures = 0
