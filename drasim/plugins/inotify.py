"""A minimal inotify binding through ctypes (Linux only; no new dependency).

Just enough for the plugin watcher: watch directories for entries created,
deleted or moved, read events without blocking, and wake up for shutdown.
:func:`available` says whether it can be used here; callers fall back to polling.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import select
import struct
import sys
from dataclasses import dataclass

IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ISDIR = 0x40000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = 0o2000000

WATCH_MASK = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF
_HEADER = struct.Struct("iIII")


@dataclass(frozen=True)
class Event:
    """One inotify event; ``path`` is the watched directory joined with the entry name."""

    path: str
    mask: int

    @property
    def is_dir(self) -> bool:
        """The entry is a directory."""
        return bool(self.mask & IN_ISDIR)


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    if not hasattr(libc, "inotify_init1"):
        return None
    return libc


def available() -> bool:
    """Whether inotify can be used on this platform."""
    return _libc() is not None


class Inotify:
    """An inotify instance plus a wake-up pipe so :meth:`read` can be interrupted by :meth:`wake`."""

    def __init__(self) -> None:
        libc = _libc()
        if libc is None:
            msg = "inotify is not available"
            raise OSError(msg)
        self._libc = libc
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        self._fd: int = fd
        self._wake_r, self._wake_w = os.pipe()
        self._paths: dict[int, str] = {}
        self._closed = False

    def add_watch(self, directory: str) -> None:
        """Watch one directory (not recursive)."""
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(directory), WATCH_MASK)
        if wd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_add_watch {directory}: {os.strerror(err)}")
        self._paths[wd] = directory

    def read(self, timeout: float | None = None) -> list[Event]:
        """Events available within ``timeout`` seconds; ``[]`` on timeout or after :meth:`wake`."""
        if self._closed:
            return []
        ready, _, _ = select.select([self._fd, self._wake_r], [], [], timeout)
        if self._closed or self._fd not in ready:
            return []
        try:
            data = os.read(self._fd, 64 * 1024)
        except BlockingIOError:
            return []
        return self._parse(data)

    def _parse(self, data: bytes) -> list[Event]:
        events: list[Event] = []
        pos = 0
        while pos + _HEADER.size <= len(data):
            wd, mask, _cookie, length = _HEADER.unpack_from(data, pos)
            pos += _HEADER.size
            name = data[pos : pos + length].split(b"\0", 1)[0]
            pos += length
            if mask & IN_IGNORED:
                self._paths.pop(wd, None)
                continue
            base = self._paths.get(wd, "")
            path = os.path.join(base, os.fsdecode(name)) if name else base
            events.append(Event(path, mask))
        return events

    def wake(self) -> None:
        """Make a blocked (and every later) :meth:`read` return at once."""
        if not self._closed:
            self._closed = True
            os.write(self._wake_w, b"x")

    def close(self) -> None:
        """Release the descriptors; call after the reading thread has finished."""
        self.wake()
        for fd in (self._fd, self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fd = self._wake_r = self._wake_w = -1
