"""The simulated node of one scenario run: API server, drivers, the emulated kubelet, time.

:class:`World` owns every component and its lifetime. Steps (:mod:`drasim.runner.actions`) change
it, expectations (:mod:`drasim.runner.expectations`) read it. Time has two faces: real time, in which
gRPC deadlines and fault delays elapse (kubelet durations multiplied by the profile's
``timeScale``), and the scenario's nominal clock, which only ``advanceClock`` and
downtimes move and which drives the kubelet's periodic work (reconcile passes, pod
worker retries, slice wipes, registration retries).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from dataclasses import replace as replace_fields
from pathlib import Path
from typing import Any

from drasim.apiserver import ObjectStore
from drasim.apiserver.port import Cluster
from drasim.checkpoint.store import FileCheckpointStore
from drasim.clock import ScaledClock
from drasim.errors import ApiError, ConfigError, DrasimError, KubeletError
from drasim.faults import ApiFault, PluginFault
from drasim.journal import Journal
from drasim.kubelet.manager import Manager
from drasim.metrics import Metrics
from drasim.plugins.host import PluginHost
from drasim.plugins.registration import is_timeout
from drasim.plugins.timers import ManualScheduler
from drasim.profiles import KubeletVersion
from drasim.profiles import profile as version_profile
from drasim.runner.backends import Backend, chosen_backend, open_backend
from drasim.runner.drivers import DriverHandle, FakeDriverHandle, ProcessDriverHandle
from drasim.runner.pods import PodRecord
from drasim.runner.process import DriverProcessError
from drasim.runner.workspace import Workspace, create_workspace
from drasim.scenario.limits import DEFAULT_SCENARIO_TIMEOUT
from drasim.scenario.registry import walk_steps
from drasim.scenario.schema import DriverSpec, Scenario
from drasim.timescale import effective_time_scale

# How long (real seconds) we wait for a plugin registration or deregistration.
REGISTRATION_TIMEOUT = 15.0
# How long (real seconds) we give a newly registered plugin's connection to come up.
CONNECT_TIMEOUT = 5.0
# How long (real seconds) we wait for a freshly started driver process's ResourceSlices.
SLICE_TIMEOUT = 10.0
# How long (real seconds) we wait for a driver process to republish the ResourceSlices the
# kubelet's start-up wipe deleted: the kubeletplugin helper's slice controller syncs a pool
# DefaultSyncDelay (30 s, real time) after a slice of it was deleted.
REPUBLISH_TIMEOUT = 40.0
NODE_UID_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")


class ScenarioAborted(DrasimError):  # noqa: N818 - it is an event, not an error
    """The run was aborted (its time limit passed): nothing may be started any more."""


def _exited_on_its_own(handle: DriverHandle) -> bool:
    """Whether ``handle`` is a driver process that ended without a stop or kill step.

    A stopped or killed process is forgotten (no exit status); one that exited by
    itself keeps its status until the next start.
    """
    return isinstance(handle, ProcessDriverHandle) and handle.process.returncode() is not None


class SimulatedCrash(Exception):  # noqa: N818 - it is an event, not an error
    """Raised from a kubelet hook to make the kubelet die at that point."""

    def __init__(self, point: str) -> None:
        super().__init__(f"kubelet crashed at {point}")
        self.point = point


@dataclass
class RunOptions:
    """How to run scenarios, beyond what each scenario says."""

    time_scale: float | None = None
    """Override every scenario's kubelet ``timeScale`` (1 = real kubelet timers)."""
    driver_cmd: str | None = None
    """Run this command instead of the scenario's fake driver (a real driver under test)."""
    driver_name: str | None = None
    """The name the ``driver_cmd`` driver registers (default: the scenario's driver name)."""
    backend: str | None = None
    """``memory``, ``http`` or ``kubeconfig`` (see :mod:`drasim.runner.backends`); ``None``: the
    scenario's ``backend:`` pin, else ``memory``."""
    kubeconfig: Path | None = None
    """The cluster of the ``kubeconfig`` backend (default: ``$KUBECONFIG``, ``~/.kube/config``)."""
    context: str | None = None
    """The kubeconfig context of the ``kubeconfig`` backend (default: its current context)."""
    keep_workspace: bool = False
    """Leave the scenario's directory tree behind for inspection (in /tmp unless ``workspace_dir``)."""
    workspace_dir: Path | None = None
    """Create each scenario's tree under this directory (default: /dev/shm when usable, else /tmp)."""
    bugs: tuple[str, ...] = ()
    """Switch these fake-plugin bugs on in every fake driver (to prove scenarios catch them)."""
    capabilities: tuple[str, ...] = ()
    """What a ``driver_cmd`` driver supports (e.g. ``health``); scenarios needing more are skipped."""
    kubelet_version: str | None = None
    """Run as this kubelet version (``"1.34"``); None: the newest one ``kubeletVersions`` allows."""
    kubelet_versions: tuple[str, ...] = ()
    """``run_scenarios`` runs every scenario once per version listed here (``--kubelet-version``)."""
    scenario_timeout: float | None = DEFAULT_SCENARIO_TIMEOUT
    """Real seconds one scenario may run (set-up and steps); then it is stopped and fails. None: no limit."""
    kubelet: str = "emulated"
    """``emulated`` (drasim's port of the DRA manager), ``upstream`` (upstream's own, built from
    the release matching the run's kubelet version) or ``upstream@<release>`` (see
    :mod:`drasim.upstream_kubelet`)."""
    record_checkpoint_bytes: bool = False
    """Journal the checkpoint file's bytes (``checkpoint-file``) and each container's CDI devices
    (``GetResources``) at the end of every step, for ``drasim diff``."""
    fsync: bool = False
    """fsync the kubelet checkpoint and the fake drivers' files on every write, as on a real node.

    Off by default: the writes stay atomic (temporary file, rename), every crash a scenario
    can simulate (a killed kubelet or driver) sees the old or the new file either way, and
    the workspace is thrown away afterwards; an fsync only costs milliseconds on a disk.
    """


