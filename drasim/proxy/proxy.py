"""The proxy on a driver's two sockets (see :mod:`drasim.proxy`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drasim.apiversions import DRA_SERVICES, HEALTH_SERVICES
from drasim.faults import PluginFault
from drasim.interfaces import NullRecorder, Recorder, holding, ready_recording
from drasim.plugins.conversion import method_path
from drasim.proxy import wire
from drasim.proxy.forward import Forwarder
from drasim.proxy.rules import FaultRules
from drasim.proxy.splice import Splicer

Endpoint = Forwarder | Splicer
"""A proxied DRA socket: the grpcio path or the splice."""

CONNECT_WAIT = 0.1
"""Real seconds a forwarded GetInfo waits for the proxy to reach the driver's DRA socket."""

DEFAULT_POLL_INTERVAL = 0.02
"""Real seconds between two looks at the driver's registration directory."""


@dataclass
class ProxyConfig:
    """Where the proxy listens, where the driver is, and what it journals and injects."""

    registry_dir: Path
    """The kubelet's plugin registration directory: the proxy's registration sockets go here."""
    driver_registry_dir: Path
    """Where the driver creates its registration socket (give the driver this as its registrar dir)."""
    socket_dir: Path
    """Where the proxy's DRA sockets go (one per driver endpoint)."""
    recorder: Recorder | None = None
    """Receives one ``rpc`` event per call (and per health stream message)."""
    side: str = "kubelet"
    """The ``side`` of the journaled calls: ``kubelet`` when the proxy's journal is the only record
    of the kubelet's calls (a kubelet that journals nothing), ``plugin`` next to drasim's own kubelet,
    which journals its DRA calls itself."""
    faults: Sequence[PluginFault] = ()
    """Rules from the start (their ``delay`` in real seconds)."""
    kill_driver: Callable[[], None] | None = None
    """Kills the driver process at once (SIGKILL) for ``crash`` rules; ``None``: ``driver_pid``."""
    driver_pid: int | None = None
    """The driver's process id, SIGKILLed by ``crash`` rules when ``kill_driver`` is not given."""
    driver_name: str = ""
    """The driver name journaled before the driver's GetInfo said it."""
    advertise: Sequence[str] | None = None
    """DRA services GetInfo advertises in place of the driver's own (the driver's health services
    are kept); ``None``: the driver's. A call of a DRA service the driver did not advertise is
    forwarded to the newest one it did: every DRA version's messages are the same on the wire
    (v1 adds ``Device.share_id``, which older kubelets do not read)."""
    registration_socket: str = ""
    """The file name of the proxy's registration socket; empty: the name of the driver's (with
    several driver sockets, only the first one in name order is renamed)."""
    dra_socket: Path | None = None
    """The path of the proxy's DRA socket; ``None``: ``socket_dir/dra-<hash>.sock`` per driver endpoint.
    A name in ``registry_dir`` is the "common socket" layout (the DRA socket next to the
    registration socket)."""
    poll_interval: float = DEFAULT_POLL_INTERVAL
    splice: bool = True
    """Serve DRA sockets with the splice (:mod:`drasim.proxy.splice`: the bytes copied unchanged,
    the calls read on the side) while no fault rule is set and ``advertise`` is ``None``; the
    grpcio path (:mod:`drasim.proxy.forward`) otherwise. False: always the grpcio path."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Fields added to every journaled call (e.g. ``{"via": "proxy"}``)."""


