"""A readers-writer lock with Go ``sync.RWMutex`` semantics, for the claim-info cache.

Many readers may hold it at once; a writer holds it alone. As in Go, a writer that
is waiting blocks new readers, so writers are not starved. It is not re-entrant.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RWLock"]


class RWLock:
    """Readers-writer lock; use :meth:`read` and :meth:`write` as context managers."""

    def __init__(self) -> None:
        # The state is guarded by ``_mutex``, entered directly (a C-level context manager;
        # ``Condition.__enter__`` is a Python call); ``_cond`` waits and notifies on it.
        self._mutex = threading.Lock()
        self._cond = threading.Condition(self._mutex)
        self._readers = 0
        self._writer = False
        self._waiting_writers = 0
        self._sleepers = 0  # threads in self._cond.wait(): only they need a notify

    def acquire_read(self, *, blocking: bool = True) -> bool:
        """Take a read lock (``RLock``/``TryRLock``); ``False`` if not blocking and unavailable."""
        with self._mutex:
            if not blocking and (self._writer or self._waiting_writers):
                return False
            while self._writer or self._waiting_writers:
                self._sleep()
            self._readers += 1
            return True

    def _sleep(self) -> None:
        """Wait for a notify; the caller holds ``self._mutex``."""
        self._sleepers += 1
        try:
            self._cond.wait()
        finally:
            self._sleepers -= 1

    def _wake(self) -> None:
        """Wake every waiting thread, if any; the caller holds ``self._mutex``."""
        if self._sleepers:
            self._cond.notify_all()

    def release_read(self) -> None:
        """Give back a read lock."""
        with self._mutex:
            if self._readers <= 0:
                msg = "release_read without a read lock"
                raise RuntimeError(msg)
            self._readers -= 1
            if self._readers == 0:
                self._wake()

    def acquire_write(self, *, blocking: bool = True) -> bool:
        """Take the write lock (``Lock``/``TryLock``); ``False`` if not blocking and unavailable."""
        with self._mutex:
            if self._writer or self._readers:
                if not blocking:
                    return False
                self._waiting_writers += 1
                try:
                    while self._writer or self._readers:
                        self._sleep()
                finally:
                    self._waiting_writers -= 1
            self._writer = True
            return True

    def release_write(self) -> None:
        """Give back the write lock."""
        with self._mutex:
            if not self._writer:
                msg = "release_write without the write lock"
                raise RuntimeError(msg)
            self._writer = False
            if self._sleepers:  # _wake(), inline: every write-locked section ends here
                self._cond.notify_all()

    @contextmanager
    def read(self) -> Iterator[None]:
        """Hold a read lock for the ``with`` block."""
        self.acquire_read()
        try:
            yield
        finally:
            self.release_read()

    @contextmanager
    def write(self) -> Iterator[None]:
        """Hold the write lock for the ``with`` block."""
        self.acquire_write()
        try:
            yield
        finally:
            self.release_write()