@dataclass
class KubeletRuntime:
    """The parts of a running emulated kubelet."""

    manager: Manager
    host: PluginHost
    scheduler: ManualScheduler
    started_at: float
    checkpoint: FileCheckpointStore
    """The kubelet's checkpoint store, closed when the kubelet stops (it keeps files open)."""
    upstream: Any = None
    """With ``--kubelet upstream``: the upstream kubelet process (an UpstreamKubelet)."""


@dataclass
class World:
    """Everything one scenario run touches; :func:`open_world` builds it with every part in place."""

    scenario: Scenario
    options: RunOptions
    workspace: Workspace
    journal: Journal
    metrics: Metrics
    backend: Backend
    clock: ScaledClock
    """The clock handed to components (real time, scaled timers)."""
    version: KubeletVersion
    """The kubelet version the next kubelet start uses (``restartKubelet: {version: ...}`` changes it)."""
    aborted: threading.Event
    """Set when the run is stopped from outside (time limit): waits end, nothing new starts."""
    runner_api: Cluster = field(init=False)
    kubelet_api: Cluster = field(init=False)
    driver_api: Cluster = field(init=False)
    drivers: dict[str, DriverHandle] = field(default_factory=dict, init=False)
    kubelet: KubeletRuntime | None = field(default=None, init=False)
    pods: dict[str, PodRecord] = field(default_factory=dict, init=False)
    now: float = field(default=0.0, init=False)
    next_reconcile: float | None = field(default=None, init=False)
    crash_at: str | None = field(default=None, init=False)
    crashed_at: str | None = field(default=None, init=False)
    health: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict, init=False)
    health_changed: threading.Condition = field(default_factory=threading.Condition, init=False)
    """Notified whenever a health report arrived (guards ``health``)."""
    scheduling: threading.Lock = field(default_factory=threading.Lock, init=False)
    """Held while a pod is scheduled (claims allocated and reserved), as the scheduler is serial."""
    timer_runs: int = field(default=0, init=False)
    """Reconcile passes and pod-worker retries the nominal clock has fired so far."""
    _shut_down: bool = field(default=False, init=False)
    _lifecycle: threading.Lock = field(default_factory=threading.Lock, init=False)
    _uids: Iterator[int] = field(default_factory=itertools.count, init=False)

    def __post_init__(self) -> None:
        self.runner_api = self.backend.runner_api
        self.kubelet_api = self.backend.kubelet_api
        self.driver_api = self.backend.driver_api

    # ------------------------------------------------------------------ properties
    @property
    def profile(self) -> Any:
        """The scenario's kubelet profile."""
        return self.scenario.spec.kubelet

    @property
    def node(self) -> str:
        """The node name (on a real cluster, the run's fake node)."""
        return self.backend.node

    @property
    def store(self) -> ObjectStore:
        """drasim's own object store (fault rules live here); a DrasimError on a real cluster."""
        if self.backend.store is None:
            msg = f"the {self.backend.name} backend has no drasim object store (API server faults need one)"
            raise DrasimError(msg)
        return self.backend.store

    @property
    def time_scale(self) -> float:
        """Real seconds per nominal second."""
        return effective_time_scale(self.profile.time_scale, self.options.time_scale)

    def new_uid(self, kind: str, name: str) -> str:
        """A deterministic, unique UID for an object the runner creates."""
        return str(uuid.uuid5(NODE_UID_NAMESPACE, f"{self.scenario.name}/{kind}/{name}/{next(self._uids)}"))

    # ------------------------------------------------------------------ set-up
    def setup(self) -> None:
        """Start the node: backend, node object, drivers, kubelet, the scenario's objects."""
        self.backend.setup()
        if not self.backend.real_cluster:
            self._create_node()
        for spec in self._driver_specs():
            self.drivers[spec.name] = self._make_driver(spec)
        for fault in self.scenario.spec.api_server.faults:
            self.add_api_fault(fault)
        for obj in self.scenario.spec.objects:
            self.runner_api.apply(self.manifest(obj))
        for handle in self.drivers.values():
            self.start_driver(handle, wait=False)
        self.start_kubelet()

    def effective_services(self) -> list[str]:
        """DRA services the kubelet offers: its version's, narrowed by a scenario's ``kubelet.services``."""
        from drasim.scenario.common import DEFAULT_SERVICES

        chosen = list(self.profile.services)
        if chosen == list(DEFAULT_SERVICES):
            return list(self.version.dra_services)
        return [s for s in chosen if self.version.supports_service(s)]

    def _create_node(self) -> None:
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": self.node, "labels": {"kubernetes.io/hostname": self.node}},
            "spec": {},
        }
        self.runner_api.create(node)

    def _driver_specs(self) -> list[DriverSpec]:
        return _driver_specs(self.scenario)

    def _make_driver(self, spec: DriverSpec) -> DriverHandle:
        if self.options.driver_cmd and spec is self._driver_specs()[0]:
            from drasim.scenario.schema import CommandDriverSpec

            name = self.options.driver_name or spec.name
            command = CommandDriverSpec(name=name, args=self.options.driver_cmd)
            return self._process_driver(command)
        if spec.fake is not None:
            fake = spec.fake
            if fake.faults:
                fake = replace_fields(fake, faults=[self.plugin_fault(f) for f in fake.faults])
            if self.options.bugs:
                bugs: list[Any] = list(dict.fromkeys([*fake.bugs, *self.options.bugs]))
                fake = replace_fields(fake, bugs=bugs)
            return FakeDriverHandle(
                spec=fake,
                workspace=self.workspace,
                node_name=self.node,
                claim_source=self.driver_client(fake.name).get_resource_claim,
                recorder=self.journal,
                publisher=self._publisher(fake.name),
                time_scale=self.time_scale,
                fsync=self.options.fsync,
            )
        assert spec.command is not None
        return self._process_driver(spec.command)

    def _process_driver(self, command: Any) -> DriverHandle:
        kubeconfig = self._ensure_http()
        values = {
            "node": self.node,
            "kubeconfig": str(kubeconfig),
            "registrar_dir": str(self.workspace.registry_dir),
            "plugins_dir": str(self.workspace.plugins_dir),
            "plugin_dir": str(self.workspace.plugin_dir(command.name)),
            "cdi_dir": str(self.workspace.cdi_dir),
            "state_dir": str(self.workspace.driver_state_dir / command.name),
            "driver_name": command.name,
        }

        def on_event(what: str, fields: dict[str, object]) -> None:
            tails = {}
            if "stderr" in fields:
                tails["stderr_tail"] = fields.pop("stderr")
            self.journal.record("plugin-process", action=what, driver=command.name, **fields, **tails)

        return ProcessDriverHandle(command, values, self.workspace.logs_dir, on_event)

    def _ensure_http(self) -> Path:
        """The kubeconfig driver processes get (memory: starts the HTTP API server on first use)."""
        with self._lifecycle:
            self._check_not_shut_down()
            return self.backend.kubeconfig()

    def manifest(self, obj: Any) -> Any:
        """A scenario manifest as the API server gets it: placeholders expanded, then relocated
        by the backend (on a real cluster: the run's namespaces and names)."""
        expanded = self.expand(obj)
        return self.backend.relocate(expanded) if isinstance(expanded, dict) else expanded

    def node_name(self, name: str) -> str:
        """The API-server name of a node the scenario names (the run's node for the scenario's own)."""
        if name in (self.node, str(self.profile.node)):
            return self.node
        return self.backend.node_name(name)

    def plugin_fault(self, fault: PluginFault) -> PluginFault:
        """A plugin fault rule whose ``claim`` names the claim as the API server does."""
        if not fault.claim:
            return fault
        namespace, _, name = fault.claim.rpartition("/")
        return replace_fields(fault, claim=f"{self.namespace(namespace or 'default')}/{name}")

    def namespace(self, namespace: str) -> str:
        """The API-server namespace of a namespace the scenario names."""
        return self.backend.namespace(namespace)

    def driver_client(self, driver: str) -> Cluster:
        """The API client of in-process fake ``driver``: calls are journaled under its name.

        Faults aimed at ``client: driver`` hit it all the same (every client name other than
        kubelet and runner is a driver), and the report draws its calls on its own lifeline.
        """
        if driver in ("kubelet", "runner", "driver"):
            return self.driver_api
        return self.backend.driver_client(driver)

    def _publisher(self, driver: str) -> Callable[[list[dict[str, Any]]], None]:
        """Make the API server hold exactly ``slices`` for (driver, this node), like a slice controller."""
        api = self.driver_client(driver)

        def publish(slices: list[dict[str, Any]]) -> None:
            selector = f"spec.driver={driver},spec.nodeName={self.node}"
            with contextlib.suppress(ApiError):  # slices already as desired are kept, as a controller does
                have = api.list("resource.k8s.io/v1", "ResourceSlice", field_selector=selector)
                if _specs(have) == _specs(slices):
                    return
            with contextlib.suppress(ApiError):
                api.delete_collection("resource.k8s.io/v1", "ResourceSlice", field_selector=selector)
            for item in slices:
                api.create(item)

        return publish

    def expand(self, obj: Any) -> Any:
        """Replace ``$(DRIVER)`` and ``$(NODE)`` in every string of a manifest.

        ``$(DRIVER)`` is the first driver's name: the ``--driver-name`` of a driver
        command that replaced it, else the scenario's.
        """
        return _expand(obj, _first_driver(self.scenario, self.options), self.node)

    # ------------------------------------------------------------------ drivers
    def driver(self, name: str = "") -> DriverHandle:
        """The named driver, or the only one when ``name`` is empty."""
        if not name:
            if len(self.drivers) == 1:
                return next(iter(self.drivers.values()))
            msg = f"name the driver: this scenario has several ({', '.join(self.drivers)})"
            raise ConfigError(msg)
        try:
            return self.drivers[name]
        except KeyError:
            msg = f"unknown driver {name!r}; drivers: {', '.join(self.drivers)}"
            raise ConfigError(msg) from None

    def start_driver(self, handle: DriverHandle, *, wait: bool = True) -> None:
        """Start a driver; with a running kubelet, wait until it registered (or failed to)."""
        mark = self.journal.mark()  # the registration may be journaled before start() returns
        with self._lifecycle:
            self._check_not_shut_down()
            handle.start()
        if isinstance(handle, FakeDriverHandle):
            self.journal.record("plugin-process", action="started", driver=handle.name, pid=None)
        if wait and self.kubelet is not None:
            self.wait_registration_attempt(handle.name, since=mark)

    def wait_registration_attempt(self, driver: str, *, since: int | None = None) -> None:
        """Wait until the kubelet finished registering ``driver`` (successfully or not).

        The runner's plugin watcher polls (see :meth:`start_kubelet`), so a rescan plus
        waiting for the reconciler is enough for in-process fakes, whose sockets exist
        when ``start()`` returns. A driver process creates its sockets later: wait for
        a registration outcome (journaled after the seq ``since``, by default now) while
        checking that the process stays alive. Callers pass the journal's mark from before
        the step that lets the kubelet see the driver (starting the kubelet or the driver):
        a quick driver can be registered before this wait begins.
        """
        assert self.kubelet is not None
        host = self.kubelet.host
        handle = self.drivers.get(driver)
        if handle is None:  # a --driver-name process is keyed by the scenario's driver name
            handle = next((h for h in self.drivers.values() if h.name == driver), None)
        if isinstance(handle, ProcessDriverHandle):
            self._wait_process_registration(handle, since)
            return
        self.settle_registrations()
        if not host.manager.instances(driver) and self._last_registration_timed_out():
            # The reconciler retries a dial that ran out of time (see _wait_process_registration).
            host.wait_registered(driver, timeout=REGISTRATION_TIMEOUT)
        if host.manager.instances(driver):
            # The kubelet connects at once after registering; let that happen before the
            # scenario moves on, so connection-driven work (cancelling a slice wipe) is done.
            host.wait_registered(driver, timeout=CONNECT_TIMEOUT, connected=True)

    def _last_registration_timed_out(self) -> bool:
        last = self.journal.last("registration")
        return last is not None and last.get("outcome") == "failed" and is_timeout(str(last.get("error")))

    def _wait_process_registration(self, handle: ProcessDriverHandle, since: int | None = None) -> None:
        """Wait for a driver process's registration outcome, then (once per start) its slices.

        The registration socket the kubelet used is remembered on the handle (for
        ``deregisterPlugin``). A freshly started process publishes its ResourceSlices
        asynchronously, like the kubeletplugin helper's slice controller; scenarios
        allocate from them at once, so wait until at least one slice of (driver, node)
        exists. A driver that publishes none is not an error here: a journal event
        says so and allocations then report "0 available".
        """
        assert self.kubelet is not None
        host = self.kubelet.host
        driver = handle.name
        mark = self.journal.mark() if since is None else since
        timeout = float(getattr(handle.spec, "start_timeout", REGISTRATION_TIMEOUT) or REGISTRATION_TIMEOUT)

        def outcomes() -> list[dict[str, Any]]:
            # A deregistration (of the instance this one replaces) is not an attempt; a
            # failed GetInfo is journaled without a driver name. A dial that timed out is
            # not an outcome either: the socket is there, the plugin reconciler retries it
            # with backoff as upstream's does, and on a loaded machine the first dial of a
            # just-started process can miss the scaled deadline.
            return [
                dict(e)
                for e in self.journal.events("registration", since_seq=mark)
                if (e.get("outcome") == "registered" and e.get("driver") == driver)
                or (
                    e.get("outcome") == "failed"
                    and e.get("driver") in (driver, None)
                    and not is_timeout(str(e.get("error", "")))
                )
            ]

        def attempted() -> bool:
            host.sync(timeout=1.0)
            return bool(outcomes())

        try:
            handle.process.wait_until(attempted, timeout=timeout, what=f"driver {driver} to register")
        except DriverProcessError:
            self._journal_exit(handle)
            raise
        outcome = outcomes()[-1]
        registered = outcome.get("outcome") == "registered"
        if registered:
            if outcome.get("socket"):
                handle.registered_socket = Path(str(outcome["socket"]))
            # As for in-process fakes: the kubelet connects right after registering, and the
            # connection cancels a pending slice wipe; a step that advances the clock before
            # that would fire the wipe (seen under load with the example driver).
            endpoint = outcome.get("endpoint")
            host.wait_registered(
                driver, timeout=CONNECT_TIMEOUT, endpoint=str(endpoint) if endpoint else None, connected=True
            )
        starts = handle.process.starts
        if handle.slices_seen_for_start == starts:
            return
        handle.slices_seen_for_start = starts
        handle.slices_wiped = False
        # A driver publishes its slices through the API server whether or not the kubelet
        # accepted its registration (the kubeletplugin helper does), so a scenario about a
        # refused registration still allocates from them.
        try:
            if self._wait_for_slices(handle, SLICE_TIMEOUT):
                handle.publishes_slices = True
        except DriverProcessError:
            if registered:
                raise
            # A driver may exit when the kubelet refuses it; that is for the scenario to check.

    def _wait_for_slices(self, handle: ProcessDriverHandle, timeout: float) -> bool:
        """Wait until a ResourceSlice of (driver, node) exists; journal ``no-slices`` if none comes.

        Polls the store directly: the polls are not API calls of anybody, so they stay out
        of the journal. Raises :class:`DriverProcessError` if the process exits meanwhile.
        """
        from drasim.runner.expectations.node import list_slices

        driver = handle.name
        selector = f"spec.driver={driver},spec.nodeName={self.node}"
        try:
            handle.process.wait_until(
                lambda: bool(list_slices(self, selector)),
                timeout=timeout,
                what=f"driver {driver} to publish its ResourceSlices",
            )
        except DriverProcessError:
            if not handle.running:
                self._journal_exit(handle)
                raise
            self.journal.record(
                "plugin-process",
                action="no-slices",
                driver=driver,
                pid=handle.process.pid,
                message=f"no ResourceSlice of this driver and node appeared within {timeout:g}s",
            )
            return False
        return True

    def wait_republished_slices(self) -> None:
        """Before allocating: wait for slices that the kubelet's start-up wipe removed.

        A driver process's slice controller republishes them on its own schedule (the
        kubeletplugin helper: 30 s after the delete), so a kubelet restart does not wait
        for that; only an allocation that needs the slices does.
        """
        for handle in self.drivers.values():
            if isinstance(handle, ProcessDriverHandle) and handle.slices_wiped and handle.running:
                handle.slices_wiped = False
                self.journal.record(
                    "plugin-process",
                    action="waiting-for-slices",
                    driver=handle.name,
                    pid=handle.process.pid,
                    message="the kubelet's start-up wipe deleted this driver's ResourceSlices; "
                    f"waiting up to {REPUBLISH_TIMEOUT:g}s for the driver to publish them again",
                )
                self._wait_for_slices(handle, REPUBLISH_TIMEOUT)

    def _journal_exit(self, handle: ProcessDriverHandle) -> None:
        """Record that a driver process ended on its own (``plugin-process`` ``exited``), if it did."""
        code = handle.process.returncode()
        if code is None:
            return
        process = handle.process
        self.journal.record(
            "plugin-process",
            action="exited",
            driver=handle.name,
            pid=process.pid,
            returncode=code,
            stderr_tail=process.tail(process.stderr_path),
        )

    def settle_registrations(self) -> None:
        """Rescan the registry until a pass changes no registration (at most a few passes).

        One pass can finish while a registration of an older socket generation was still in
        flight; the next pass then replaces it. Returning before that would let the next step
        race the re-registration ("driver ... is not registered").
        """
        assert self.kubelet is not None
        for _ in range(5):
            mark = self.journal.mark()
            if not self.kubelet.host.sync(timeout=REGISTRATION_TIMEOUT):
                msg = f"the kubelet's plugin registration did not settle within {REGISTRATION_TIMEOUT:g}s"
                raise DrasimError(msg)
            if not self.journal.events("registration", since_seq=mark):
                return

    def stop_driver(self, handle: DriverHandle, *, kill: bool) -> None:
        """Stop (or kill) a driver; with a running kubelet, wait for the consequences."""
        if kill and isinstance(handle, FakeDriverHandle) and self.kubelet is not None:
            # The fake keeps its socket files across the kill (see FakePlugin.kill); no registry
            # scan may see the moment they are away, as nothing could after a real SIGKILL.
            with self.kubelet.host.watcher.paused():
                handle.kill()
        elif kill:
            handle.kill()
        else:
            handle.stop()
        if isinstance(handle, FakeDriverHandle):
            self.journal.record("plugin-process", action="killed" if kill else "stopped", driver=handle.name)
        if self.kubelet is not None:
            self.settle_registrations()
            # A killed plugin stays registered (its socket is left behind); its health stream
            # ends once gRPC sees the server gone. Wait for that, so the next step sees the
            # kubelet's health cache cleared as upstream clears it.
            deadline = time.monotonic() + REGISTRATION_TIMEOUT
            for stream in self.kubelet.host.manager.health_streams(handle.name):
                if not stream.wait_idle(max(0.0, deadline - time.monotonic())):
                    self.journal.record(
                        "kubelet",
                        operation="health-stream-still-open",
                        driver=handle.name,
                        endpoint=stream.endpoint,
                        error=f"still open {REGISTRATION_TIMEOUT:g}s after the plugin was stopped",
                    )

    # ------------------------------------------------------------------ kubelet
    def _hook(self, point: str) -> None:
        if self.crash_at is not None and point == self.crash_at:
            self.crashed_at = point
            raise SimulatedCrash(point)

    def start_kubelet(self) -> None:
        """Start a kubelet from the checkpoint; raises KubeletError when it refuses to start."""
        timers = self.profile.timers
        scheduler = ManualScheduler()
        host = PluginHost(
            self.workspace.registry_dir,
            clock=self.clock,
            recorder=self.journal,
            metrics=self.metrics,
            services=self.effective_services(),
            version=self.version,
            call_timeout=timers.call_timeout,
            slice_wiper=self,
            node_name=self.node,
            wiping_delay=timers.wiping_delay,
            scheduler=scheduler,
            health_callback=self._on_health,
            health_ended_callback=self._on_health_ended,
            # Polling (plus the explicit rescans in wait_registration_attempt) keeps runs
            # deterministic: queued inotify events could otherwise arrive after a rescan.
            use_inotify=False,
            poll_interval=0.05,
            # Registration passes run on directory changes and on explicit syncs only, so
            # retries of failed registrations happen when the scenario advances its clock.
            reconcile_period=1e9,
        )
        checkpoint = FileCheckpointStore(
            self.workspace.checkpoint_path,
            recorder=self.journal,
            fsync=self.options.fsync,
            write_share_id=self.version.checkpoint_share_id,
        )
        upstream_process: Any = None
        try:
            if self.upstream_kubelet:
                # --kubelet upstream: upstream's DRA manager in its own process (the plugin host
                # above still registers drivers for the runner's own waits and health checks).
                manager, upstream_process = self._start_upstream_manager(host)
            else:
                manager = Manager(
                    claims=self.kubelet_api,
                    drivers=host.manager,
                    checkpoint=checkpoint,
                    clock=self.clock,
                    recorder=self.journal,
                    metrics=self.metrics,
                    hooks=self._hook,
                    version=self.version,
                )
        except KubeletError as err:
            host.stop()
            checkpoint.close()
            self.journal.record("kubelet", operation="start", error=str(err), version=self.version.version)
            raise
        self.journal.record("kubelet", operation="start", error=None, version=self.version.version)
        self.health.clear()
        # The startup wipe of every ResourceSlice of this node is due at once.
        scheduler.advance(0.0)
        # Drivers already running register as soon as the host's first scan sees their
        # sockets, which can be before the waits below begin: they look from here on.
        mark = self.journal.mark()
        with self._lifecycle:
            if self._shut_down:
                host.stop()
            self._check_not_shut_down()
            self.kubelet = KubeletRuntime(manager, host, scheduler, self.now, checkpoint, upstream_process)
            self.next_reconcile = self.now + float(timers.reconcile_period)
            host.start()
        for handle in self.drivers.values():
            if isinstance(handle, ProcessDriverHandle) and handle.publishes_slices:
                # The start-up wipe removed its slices; the next allocation waits until its
                # controller republished them (wait_republished_slices).
                handle.slices_wiped = True
        for name, handle in self.drivers.items():
            # A driver process that already exited on its own (not stopped by a step) is
            # waited for too: the wait reports its exit status and output at once, instead
            # of the scenario failing later on "0 available" devices.
            if handle.running or _exited_on_its_own(handle):
                self.wait_registration_attempt(name, since=mark)
        self._republish_slices()

    @property
    def upstream_kubelet(self) -> bool:
        """Whether the run uses upstream's own DRA manager (``--kubelet upstream``)."""
        return self.options.kubelet != "emulated"

    def _start_upstream_manager(self, host: PluginHost) -> tuple[Any, Any]:
        """Start the upstream kubelet for this kubelet version; KubeletError when upstream refuses."""
        from drasim.upstream_kubelet.adapter import UpstreamManager
        from drasim.upstream_kubelet.choice import parse_kubelet_choice, release_for, upstream_binary
        from drasim.upstream_kubelet.process import LaunchConfig, UpstreamKubelet, UpstreamStartError

        release = release_for(parse_kubelet_choice(self.options.kubelet), self.version.version)
        timers = self.profile.timers
        scale = self.time_scale
        config = LaunchConfig(
            binary=Path(upstream_binary(release)),
            state_dir=self.workspace.checkpoint_path.parent,
            registry_dir=self.workspace.registry_dir,
            kubeconfig=self.backend.kubeconfig(),
            node_name=self.node,
            log_path=self.workspace.logs_dir / "upstream-kubelet.log",
            call_timeout=float(timers.call_timeout) * scale,
            # Not scaled: upstream's wipe timer runs in real time while a scenario's clock only
            # moves when a step advances it, so a scaled delay would fire between steps.
            wiping_delay=float(timers.wiping_delay),
        )
        started = self.journal.mark()

        def registrations() -> dict[str, int]:
            counts: dict[str, int] = {}
            for event in self.journal.events("registration", since_seq=started, outcome="registered"):
                name = str(event.get("driver"))
                counts[name] = counts.get(name, 0) + 1
            return counts

        before = self.journal.mark()
        try:
            process = UpstreamKubelet(config)
        except UpstreamStartError as err:
            raise KubeletError(str(err)) from None
        # Upstream wipes the node's ResourceSlices at start, in the background; wait for that
        # DeleteCollection so it cannot remove slices the drivers publish again afterwards.
        self.journal.wait_for(
            REGISTRATION_TIMEOUT, "api", since_seq=before, verb="deletecollection", resource="resourceslices"
        )
        self.journal.record("kubelet", operation="upstream", release=release, pid=process.pid)
        manager = UpstreamManager(
            process,
            journal=self.journal,
            checkpoint_path=self.workspace.checkpoint_path,
            expected_drivers=host.manager.drivers,
            expected_registrations=registrations,
        )
        return manager, process

    def set_version(self, version: str) -> None:
        """Use another kubelet version from the next start on (an upgrade or a downgrade)."""
        previous, self.version = self.version.version, version_profile(version)
        self.kubelet_api.claim_version = self.version.resource_api_version
        self.journal.record("kubelet", operation="version", previous=previous, version=self.version.version)

    def _republish_slices(self) -> None:
        """Fake drivers' slice controllers notice the wipe and publish again."""
        for handle in self.drivers.values():
            if isinstance(handle, FakeDriverHandle) and handle.running:
                from fake_plugins import build_slices

                self._publisher(handle.name)(build_slices(handle.driver.config))

    def stop_kubelet(self) -> None:
        """Drop the kubelet: memory lost, checkpoint, sockets and drivers stay."""
        runtime, self.kubelet = self.kubelet, None
        self.next_reconcile = None
        if runtime is not None:
            if runtime.upstream is not None:
                runtime.upstream.stop()
            runtime.host.stop()
            runtime.scheduler.stop()
            runtime.checkpoint.close()
            self.journal.record("kubelet", operation="stop", error=None)

    # SliceWiper port, used by the kubelet's plugin manager.
    def delete_resource_slices(self, node_name: str, driver_name: str | None) -> None:
        """DeleteCollection of the node's (driver's) ResourceSlices, as the kubelet does."""
        selector = f"spec.nodeName={node_name}"
        if driver_name:
            selector += f",spec.driver={driver_name}"
        self.kubelet_api.delete_collection("resource.k8s.io/v1", "ResourceSlice", field_selector=selector)

    def _on_health(self, *args: Any, **kwargs: Any) -> None:
        """Health updates from the kubelet's health streams, kept per (driver, pool, device)."""
        from drasim.runner.health import absorb

        absorb(self, *args, **kwargs)

    def _on_health_ended(self, driver: str) -> None:
        """A health stream of ``driver`` ended: the kubelet forgets the driver's device health."""
        from drasim.runner.health import clear_driver

        clear_driver(self, driver)

    # ------------------------------------------------------------------ faults
    def add_api_fault(self, fault: ApiFault) -> None:
        """Install a scenario API-server fault rule in the store's fault injector."""
        from drasim.runner.faults import api_fault

        api_fault(self, fault)

    # ------------------------------------------------------------------ teardown
    def _check_not_shut_down(self) -> None:
        if self._shut_down:
            msg = "the run was stopped (its time limit passed); nothing more is started"
            raise ScenarioAborted(msg)

    def abort(self) -> None:
        """Stop the run from another thread: end waits, stop kubelet and drivers; never raises."""
        self.aborted.set()
        self.shut_down()

    def shut_down(self) -> None:
        """Stop the kubelet, every driver and the HTTP server, keeping the workspace; never raises.

        Driver processes have ended when this returns, so their logs are complete.
        Idempotent: :meth:`teardown` calls it again. Afterwards no driver or kubelet starts.
        """
        with self._lifecycle:
            if self._shut_down:
                return
            self._shut_down = True
        with contextlib.suppress(Exception):
            self.stop_kubelet()
        for handle in self.drivers.values():
            with contextlib.suppress(Exception):
                handle.close()
        with contextlib.suppress(Exception):
            self.backend.stop()

    def teardown(self) -> None:
        """Stop everything, delete what the run created on a real cluster, remove the workspace
        (unless kept); never raises. Called once the scenario's own thread is done with the world."""
        self.shut_down()
        with contextlib.suppress(Exception):
            self.backend.close()
        if not self.options.keep_workspace:
            with contextlib.suppress(Exception):
                self.workspace.remove()


