"""Upstream's DRA manager in the node's kubelet slot (``--kubelet upstream[@release]``).

:class:`UpstreamSlotKubelet` implements :class:`drasim.runner.kubeletslot.Kubelet`: the DRA
manager's calls go to upstream's own manager in a process of its own (:mod:`.process`,
:mod:`.adapter`). Upstream's plugin manager is the only registrar: it alone watches the
registry directory and talks to the registration sockets. drasim's plugin host does not scan;
:class:`~drasim.upstream_kubelet.registrar.UpstreamRegistrar` mirrors upstream's registrations
into it, and it keeps the runner's instance views, connection tracking, health streams and
slice-wipe timers.
It offers no crash points (upstream's code has no hooks to die at) and no watcher pause
(upstream's registry scan cannot be held): steps needing them are "not comparable".
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from drasim.errors import ConfigError, KubeletError
from drasim.plugins.host import PluginHost
from drasim.plugins.timers import ManualScheduler
from drasim.runner.emulated import ManagerSide, PluginHostSide, plugin_host
from drasim.runner.kubeletslot import KubeletNode
from drasim.upstream_kubelet.adapter import UpstreamManager
from drasim.upstream_kubelet.choice import upstream_binary
from drasim.upstream_kubelet.process import LaunchConfig, UpstreamKubelet, UpstreamStartError
from drasim.upstream_kubelet.registrar import UpstreamRegistrar

__all__ = ["UpstreamSlotKubelet"]

START_WIPE_TIMEOUT = 15.0
"""Seconds to wait for upstream's start-up DeleteCollection of the node's ResourceSlices."""


@dataclass
class UpstreamSlotKubelet(ManagerSide, PluginHostSide):
    """Upstream's DRA manager and plugin manager (out of process) with drasim's plugin host
    beside them, fed by :class:`UpstreamRegistrar` (instances, health streams and timers come
    from :class:`PluginHostSide`; registration is upstream's)."""

    manager: UpstreamManager
    process: UpstreamKubelet
    host: PluginHost
    scheduler: ManualScheduler
    registrar: UpstreamRegistrar
    release: str

    @classmethod
    def create(cls, node: KubeletNode) -> UpstreamSlotKubelet:
        """Start upstream's kubelet for ``node.release`` on the node's checkpoint; KubeletError
        when upstream refuses to start (its own words)."""
        if node.release is None or node.kubeconfig is None or node.logs_dir is None:
            raise ConfigError("the upstream kubelet needs a release, a kubeconfig and a logs directory")
        config = LaunchConfig(
            binary=Path(upstream_binary(node.release)),
            state_dir=node.checkpoint_path.parent,
            registry_dir=node.registry_dir,
            kubeconfig=node.kubeconfig(),
            node_name=node.node_name,
            log_path=node.logs_dir / "upstream-kubelet.log",
            call_timeout=float(node.timers.call_timeout) * node.time_scale,
            # Not scaled: upstream's wipe timer runs in real time while a scenario's clock only
            # moves when a step advances it, so a scaled delay would fire between steps.
            wiping_delay=float(node.timers.wiping_delay),
            # A run that keeps every version of a large file would hold O(N²) bytes: only diffs ask.
            checkpoint_bytes=node.record_checkpoint_writes,
        )
        journal = node.journal
        started = journal.mark()
        try:
            on_event = UpstreamManager.checkpoint_recorder(journal, node.checkpoint_path)
            process = UpstreamKubelet(config, on_event)
        except UpstreamStartError as err:
            raise KubeletError(str(err)) from None
        # Upstream wipes the node's ResourceSlices at start, in the background; wait for that
        # DeleteCollection so it cannot remove slices the drivers publish again afterwards.
        journal.wait_for(
            START_WIPE_TIMEOUT, "api", since_seq=started, verb="deletecollection", resource="resourceslices"
        )
        journal.record("kubelet", operation="upstream", release=node.release, pid=process.pid)
        scheduler = ManualScheduler()
        host = plugin_host(node, scheduler)

        manager = UpstreamManager(process, journal=journal, checkpoint_path=node.checkpoint_path)
        registrar = UpstreamRegistrar(process, host.manager, journal=journal, registry_dir=node.registry_dir)
        return cls(manager, process, host, scheduler, registrar, node.release)

    # The DRA manager: upstream's (its calls come from ManagerSide).
    def metrics_text(self) -> str:
        """Upstream's own metrics (its DRA collector and histograms), Prometheus text."""
        return self.manager.metrics_text()

    # Registration: upstream's plugin manager; drasim's host learns from it.
    def start(self) -> None:
        """See :class:`Kubelet`: upstream's plugin manager watches already; follow it."""
        self.registrar.start()

    def sync_registrations(self, timeout: float) -> bool:
        """See :class:`Kubelet`: wait until upstream's plugin manager settled on the registry."""
        return self.registrar.sync(timeout)

    def stop(self) -> None:
        """See :class:`Kubelet`: upstream's process ends; the checkpoint file stays."""
        try:
            self.registrar.stop()
            self.process.stop()
        finally:
            self.host.stop()
            self.scheduler.stop()

    def paused_watcher(self) -> contextlib.AbstractContextManager[None] | None:
        """Not offered: upstream's registry scan cannot be held."""
        return None
