"""Plugin registration with upstream's plugin manager as the only registrar.

With ``--kubelet upstream`` the registry directory is watched by upstream's own plugin
manager (``pkg/kubelet/pluginmanager``) alone: it dials each registration socket, calls
``GetInfo``, validates, registers with the DRA manager's handler and sends
``NotifyRegistrationStatus``. drasim's plugin host does none of that. It learns what upstream
did from the program's ``plugins`` report (each socket: desired, registered, pending, the last
failed attempt's error) and mirrors it: a plugin upstream registered is added to drasim's
:class:`~drasim.plugins.manager.DRAPluginManager` (which then tracks its connection, opens
drasim's health stream and times the slice wipes, as before), one upstream dropped is removed,
and each outcome is journaled as a ``registration`` event (``upstream: true``) with the same
fields the emulated registrar writes.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drasim.journal import Journal
from drasim.plugins.manager import DRAPluginManager
from drasim.upstream_kubelet.process import UpstreamKubelet, UpstreamKubeletError

__all__ = ["POLL_INTERVAL", "WATCHER_GRACE", "UpstreamRegistrar", "registry_sockets", "settled"]

POLL_INTERVAL = 0.05
"""Real seconds between two reads of upstream's plugin state (drasim's own watcher polls as often)."""
WATCHER_GRACE = 2.0
"""Real seconds after which a replaced socket file upstream reported no new generation for is
taken as seen (upstream's watcher follows inotify events within milliseconds)."""


Identity = tuple[int, int, int]
"""(st_dev, st_ino, st_mtime_ns) of a socket file: a re-created socket has another."""


def registry_sockets(registry_dir: str | os.PathLike[str]) -> dict[str, Identity]:
    """The Unix sockets upstream's plugin watcher reports for ``registry_dir`` (every socket in it
    or its sub-directories whose name does not start with a dot, ``plugin_watcher.go``), with
    their identities."""
    found: dict[str, Identity] = {}
    for root, dirs, files in os.walk(os.fspath(registry_dir)):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.startswith("."):
                continue
            path = os.path.join(root, name)
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISSOCK(st.st_mode):
                    found[path] = (st.st_dev, st.st_ino, st.st_mtime_ns)
    return found


@dataclass(frozen=True)
class _Registered:
    uuid: str
    name: str
    endpoint: str


class UpstreamRegistrar:
    """Mirrors upstream's registrations into drasim's plugin manager (see the module docstring)."""

    def __init__(
        self,
        process: UpstreamKubelet,
        manager: DRAPluginManager,
        *,
        journal: Journal,
        registry_dir: str | os.PathLike[str],
        poll_interval: float = POLL_INTERVAL,
    ) -> None:
        self._process = process
        self._manager = manager
        self._journal = journal
        self._registry_dir = os.fspath(registry_dir)
        self._poll_interval = poll_interval
        self._lock = threading.Lock()
        self._known: dict[str, _Registered] = {}
        self._failures: dict[str, int] = {}
        # Per socket: the desired-state UUID upstream reported and the file's identity when it
        # first did. A socket replaced in one rename keeps its path, so only the identity tells
        # whether upstream's watcher has seen the new file yet.
        self._generations: dict[str, tuple[str, Identity | None]] = {}
        self._mismatch_since: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Follow upstream's registrations in the background."""
        self._thread = threading.Thread(target=self._loop, name="upstream-registrar", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop following (drasim's plugin manager keeps what it has until it stops itself)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10.0)

    def _loop(self) -> None:
        while not self._stop.wait(self._poll_interval):
            try:
                self.poll()
            except UpstreamKubeletError:
                return  # the process ended; the runner finds out from its next call

    def sync(self, timeout: float) -> bool:
        """Wait until upstream's plugin manager settled on the registry directory as it is now:
        its watcher reported exactly the sockets there, no registration runs, and each socket
        is registered or had its attempt fail. False on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            on_disk = registry_sockets(self._registry_dir)
            sockets = self.poll(on_disk)
            if self._watcher_caught_up(on_disk) and settled(sockets, set(on_disk)):
                return True
            if time.monotonic() >= deadline:
                return False
            self._stop.wait(self._poll_interval)

    def _watcher_caught_up(self, on_disk: Mapping[str, Identity]) -> bool:
        """Whether upstream's watcher reported each socket file as it is now. A file whose
        identity changed without a new generation after :data:`WATCHER_GRACE` seconds is taken
        as seen (it was replaced between the two reads that tie a generation to a file)."""
        now = time.monotonic()
        caught_up = True
        with self._lock:
            for path, ident in on_disk.items():
                uuid, known = self._generations.get(path, ("", None))
                if known == ident:
                    self._mismatch_since.pop(path, None)
                    continue
                since = self._mismatch_since.setdefault(path, now)
                if uuid and now - since >= WATCHER_GRACE:
                    self._generations[path] = (uuid, ident)
                    continue
                caught_up = False
        return caught_up

    def poll(self, on_disk: Mapping[str, Identity] | None = None) -> list[dict[str, Any]]:
        """Read upstream's plugin state once and mirror what changed; the sockets as reported.

        ``on_disk`` (from :func:`registry_sockets`, read before upstream's state) ties each new
        desired-state generation to the socket file it stands for."""
        with self._lock:
            if on_disk is None:
                on_disk = registry_sockets(self._registry_dir)
            sockets: list[dict[str, Any]] = list(self._process.call("plugins").get("plugins") or [])
            for entry in sockets:
                path, uuid = str(entry.get("socket")), str(entry.get("uuid") or "")
                if entry.get("desired") and self._generations.get(path, ("", None))[0] != uuid:
                    self._generations[path] = (uuid, on_disk.get(path))
            self._apply(sockets)
            return sockets

    def _apply(self, sockets: Sequence[Mapping[str, Any]]) -> None:
        by_path = {str(s.get("socket")): s for s in sockets}
        for path, known in list(self._known.items()):
            now = by_path.get(path)
            if now is None or not now.get("registered") or now.get("registeredUUID") != known.uuid:
                del self._known[path]
                self._manager.deregister_plugin(known.name, known.endpoint)
                self._record(path, known.name, known.endpoint, outcome="deregistered")
        for path, entry in by_path.items():
            at = int(entry.get("errorAt") or 0)
            if at and self._failures.get(path) != at:
                self._failures[path] = at
                self._record(path, None, None, outcome="failed", error=str(entry.get("error")))
            if not entry.get("registered") or path in self._known:
                continue
            name, endpoint = str(entry.get("name")), str(entry.get("endpoint"))
            versions = [str(v) for v in entry.get("versions") or []]
            try:
                client = self._manager.register_plugin(name, endpoint, versions)
            except Exception as err:  # drasim's rules refused what upstream accepted: journal it
                msg = f"upstream registered the plugin but drasim's plugin manager refused it: {err}"
                self._record(path, name, endpoint, outcome="failed", error=msg, versions=versions)
                continue
            self._known[path] = _Registered(str(entry.get("registeredUUID")), name, endpoint)
            service = getattr(client, "service", None)
            self._record(
                path,
                name,
                endpoint,
                outcome="registered",
                service=service if isinstance(service, str) else None,
                versions=versions,
            )

    def _record(
        self,
        socket: str,
        driver: str | None,
        endpoint: str | None,
        *,
        outcome: str,
        error: str | None = None,
        service: str | None = None,
        versions: list[str] | None = None,
    ) -> None:
        self._journal.record(
            "registration",
            driver=driver,
            endpoint=endpoint,
            socket=socket,
            service=service,
            outcome=outcome,
            error=error,
            supported_versions=versions,
            upstream=True,
        )


def settled(sockets: Sequence[Mapping[str, Any]], on_disk: set[str]) -> bool:
    """Whether upstream's plugin manager is done with the registry as it is on disk (see
    :meth:`UpstreamRegistrar.sync`)."""
    desired = {str(s.get("socket")) for s in sockets if s.get("desired")}
    if desired != on_disk:
        return False
    for entry in sockets:
        if entry.get("pending"):
            return False
        replaced = entry.get("registeredUUID") != entry.get("uuid")
        if entry.get("registered") and (not entry.get("desired") or replaced):
            return False  # gone or re-created: upstream unregisters it next
        if entry.get("desired") and not entry.get("registered") and not entry.get("errorAt"):
            return False  # not tried yet
    return True
