"""Waiting in the main thread of a command that runs until SIGINT or SIGTERM.

A signal sent to a process may be taken by any of its threads (grpc's, the proxy's); Python
runs the signal's handler in the main thread, but only when that thread runs Python code: a
main thread blocked in ``Event.wait()`` may never run it. And a handler that raises
(``KeyboardInterrupt``) may raise anywhere, also between a lock's acquire and the ``with``
that releases it. So such a command holds the signals in every thread and takes them with
``sigwait`` where it waits.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


@contextlib.contextmanager
def stop_signals_held() -> Iterator[Callable[[], int]]:
    """Hold SIGINT and SIGTERM for the block: they are blocked in this thread and in every
    thread started inside it, and the block calls the yielded function to wait for one
    (``sigwait``; it returns the signal's number).

    For a command that starts threads of its own (grpc servers and channels): a signal
    turned into ``KeyboardInterrupt`` may land in the middle of their start, between taking a
    lock and the ``with`` that would release it, and the command then hangs as it stops.
    Held, the signal is taken only where the command waits for it. Call it before any thread
    of the command is started; off the main thread the wait lasts for ever.
    """
    if threading.current_thread() is not threading.main_thread():
        yield _forever
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield lambda: signal.sigwait(STOP_SIGNALS)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _forever() -> int:
    threading.Event().wait()
    return 0
