"""``FakeDriver``: a scriptable DRA kubelet plugin served over real unix sockets.

Start order follows the stock helper (``kubeletplugin.Start``): the DRA service
socket is listening before the registration socket appears, so a kubelet that
sees the registration socket can always reach the endpoint it is given.

Each ``start()`` builds a fresh instance (servers, in-memory state loaded from the
driver's checkpoint, health board); ``stop()`` ends it cleanly and removes the
sockets; ``kill()`` ends it the way SIGKILL would, leaving stale socket files
with nobody listening.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from drasim._proto.pluginregistration.v1 import api_pb2_grpc as reg_grpc
from drasim.apiversions import DRA_APIS, HEALTH_APIS
from drasim.errors import ConfigError, DrasimError
from drasim.faults import PluginFault
from drasim.values import ClaimRef
from fake_plugins.behaviour import Behaviour, FaultPlan, HealthSpec, decode_fault
from fake_plugins.claims import ClaimSource
from fake_plugins.config import (
    FakeDriverConfig,
)
from fake_plugins.core import CallEffects, CallError, DriverCore
from fake_plugins.health import HealthBoard
from fake_plugins.journal import Call, Journal
from fake_plugins.servicers import CrashError, DRAPluginServicer, HealthServicer, RegistrationServicer
from fake_plugins.slices import SlicePublisher, build_slices
from fake_plugins.state import PreparedClaim

if TYPE_CHECKING:
    from drasim.interfaces import Recorder

CrashHandler = Callable[[], None]


class _Effects:
    """Call-level faults: delay, hang, crash, status code."""

    def __init__(self, driver: FakeDriver, instance: _Instance) -> None:
        self.driver = driver
        self.instance = instance

    def before(self, faults: Sequence[PluginFault], context: grpc.ServicerContext | None = None) -> None:
        for fault in faults:
            if fault.delay:
                self.instance.stop_event.wait(fault.delay)
        if any(f.hang for f in faults) and self.driver._wait_released(self.instance, context):
            # The caller gave up (deadline): a Go driver sees its context cancelled here.
            raise CallError("CANCELLED", "fake driver: the caller cancelled the hung call")
        if any(f.block for f in faults):
            # Held until released, whatever the caller does; then the call does its work.
            self.driver._wait_released(self.instance, None)
        if self.instance.stop_event.is_set():
            raise CallError("UNAVAILABLE", "fake driver is stopping")
        if any(f.crash == "before" for f in faults):
            raise CrashError
        for fault in faults:
            if fault.code and fault.code != "OK":
                raise CallError(
                    fault.code, fault.message or f"fake driver: scripted {fault.code} for {fault.rpc}"
                )

    def after(self, faults: Sequence[PluginFault]) -> None:
        if any(f.crash == "after" for f in faults):
            raise CrashError


class _Instance:
    """One run of the driver, between start() and stop()/kill(); the servicers' runtime."""

    def __init__(self, driver: FakeDriver) -> None:
        self.driver = driver
        self.config = driver.config
        self.journal = driver.journal
        self.stop_event = threading.Event()
        self.stopped = threading.Event()
        self.effects: CallEffects = _Effects(driver, self)
        self.core = DriverCore(
            driver.config, claim_source=driver.claim_source, effects=self.effects, behaviour=driver.behaviour
        )
        self.board = HealthBoard(driver.config.node_name, driver.config.device_names())
        self.board.apply(driver.behaviour.health)
        self.servers: list[grpc.Server] = []
        """The DRA socket's server first, then the registration socket's."""
        self.executors: list[futures.ThreadPoolExecutor] = []
        self.refusing = False
        """The DRA socket is closed by :meth:`FakeDriver.refuse_connections`."""

    def release_workers(self) -> None:
        """Let the servers' worker threads end once idle (grpc's stop leaves them waiting)."""
        for executor in self.executors:
            executor.shutdown(wait=False)

    def select_faults(self, rpc: str, claims: Sequence[ClaimRef] = ()) -> list[PluginFault]:
        return self.driver._plan.select(rpc, claims)

    def on_registration_status(self, registered: bool, error: str) -> None:
        self.driver._on_registration_status(registered, error)

    def crash(self) -> None:
        self.driver._crash(self)

    @property
    def stopping(self) -> bool:
        return self.stop_event.is_set()


