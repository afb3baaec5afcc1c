"""The simulated node of one scenario run: a small composition root over its parts.

:class:`World` holds the run's :class:`~drasim.runner.plan.RunPlan` and the parts that own
the node's state, each in its own module and none importing the world:

- ``api`` (:class:`~drasim.runner.apiside.ApiSide`): the API server (memory, http or a real
  cluster), names as it has them, fault rules;
- ``fleet`` (:class:`~drasim.runner.fleet.DriverFleet`): the drivers and the waits for them;
- ``kubelet_slot`` (:class:`~drasim.runner.kubeletslot.KubeletSlot`): the kubelet in the slot
  (``kubelet`` is the running one, or None), behind the :class:`~drasim.runner.kubeletslot.Kubelet` protocol;
- ``health`` (:class:`~drasim.runner.health.DeviceHealth`): the kubelet's device-health cache;
- ``clock`` (:class:`~drasim.runner.nodeclock.NodeClock`): nominal time and the real clock.

Steps (:mod:`drasim.runner.actions`) change the node through these parts, expectations
(:mod:`drasim.runner.expectations`) read them. The world itself only wires them together,
starts the node (:meth:`World.setup`) and takes it down again (:meth:`World.shut_down`,
:meth:`World.teardown`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drasim.errors import DrasimError
from drasim.journal import Journal
from drasim.metrics import Metrics
from drasim.profiles import KubeletVersion
from drasim.runner.apiside import ApiSide, expand
from drasim.runner.backends import open_backend
from drasim.runner.fleet import DriverFleet
from drasim.runner.health import DeviceHealth
from drasim.runner.kubelets import KUBELET_IMPLEMENTATIONS, UPSTREAM
from drasim.runner.kubeletslot import (
    SERVICE_NARROWING,
    Kubelet,
    KubeletNode,
    KubeletSlot,
    SimulatedCrash,
    effective_services,
)
from drasim.runner.nodeclock import NodeClock
from drasim.runner.options import RunOptions
from drasim.runner.plan import RunPlan, plan_run
from drasim.runner.pods import PodRecord
from drasim.runner.workspace import Workspace, create_workspace
from drasim.scenario.schema import Scenario

__all__ = ["ScenarioAborted", "SimulatedCrash", "World", "open_world"]


class ScenarioAborted(DrasimError):  # noqa: N818 - it is an event, not an error
    """The run was aborted (its time limit passed): nothing may be started any more."""


@dataclass
class World:
    """Everything one scenario run touches; :func:`open_world` builds it with every part in place."""

    plan: RunPlan
    workspace: Workspace
    journal: Journal
    metrics: Metrics
    api: ApiSide
    clock: NodeClock
    kubelet_slot: KubeletSlot
    aborted: threading.Event
    """Set when the run is stopped from outside (time limit): waits end, nothing new starts."""
    fleet: DriverFleet = field(init=False)
    health: DeviceHealth = field(init=False)
    pods: dict[str, PodRecord] = field(default_factory=dict, init=False)
    scheduling: threading.Lock = field(default_factory=threading.Lock, init=False)
    """Held while a pod is scheduled (claims allocated and reserved), as the scheduler is serial."""
    _shut_down: bool = field(default=False, init=False)
    _lifecycle: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.health = DeviceHealth(lambda: self.clock.now, lambda: self.kubelet_slot.version, self.journal)
        self.fleet = DriverFleet(
            api=self.api,
            journal=self.journal,
            workspace=self.workspace,
            options=self.plan.options,
            time_scale=self.plan.time_scale,
            kubelet=lambda: self.kubelet_slot.running,
            admit=self._admit,
        )

    # ------------------------------------------------------------------ what handlers read most
    @property
    def profile(self) -> Any:
        """The scenario's kubelet profile (``spec.kubelet``)."""
        return self.plan.scenario.spec.kubelet

    @property
    def kubelet(self) -> Kubelet | None:
        """The kubelet running in the slot, or None while it is stopped."""
        return self.kubelet_slot.running

    @property
    def version(self) -> KubeletVersion:
        """The kubelet version the (next) kubelet runs as."""
        return self.kubelet_slot.version

    @property
    def upstream_kubelet(self) -> bool:
        """Whether upstream's own DRA manager is in the slot (``--kubelet upstream``)."""
        return self.plan.kubelet == UPSTREAM

    @property
    def node(self) -> str:
        """The node name (on a real cluster, the run's fake node)."""
        return self.api.node

    # ------------------------------------------------------------------ set-up
    def setup(self) -> None:
        """Start the node: backend, node object, drivers, kubelet, the scenario's objects."""
        self.api.backend.setup()
        if not self.api.backend.real_cluster:
            self.api.create_node()
        self.fleet.build(
            self.plan.driver_specs(),
            self.plan.replacement,
            proxied=self.plan.proxied,
            splice=self.plan.proxy_splice,
        )
        for fault in self.plan.scenario.spec.api_server.faults:
            self.api.add_api_fault(fault)
        for obj in self.plan.scenario.spec.objects:
            self.api.runner_api.apply(self.api.manifest(obj))
        for handle in self.fleet.drivers.values():
            self.fleet.start(handle, wait=False)
        self.start_kubelet()

    # ------------------------------------------------------------------ kubelet
    def start_kubelet(self) -> None:
        """Start a kubelet from the checkpoint; raises KubeletError when it refuses to start."""
        # A new kubelet process: its metrics start from zero (kubelet_metrics.go registers the
        # DRA histograms in the process's registry), as upstream's program's do.
        self.metrics.reset()
        node = self._kubelet_node()
        if node.services != list(node.version.dra_services):
            self.kubelet_slot.require(SERVICE_NARROWING, "kubelet.services narrower than the version's")
        kubelet = self.kubelet_slot.create(node)
        self.health.clear()
        kubelet.advance_timers(0.0)  # the start-up wipe of every ResourceSlice of this node is due at once
        # Drivers already running register as soon as the kubelet's first scan sees their
        # sockets, which can be before the waits below begin: they look from here on.
        mark = self.journal.mark()
        with self._lifecycle:
            if self._shut_down:
                kubelet.stop()
            self._check_not_shut_down()
            self.kubelet_slot.running = kubelet
            self.clock.kubelet_started(self.profile.timers.reconcile_period)
            kubelet.start()
        self.fleet.kubelet_started(mark)

    def _kubelet_node(self) -> KubeletNode:
        version = self.kubelet_slot.version
        return KubeletNode(
            registry_dir=self.workspace.registry_dir,
            checkpoint_path=self.workspace.checkpoint_path,
            node_name=self.node,
            version=version,
            services=effective_services(self.profile.services, version),
            timers=self.profile.timers,
            clock=self.clock.real,
            journal=self.journal,
            metrics=self.metrics,
            claims=self.api.kubelet_api,
            slice_wiper=self.api,
            on_health=self.health.absorb,
            on_health_ended=self.health.clear_driver,
            hook=self.kubelet_slot.hook,
            fsync=self.plan.options.fsync,
            record_checkpoint_writes=self.plan.options.record_checkpoint_bytes,
            release=self.plan.release_at(version.version),
            kubeconfig=self.kubeconfig,
            logs_dir=self.workspace.logs_dir,
            time_scale=self.plan.time_scale,
        )

    def stop_kubelet(self) -> None:
        """Drop the kubelet: memory lost, checkpoint, sockets and drivers stay."""
        self.clock.kubelet_stopped()
        self.kubelet_slot.stop()

    def set_version(self, version: str) -> None:
        """Use another kubelet version from the next start on (an upgrade or a downgrade)."""
        profile = self.kubelet_slot.set_version(version)
        self.api.kubelet_api.claim_version = profile.resource_api_version

    def kubeconfig(self) -> Path:
        """A kubeconfig of the node's API server (memory: starts the HTTP server on first use)."""
        with self._admit():
            return self.api.backend.kubeconfig()

    # ------------------------------------------------------------------ teardown
    @contextlib.contextmanager
    def _admit(self) -> Iterator[None]:
        """Held while something starts; raises :class:`ScenarioAborted` once the run was stopped."""
        with self._lifecycle:
            self._check_not_shut_down()
            yield

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
        self.fleet.close()
        with contextlib.suppress(Exception):
            self.api.backend.stop()

    def teardown(self) -> None:
        """Stop everything, delete what the run created on a real cluster, remove the workspace
        (unless kept); never raises. Called once the scenario's own thread is done with the world."""
        self.shut_down()
        with contextlib.suppress(Exception):
            self.api.backend.close()
        if not self.plan.options.keep_workspace:
            with contextlib.suppress(Exception):
                self.workspace.remove()