def open_world(scenario: Scenario, options: RunOptions | None = None) -> World:
    """The world of one run of ``scenario``, every part in place and nothing started yet.

    Builds the clock, the workspace, the journal and the API-server backend (drasim's HTTP
    server already listens for the ``http`` backend); :meth:`World.setup` then starts the
    node and :meth:`World.teardown` removes it all. When a part cannot be built, what was
    built is removed again and the error raised.
    """
    from drasim.runner.versions import resolve_version

    options = options or RunOptions()
    version = version_profile(resolve_version(scenario, options)[0])
    scale = effective_time_scale(scenario.spec.kubelet.time_scale, options.time_scale)
    workspace = create_workspace(options.workspace_dir, keep=options.keep_workspace)
    journal = Journal()
    aborted = threading.Event()

    def latency(seconds: float) -> None:
        """An API-server fault's delay: a real wait that ends early when the run is aborted."""
        aborted.wait(seconds)

    try:
        backend = open_backend(
            chosen_backend(scenario, options.backend),
            scenario,
            journal,
            workspace.root,
            served=_served_resource_versions(scenario, version),
            claim_version=version.resource_api_version,
            kubeconfig=options.kubeconfig,
            context=options.context,
            expand=lambda obj: _expand(obj, _first_driver(scenario, options), backend.node),
            sleep=latency,
        )
    except BaseException:
        if not options.keep_workspace:
            with contextlib.suppress(Exception):
                workspace.remove()
        raise
    return World(
        scenario,
        options,
        workspace=workspace,
        journal=journal,
        metrics=Metrics(),
        backend=backend,
        clock=ScaledClock(scale) if scale > 0 else ScaledClock(1.0),
        version=version,
        aborted=aborted,
    )


