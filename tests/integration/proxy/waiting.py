"""Waiting for something another thread does, without sleeping a fixed time (loaded by
tests/conftest.py as ``drasim_test_proxy_waiting``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def until(predicate: Callable[[], object], timeout: float = 5.0) -> bool:
    """Whether ``predicate`` held within ``timeout`` seconds (looked at every 10 ms)."""
    pause = threading.Event()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        pause.wait(0.01)
    return bool(predicate())