class Proxy:
    """Registers in the driver's place and forwards both of its sockets; see :mod:`drasim.proxy`."""

    def __init__(self, config: ProxyConfig) -> None:
        self.config = config
        self.rules = FaultRules(config.faults)
        self.driver_name = config.driver_name
        recorder = config.recorder if config.recorder is not None else NullRecorder()
        self._record = ready_recording(recorder)
        self.hold = holding(recorder)
        """The recorder's hold and release (:func:`drasim.interfaces.holding`): with them the
        splice passes a driver's bytes on before it reads them."""
        self.journaling = type(recorder) is not NullRecorder
        """Whether anything reads the journal (without, the splice copies bytes and reads none)."""
        self._lock = threading.RLock()
        self._registrations: dict[str, tuple[tuple[int, int], Forwarder]] = {}
        self._endpoints: dict[str, Endpoint] = {}
        self._driver_services: list[str] = []
        self._paths: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.crashes = 0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Proxy:
        """Look at the driver's registration directory now, then keep watching it."""
        with self._lock:
            if self._thread is not None:
                return self
            config = self.config
            for directory in (config.registry_dir, config.driver_registry_dir, config.socket_dir):
                directory.mkdir(parents=True, exist_ok=True)
            self._stop.clear()
            self.rules.restart()
            self.sync()
            thread = threading.Thread(target=self._watch, name="drasim-proxy-watch", daemon=True)
            thread.start()
            self._thread = thread  # only a started thread: stop() joins it
        return self

    def stop(self) -> None:
        """Release held calls, stop serving and remove the proxy's sockets."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(5)
        self.rules.stop()
        with self._lock:
            forwarders = [fw for _, fw in self._registrations.values()] + list(self._endpoints.values())
            self._registrations.clear()
            self._endpoints.clear()
        for fw in forwarders:
            fw.close()

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ registration sockets
    def _watch(self) -> None:
        while not self._stop.wait(self.config.poll_interval):
            with contextlib.suppress(OSError):
                self.sync()

    def sync(self) -> None:
        """Mirror the driver's registration sockets into the kubelet's directory once.

        A new socket (or one created again: another inode or time) gets a fresh proxy socket
        of the same name, so the kubelet registers it again; a removed one is removed.
        """
        found: dict[str, tuple[int, int]] = {}
        with contextlib.suppress(FileNotFoundError), os.scandir(self.config.driver_registry_dir) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISSOCK(st.st_mode):
                        found[entry.name] = (st.st_ino, st.st_mtime_ns)
        with self._lock:
            if self._stop.is_set():  # stopped: nothing is served any more
                return
            for name in [n for n in self._registrations if n not in found]:
                _, fw = self._registrations.pop(name)
                fw.close()
            for name, identity in found.items():
                known = self._registrations.get(name)
                if known is not None and known[0] == identity:
                    continue
                if known is not None:
                    known[1].close()
                listen = name
                if self.config.registration_socket and name == min(found):
                    listen = self.config.registration_socket
                fw = Forwarder(
                    self,
                    self.config.registry_dir / listen,
                    self.config.driver_registry_dir / name,
                    mirror_connection=False,
                )
                fw.start()
                self._registrations[name] = (identity, fw)

    def registration_sockets(self) -> list[Path]:
        """The proxy's registration sockets (in the kubelet's directory)."""
        with self._lock:
            return [fw.listen for _, fw in self._registrations.values()]

    def on_get_info(self, registration: Forwarder, reply: bytes) -> bytes:
        """The driver's ``PluginInfo`` with the endpoint of the proxy's socket in front of it."""
        info = wire.plugin_info(reply)
        if info.name:
            self.driver_name = info.name
        offered = list(info.supported_versions)
        with self._lock:
            if offered != self._driver_services:
                self._driver_services = offered
                self._paths = {}
        if self.config.advertise is not None:
            health = [s for s in offered if s in HEALTH_SERVICES]
            del info.supported_versions[:]
            info.supported_versions.extend([*self.config.advertise, *health])
        upstream = Path(info.endpoint) if info.endpoint else registration.upstream
        if upstream == registration.upstream:  # the DRA service shares the registration socket
            return wire.with_endpoint(info, str(registration.listen) if info.endpoint else "")
        endpoint = self.endpoint_for(upstream)
        return wire.with_endpoint(info, str(endpoint.listen))

    def upstream_path(self, path: str) -> str:
        """The method path to call at the driver for the kubelet's ``path``: the same, or the same
        method of the driver's newest DRA service when the driver did not offer the kubelet's."""
        found = self._paths.get(path)
        if found is not None:
            return found
        target = path
        service = wire.dra_service(path)
        offered = self._driver_services
        if service is not None and offered and service not in offered:
            newest = next((s for s in DRA_SERVICES if s in offered), None)
            if newest is not None:
                target = method_path(newest, wire.split_method(path)[1])
        self._paths[path] = target
        return target

    def splicing(self) -> bool:
        """Whether a DRA socket created now is a splice (see :attr:`ProxyConfig.splice`)."""
        return self.config.splice and self.config.advertise is None and not self.rules.count()

    def endpoint_for(self, upstream: Path) -> Endpoint:
        """The proxy's serving DRA socket in front of the driver's ``upstream`` socket."""
        key = str(upstream)
        with self._lock:
            fw = self._endpoints.get(key)
            if fw is None:
                digest = hashlib.sha256(key.encode()).hexdigest()[:8]
                named = self.config.dra_socket
                taken = named is not None and any(f.listen == named for f in self._endpoints.values())
                listen = (
                    named
                    if named is not None and not taken
                    else self.config.socket_dir / f"dra-{digest}.sock"
                )
                fw = self._endpoints[key] = (
                    Splicer(self, listen, upstream)
                    if self.splicing()
                    else Forwarder(self, listen, upstream, mirror_connection=True)
                )
        fw.start()
        fw.connect(CONNECT_WAIT)
        return fw

    # ------------------------------------------------------------------ faults
    def add_faults(self, faults: Sequence[PluginFault]) -> None:
        """Add rules after the others (``delay`` in real seconds).

        The splice cannot apply rules: a spliced DRA socket moves to the grpcio path first
        (its connections are reset, so every later call meets the rules; a call in flight
        then ends ``Unavailable``), with a ``fault`` event in the journal saying so.
        """
        self.rules.extend(faults)
        if faults:
            self._leave_splice()

    def _leave_splice(self) -> None:
        with self._lock:
            spliced = [(key, fw) for key, fw in self._endpoints.items() if isinstance(fw, Splicer)]
            moved: list[Forwarder] = []
            for key, splicer in spliced:
                splicer.close()
                fw = Forwarder(self, splicer.listen, splicer.upstream, mirror_connection=True)
                fw.refusing = splicer.refusing
                self._endpoints[key] = fw
                moved.append(fw)
        if not moved:
            return
        self._record(
            "fault",
            {
                "where": "proxy",
                "driver": self.driver_name,
                "description": "fault rules added: the spliced DRA sockets moved to the grpcio path "
                "(their connections were reset)",
            },
        )
        for fw in moved:
            fw.start()
            fw.connect(CONNECT_WAIT)

    def clear_faults(self) -> None:
        """Remove every rule and release every held call."""
        self.rules.clear()

    def release(self) -> None:
        """Let every call held by a ``hang`` or ``block`` rule go on."""
        self.rules.release()

    def held_calls(self) -> int:
        """How many calls a ``hang`` or ``block`` rule holds now."""
        return self.rules.held()

    def reset_connections(self) -> None:
        """End every connection to the proxy's DRA sockets (the kubelet sees them reset); new
        connections are accepted at once."""
        with self._lock:
            endpoints = list(self._endpoints.values())
        for fw in endpoints:
            if fw.serving:
                fw.pause()
                fw.start()

    def refuse(self, refusing: bool = True) -> None:
        """Close the proxy's DRA sockets and refuse connections until ``refuse(False)``; the driver
        keeps running and registered, as when its gRPC server alone went away."""
        with self._lock:
            endpoints = list(self._endpoints.values())
        for fw in endpoints:
            fw.refusing = refusing
            if refusing:
                fw.pause()
            else:
                fw.start()

    def note_error(self, what: str) -> None:
        """Journal something wrong on the wire (a ``fault`` event, ``where: proxy``)."""
        self._record(
            "fault", {"where": "proxy", "driver": self.driver_name, "description": what, "error": what}
        )

    def crash_driver(self, why: str) -> None:
        """Kill the driver process at once (a ``crash`` rule)."""
        self.crashes += 1
        self._record(
            "fault", {"where": "proxy", "driver": self.driver_name, "description": f"killed the driver {why}"}
        )
        if self.config.kill_driver is not None:
            self.config.kill_driver()
        elif self.config.driver_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.config.driver_pid, signal.SIGKILL)

    # ------------------------------------------------------------------ journal
    def record(
        self,
        forwarder: Endpoint,
        path: str,
        *,
        request: Any,
        response: Any,
        code: str,
        error: str | None,
        duration: float,
        **extra: Any,
    ) -> None:
        """Journal one call as the kubelet's client does (``rpc`` event)."""
        self._record(
            "rpc",
            {
                "side": self.config.side,
                "driver": self.driver_name,
                "endpoint": str(forwarder.listen),
                "method": path,
                "request": request,
                "response": response,
                "code": code,
                "error": error,
                "duration": duration,
                "upstream": str(forwarder.upstream),
                **self.config.extra,
                **extra,
            },
        )


def make_proxy(
    registry_dir: str | os.PathLike[str],
    driver_registry_dir: str | os.PathLike[str],
    socket_dir: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Proxy:
    """A proxy not started yet (see :class:`ProxyConfig` for ``options``)."""
    registry = Path(registry_dir)
    sockets = Path(socket_dir) if socket_dir is not None else registry.parent / "drasim-proxy"
    return Proxy(ProxyConfig(registry, Path(driver_registry_dir), sockets, **options))


def start_proxy(
    registry_dir: str | os.PathLike[str],
    driver_registry_dir: str | os.PathLike[str],
    socket_dir: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Proxy:
    """Start a proxy (see :class:`ProxyConfig` for ``options``); stop it with ``stop()``."""
    return make_proxy(registry_dir, driver_registry_dir, socket_dir, **options).start()