def _served_resource_versions(scenario: Scenario, version: KubeletVersion) -> list[str]:
    """resource.k8s.io versions to serve: the scenario's, plus (when it kept the default) the
    versions its kubelets read claims through, as a cluster of that release serves them."""
    from drasim.scenario.schema import ApiServerSpec

    versions: list[str] = list(scenario.spec.api_server.resource_api_versions)
    if versions != ApiServerSpec().resource_api_versions:
        return versions
    needed = [version.resource_api_version]
    needed += [version_profile(v).resource_api_version for v in _restart_versions(scenario)]
    return versions + [v for v in dict.fromkeys(needed) if v not in versions]


def _driver_specs(scenario: Scenario) -> list[DriverSpec]:
    specs = scenario.spec.all_drivers()
    if not specs:
        msg = f"scenario {scenario.name}: no driver is configured"
        raise ConfigError(msg)
    return specs


def _first_driver(scenario: Scenario, options: RunOptions) -> str:
    """What ``$(DRIVER)`` stands for: the ``--driver-name`` of a driver command that replaced the
    first driver, else the scenario's first driver's name."""
    if options.driver_cmd and options.driver_name:
        return options.driver_name
    return _driver_specs(scenario)[0].name


def _expand(obj: Any, driver: str, node: str) -> Any:
    """``obj`` with ``$(DRIVER)`` and ``$(NODE)`` replaced in every string."""
    if isinstance(obj, str):
        return obj.replace("$(DRIVER)", driver).replace("$(NODE)", node)
    if isinstance(obj, list):
        return [_expand(item, driver, node) for item in obj]
    if isinstance(obj, dict):
        return {key: _expand(value, driver, node) for key, value in obj.items()}
    return obj


def _specs(slices: list[dict[str, Any]]) -> list[str]:
    """The slices' specs in a canonical, order-independent form."""
    return sorted(json.dumps(item.get("spec"), sort_keys=True) for item in slices)


def _restart_versions(scenario: Scenario) -> list[str]:
    """Every ``version`` of a restartKubelet/startKubelet step (also nested ones), in order."""
    versions = (getattr(step.args, "version", None) for step in walk_steps(scenario.spec.steps))
    return [v for v in versions if isinstance(v, str) and v]