class FakeDriver:
    """A fake DRA driver; see the module docstring. Use as a context manager or start()/stop()."""

    def __init__(
        self,
        config: FakeDriverConfig,
        *,
        claim_source: ClaimSource | None = None,
        recorder: Recorder | None = None,
        publisher: SlicePublisher | None = None,
        crash_handler: CrashHandler | None = None,
        max_workers: int = 16,
    ) -> None:
        config.validate()
        config.behaviour.validate()
        self.config = config
        self.claim_source = claim_source
        self.publisher = publisher
        self.behaviour = config.behaviour
        self.journal = Journal(config.driver_name, recorder=recorder, path=config.journal or None)
        self.ready = threading.Event()
        """Set once both sockets are listening."""
        self.registered = threading.Event()
        """Set when NotifyRegistrationStatus(plugin_registered=true) arrives."""
        self.registration_status: tuple[bool, str] | None = None
        """The last (plugin_registered, error) the kubelet sent."""
        self.crashed = threading.Event()
        """Set when a ``crash`` fault fired in-process."""
        self.stopped = threading.Event()
        """Set when stop(), kill() or an in-process crash has finished (sockets removed or stale)."""
        self._crash_handler = crash_handler
        self._max_workers = max_workers
        self._plan = FaultPlan(self.behaviour.faults)
        self._lifecycle = threading.RLock()
        self._release = threading.Condition()
        self._release_generation = 0
        self._hung = 0
        self._instance: _Instance | None = None
        self._previous: _Instance | None = None

    # --- lifecycle --------------------------------------------------------------

    def start(self) -> None:
        """Serve the DRA socket, then the registration socket; publish slices if configured."""
        with self._lifecycle:
            if self._instance is not None:
                raise DrasimError(f"fake driver {self.config.driver_name} is already running")
            previous = self._previous
            if previous is not None:
                # A crash kills the old instance on another thread; let it finish leaving its
                # sockets behind before the new instance binds fresh ones at the same paths.
                previous.stopped.wait(10)
            self.ready.clear()
            self.registered.clear()
            self.crashed.clear()
            self.stopped.clear()
            instance = _Instance(self)
            cfg = self.config
            for directory in (cfg.plugin_path.parent, cfg.registration_path.parent, Path(cfg.cdi_dir)):
                directory.mkdir(parents=True, exist_ok=True)
            try:
                instance.servers.append(
                    self._serve(cfg.plugin_path, self._dra_servicers(instance), instance.executors)
                )
                instance.servers.append(
                    self._serve(
                        cfg.registration_path,
                        [(reg_grpc.add_RegistrationServicer_to_server, RegistrationServicer(instance))],
                        instance.executors,
                    )
                )
            except BaseException:
                for server in instance.servers:
                    server.stop(0).wait()
                instance.release_workers()
                raise
            self._instance = instance
            if self.publisher is not None:
                try:
                    self.publisher(build_slices(cfg))
                except BaseException:
                    self.stop(grace=0)  # never leave a half-started driver behind
                    raise
            self.ready.set()

    def _dra_servicers(self, instance: _Instance) -> list[tuple[Callable[[Any, Any], None], Any]]:
        served = self.config.services
        adders: list[tuple[Callable[[Any, Any], None], Any]] = []
        for api in (*DRA_APIS, *HEALTH_APIS):  # the one table of plugin API versions
            if api.service not in served:
                continue
            if api.kind == "dra":
                adders.append((api.add_servicer, DRAPluginServicer(instance, api.messages)))
            else:
                adders.append((api.add_servicer, HealthServicer(instance, api.messages, api.proto_package)))
        return adders

    def _serve(
        self,
        path: Path,
        adders: list[tuple[Callable[[Any, Any], None], Any]],
        executors: list[futures.ThreadPoolExecutor],
    ) -> grpc.Server:
        if len(str(path).encode()) > 107:
            raise ConfigError(f"{path}: unix socket path longer than 107 bytes")
        # gRPC listens on a hidden name, linked to ``path``: its server removes the name it
        # bound when it stops, and only the hidden one goes (see kill). Watchers ignore names
        # starting with a dot (drasim's and upstream's plugin watchers alike).
        bound = _serving_name(path)
        if len(str(bound).encode()) > 107:
            bound = path
        with contextlib.suppress(FileNotFoundError):
            bound.unlink()  # left by a killed predecessor
        executor = futures.ThreadPoolExecutor(max_workers=self._max_workers)
        executors.append(executor)
        server = grpc.server(executor)
        for add, servicer in adders:
            add(servicer, server)
        try:
            server.add_insecure_port(f"unix:{bound}")
        except RuntimeError as err:
            raise ConfigError(f"{path}: cannot listen on unix socket: {err}") from err
        server.start()
        if bound != path:
            _publish_socket(bound, path)
        return server

    def stop(self, grace: float | None = 1.0) -> None:
        """Clean stop: release hung calls, let running calls finish (up to ``grace`` seconds),
        stop serving and remove both sockets (idempotent)."""
        instance = self._detach()
        if instance is None:
            return
        for server in reversed(instance.servers):
            server.stop(grace).wait()
        instance.release_workers()
        for path in (self.config.registration_path, self.config.plugin_path):
            for name in (path, _serving_name(path)):
                with contextlib.suppress(FileNotFoundError):
                    name.unlink()
        instance.stopped.set()
        self.stopped.set()

    def kill(self) -> None:
        """Like SIGKILL: stop serving at once, leave both socket files behind (stale).

        gRPC unlinks its unix socket files when a server stops, which a killed process
        never does. gRPC therefore listens on a hidden second name of each socket (see
        ``_serve``), and only that one goes: the visible file, its inode and modification
        time stay untouched, so no plugin watcher (drasim's polling one or upstream's
        fsnotify one) sees any change, exactly as after a real SIGKILL. A socket gRPC had to
        bind at its own name (a path too long for a hidden twin) is kept under a hidden
        hard link while the servers stop and moved back afterwards.
        """
        instance = self._detach()
        if instance is None:
            return
        paths = (self.config.plugin_path, self.config.registration_path)
        # A socket served under its hidden name (see _serve) keeps its visible name untouched:
        # no file event at all. One bound at its own name is kept and moved back.
        direct = [not _serving_name(path).exists() for path in paths]
        kept = [_keep_socket(path) if d else None for path, d in zip(paths, direct, strict=True)]
        for server in instance.servers:
            server.stop(0).wait()
        instance.release_workers()
        for path, keeper, d in zip(paths, kept, direct, strict=True):
            if d:
                _restore_socket(path, keeper)
        instance.stopped.set()
        self.stopped.set()

    def _detach(self) -> _Instance | None:
        with self._lifecycle:
            instance, self._instance = self._instance, None
            if instance is None:
                return None
            self._previous = instance
            self.ready.clear()
            instance.stop_event.set()
            instance.board.close()
        with self._release:
            self._release.notify_all()
        return instance

    def reset_connections(self) -> None:
        """End every connection to the DRA socket (calls in flight fail ``Unavailable``) and
        serve it again at once, as a driver whose gRPC server dropped its connections."""
        with self._lifecycle:
            instance = self._running()
            if instance.refusing:
                return
            instance.servers[0].stop(0).wait()
            instance.servers[0] = self._serve_dra(instance)

    def refuse_connections(self, refuse: bool = True) -> None:
        """Close the DRA socket (connections end, new ones are refused) until
        ``refuse_connections(False)``; the registration socket and the driver's state stay."""
        with self._lifecycle:
            instance = self._running()
            if refuse == instance.refusing:
                return
            if refuse:
                instance.servers[0].stop(0).wait()
            else:
                instance.servers[0] = self._serve_dra(instance)
            instance.refusing = refuse

    def _running(self) -> _Instance:
        instance = self._instance
        if instance is None:
            raise DrasimError(f"fake driver {self.config.driver_name} is not running")
        if self.config.plugin_path == self.config.registration_path:
            raise ConfigError(
                f"fake driver {self.config.driver_name}: its DRA service shares the registration socket"
            )
        return instance

    def _serve_dra(self, instance: _Instance) -> grpc.Server:
        return self._serve(self.config.plugin_path, self._dra_servicers(instance), instance.executors)

    def restart(self, *, kill: bool = False) -> None:
        """Stop (or kill) and start again: in-memory state is rebuilt from the checkpoint."""
        if kill:
            self.kill()
        else:
            self.stop()
        self.start()

    @property
    def running(self) -> bool:
        """Is an instance serving?"""
        return self._instance is not None

    def __enter__(self) -> FakeDriver:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.journal.close()

    # --- scripting ---------------------------------------------------------------

    def set_behaviour(self, behaviour: Behaviour | dict[str, Any]) -> None:
        """Replace faults, bugs and health; fault counters restart.

        ``forgets-state`` takes effect from the next start.
        """
        if isinstance(behaviour, dict):
            behaviour = Behaviour.from_dict(behaviour)
        else:
            behaviour.validate()
        self.behaviour = behaviour
        self._plan = FaultPlan(behaviour.faults)
        instance = self._instance
        if instance is not None:
            instance.core.behaviour = behaviour
            instance.board.apply(behaviour.health)

    def add_faults(self, faults: Sequence[PluginFault | dict[str, Any]]) -> None:
        """Append fault rules (or behaviour-file fault mappings); rules already there keep their
        counters (a used-up rule stays used up)."""
        new = [decode_fault(f, f"faults[{i}]") for i, f in enumerate(faults)]
        with self._lifecycle:
            self.behaviour.faults.extend(new)
            self._plan.extend(new)

    def clear_faults(self) -> None:
        """Remove every fault rule (bugs and health stay)."""
        with self._lifecycle:
            self.behaviour.faults.clear()
            self._plan = FaultPlan([])

    def set_health(
        self, device: str, health: str, *, message: str = "", pool: str = "", timeout_seconds: int = 0
    ) -> None:
        """Report a new health for one device on every open health stream."""
        spec = HealthSpec(
            device=device, pool=pool, health=health, message=message, timeout_seconds=timeout_seconds
        )
        Behaviour(health=[spec]).validate("health")
        instance = self._instance
        if instance is not None:
            instance.board.apply([spec])

    def release_hangs(self) -> None:
        """Let every call held by a ``hang`` or ``block`` fault continue."""
        with self._release:
            self._release_generation += 1
            self._release.notify_all()

    def held_calls(self) -> int:
        """How many calls a ``hang`` or ``block`` fault holds right now."""
        with self._release:
            return self._hung

    def wait_hung(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Wait until at least ``count`` calls are blocked by a ``hang`` fault."""
        with self._release:
            return self._release.wait_for(lambda: self._hung >= count, timeout)

    def _wait_released(self, instance: _Instance, context: grpc.ServicerContext | None = None) -> bool:
        """Block a hung call until released, stopped, or cancelled by the caller (returns True then)."""
        cancelled = threading.Event()

        def on_done() -> None:
            cancelled.set()
            with self._release:
                self._release.notify_all()

        if context is not None:
            context.add_callback(on_done)
        with self._release:
            generation = self._release_generation
            self._hung += 1
            self._release.notify_all()
            try:
                self._release.wait_for(
                    lambda: (
                        self._release_generation != generation
                        or instance.stop_event.is_set()
                        or cancelled.is_set()
                    )
                )
            finally:
                self._hung -= 1
        return cancelled.is_set() and self._release_generation == generation

    def _on_registration_status(self, registered: bool, error: str) -> None:
        self.registration_status = (registered, error)
        if registered:
            self.registered.set()
        else:
            self.registered.clear()

    def _crash(self, instance: _Instance) -> None:
        if self._crash_handler is not None:
            self._crash_handler()
            return
        self.crashed.set()
        if self._instance is instance:
            threading.Thread(target=self.kill, name="fake-driver-crash", daemon=True).start()
        instance.stopped.wait(10)

    # --- inspection --------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        """Every call served so far (across restarts)."""
        return self.journal.calls

    def calls_to(self, rpc: str) -> list[Call]:
        """Calls of one RPC short name (e.g. NodePrepareResources), health stream messages excluded."""
        return [c for c in self.journal.calls if c.rpc == rpc and not c.stream]

    def prepared_claims(self) -> dict[str, PreparedClaim]:
        """Claims the running instance holds as prepared, keyed by UID (empty when stopped)."""
        instance = self._instance
        return {} if instance is None else instance.core.prepared_claims()

    def fault_counts(self) -> list[int]:
        """How often each fault of the current behaviour fired."""
        return self._plan.fired()

    @property
    def endpoint(self) -> str:
        """The DRA socket path."""
        return str(self.config.plugin_path)

    @property
    def registration_socket(self) -> str:
        """The registration socket path."""
        return str(self.config.registration_path)


def _serving_name(path: Path) -> Path:
    """The hidden name gRPC listens on for the socket at ``path``."""
    return path.with_name(f".{path.name}.live")


def _publish_socket(bound: Path, path: Path) -> None:
    """Make ``path`` a second name of the socket at ``bound``, replacing any stale file there in
    one rename (a watcher sees one new socket, not a removal and a creation)."""
    link = path.with_name(f".{path.name}.new")
    with contextlib.suppress(FileNotFoundError):
        link.unlink()
    os.link(bound, link)
    os.replace(link, path)


def _keep_socket(path: Path) -> Path | None:
    """Hard-link a socket file to a hidden name in the same directory (None if impossible)."""
    keeper = path.with_name(f".{path.name}.killed")
    with contextlib.suppress(FileNotFoundError):
        keeper.unlink()
    try:
        os.link(path, keeper)
    except OSError:
        return None
    return keeper


def _restore_socket(path: Path, keeper: Path | None) -> None:
    """Put the kept socket file back (or a fresh dead one when it could not be kept)."""
    if keeper is not None:
        try:
            os.replace(keeper, path)
        except OSError:
            with contextlib.suppress(OSError):
                keeper.unlink()
        else:
            return
    if not path.exists():
        _leave_stale_socket(path)


def _leave_stale_socket(path: Path) -> None:
    """Create a socket file nobody listens on (what a killed process leaves behind)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with contextlib.suppress(OSError):
            sock.bind(str(path))
    finally:
        sock.close()