def open_world(
    scenario: Scenario, options: RunOptions | None = None, *, plan: RunPlan | None = None
) -> World:
    """The world of one run of ``scenario``, every part in place and nothing started yet.

    Builds (from ``plan``, else one made here) the clocks, the workspace, the journal and the
    API-server backend (drasim's HTTP server already listens for the ``http`` backend);
    :meth:`World.setup` then starts the node and :meth:`World.teardown` removes it all. When a
    part cannot be built, what was built is removed again and the error raised.
    """
    plan = plan or plan_run(scenario, options)
    options = plan.options
    workspace = create_workspace(options.workspace_dir, keep=options.keep_workspace)
    journal = Journal()
    aborted = threading.Event()
    version = plan.version

    def latency(seconds: float) -> None:
        """An API-server fault's delay: a real wait that ends early when the run is aborted."""
        aborted.wait(seconds)

    try:
        backend = open_backend(
            plan.backend,
            scenario,
            journal,
            workspace.root,
            served=list(plan.resource_versions),
            claim_version=version.resource_api_version,
            kubeconfig=options.kubeconfig,
            context=options.context,
            expand=lambda obj: expand(obj, plan.first_driver, backend.node),
            sleep=latency,
        )
    except BaseException:
        if not options.keep_workspace:
            with contextlib.suppress(Exception):
                workspace.remove()
        raise
    api = ApiSide(
        backend, journal, scenario.name, str(scenario.spec.kubelet.node), plan.first_driver, plan.time_scale
    )
    return World(
        plan,
        workspace=workspace,
        journal=journal,
        metrics=Metrics(),
        api=api,
        clock=NodeClock(plan.timer_scale, aborted),
        kubelet_slot=KubeletSlot(KUBELET_IMPLEMENTATIONS[plan.kubelet], version, journal),
        aborted=aborted,
    )
