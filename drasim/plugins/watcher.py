"""Registry-directory watcher (upstream ``pluginmanager/pluginwatcher/plugin_watcher.go``).

It creates the directory (mode 0755), scans it at start, then follows changes:
inotify through ctypes on Linux, or polling when inotify is unavailable or fails.
Sub-directories are watched too. Names starting with ``.`` and anything that is not a
Unix socket are ignored. A socket that appears (or is re-created with a new identity)
is reported with :meth:`DesiredState.add_or_update`; one that disappears with
:meth:`DesiredState.remove`.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from drasim.plugins import inotify

#: (st_dev, st_ino, st_mtime_ns): tells a re-created socket from the old one. The change time is
#: not used: links, renames and chmod change it without re-creating the socket.
Identity = tuple[int, int, int]


class DesiredState(Protocol):
    """Where the watcher reports sockets (the :class:`~drasim.plugins.reconciler.Reconciler`)."""

    def add_or_update(self, socket_path: str) -> None:
        """A socket appeared or was re-created."""
        ...

    def remove(self, socket_path: str) -> None:
        """A socket went away."""
        ...


def _identity(path: str) -> Identity | None:
    """The identity of a Unix socket at ``path``, or ``None`` if it is not one."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


def _ignored(path: str) -> bool:
    return os.path.basename(path).startswith(".")


class PluginWatcher:
    """Reports the Unix sockets under ``registry_dir`` to a :class:`DesiredState`."""

    def __init__(
        self,
        registry_dir: str | os.PathLike[str],
        desired: DesiredState,
        *,
        use_inotify: bool = True,
        poll_interval: float = 0.05,
    ) -> None:
        self.path = os.fspath(registry_dir)
        self._desired = desired
        self._want_inotify = use_inotify
        self._poll_interval = poll_interval
        self._lock = threading.RLock()  # held while reporting, so reports keep their order
        self._scan_lock = threading.Lock()
        self._known: dict[str, Identity] = {}
        self._inotify: inotify.Inotify | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def mode(self) -> str:
        """``inotify`` or ``polling`` (valid after :meth:`start`)."""
        return "inotify" if self._inotify is not None else "polling"

    def start(self) -> None:
        """Create the directory, start watching, and report the sockets already there."""
        Path(self.path).mkdir(mode=0o755, parents=True, exist_ok=True)
        if self._want_inotify and inotify.available():
            try:
                self._inotify = inotify.Inotify()
                self._inotify.add_watch(self.path)
            except OSError:
                if self._inotify is not None:
                    self._inotify.close()
                self._inotify = None
        self.rescan()
        target = self._inotify_loop if self._inotify is not None else self._poll_loop
        self._thread = threading.Thread(target=target, name="plugin-watcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (registrations are left as they are)."""
        self._stop.set()
        if self._inotify is not None:
            self._inotify.wake()
        if self._thread is not None:
            self._thread.join(5.0)
        if self._inotify is not None:
            self._inotify.close()

    def known_sockets(self) -> list[str]:
        """Socket paths currently reported as present."""
        with self._lock:
            return sorted(self._known)

    # ---- scanning ----

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No scan runs meanwhile (for the harness: a simulated SIGKILL swaps socket files in place)."""
        with self._scan_lock:
            yield

    def rescan(self) -> None:
        """Walk the tree and report every difference from what was seen so far.

        Scans are serialised: otherwise a slow walk that saw an old socket could be applied
        after a newer one and flip the socket's identity back and forth (re-registrations).
        """
        with self._scan_lock:
            self._rescan()

    def _rescan(self) -> None:
        found: dict[str, Identity] = {}
        for root, dirs, files in os.walk(self.path):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            if self._inotify is not None:
                for d in dirs:
                    self._watch_dir(os.path.join(root, d))
            for name in files:
                full = os.path.join(root, name)
                ident = _identity(full)
                if ident is not None and not name.startswith("."):
                    found[full] = ident
        with self._lock:
            gone = [p for p in self._known if p not in found]
            new = [p for p, ident in found.items() if self._known.get(p) != ident]
            for p in gone:
                del self._known[p]
                self._desired.remove(p)
            for p in sorted(new):
                self._known[p] = found[p]
                self._desired.add_or_update(p)

    def _watch_dir(self, directory: str) -> None:
        if self._inotify is None:
            return
        try:
            self._inotify.add_watch(directory)
        except OSError:
            return

    def _poll_loop(self) -> None:
        while not self._stop.wait(self._poll_interval):
            self.rescan()

    # ---- inotify ----

    def _inotify_loop(self) -> None:
        assert self._inotify is not None
        while not self._stop.is_set():
            for event in self._inotify.read(timeout=1.0):
                self._handle(event)

    def _handle(self, event: inotify.Event) -> None:
        if event.mask & inotify.IN_Q_OVERFLOW:
            self.rescan()
            return
        if event.mask & (inotify.IN_CREATE | inotify.IN_MOVED_TO):
            self._created(event.path, is_dir=event.is_dir)
        elif event.mask & (inotify.IN_DELETE | inotify.IN_MOVED_FROM):
            self._deleted(event.path, is_dir=event.is_dir)

    def _created(self, path: str, *, is_dir: bool) -> None:
        if _ignored(path):
            return
        if is_dir:
            self._watch_dir(path)
            self.rescan()  # pick up sockets created before the watch was in place
            return
        ident = _identity(path)
        if ident is None:
            return
        with self._lock:
            if self._known.get(path) == ident:
                return
            self._known[path] = ident
            self._desired.add_or_update(path)

    def _deleted(self, path: str, *, is_dir: bool) -> None:
        prefix = path + os.sep
        with self._lock:
            gone = [p for p in self._known if p == path or (is_dir and p.startswith(prefix))]
            for p in gone:
                del self._known[p]
                self._desired.remove(p)
