"""drasim's emulated kubelet in the kubelet slot: the Python DRA manager, its plugin host, manual timers.

It implements :class:`drasim.runner.kubeletslot.Kubelet` and offers every optional capability.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from drasim.checkpoint.store import FileCheckpointStore
from drasim.errors import KubeletError
from drasim.kubelet.claiminfo import ClaimInfo
from drasim.kubelet.manager import Manager
from drasim.plugins.host import PluginHost
from drasim.plugins.timers import ManualScheduler
from drasim.runner.kubeletslot import KubeletNode
from drasim.state import ClaimInfoState

__all__ = ["DraManager", "EmulatedKubelet", "ManagerSide", "PluginHostSide", "plugin_host"]


class DraManager(Protocol):
    """The DRA manager's calls the kubelet slot makes: drasim's :class:`Manager`, or upstream's
    through :class:`drasim.upstream_kubelet.adapter.UpstreamManager`."""

    def prepare_resources(self, pod: Mapping[str, Any]) -> None: ...
    def unprepare_resources(self, pod: Mapping[str, Any]) -> None: ...
    def reconcile(self, active_pod_uids: Collection[str]) -> dict[str, str | None]: ...
    def get_resources_by_device(
        self, pod: Mapping[str, Any], container: Mapping[str, Any] | str
    ) -> list[tuple[str, ...]]: ...
    def claim_info(self, namespace: str, name: str) -> ClaimInfo | None: ...
    def claim_infos(self) -> list[ClaimInfoState]: ...
    def is_prepared(self, namespace: str, name: str) -> bool: ...
    def pod_might_need_to_unprepare_resources(self, pod_uid: str) -> bool: ...


class ManagerSide:
    """The part of a kubelet that is its DRA manager: each call goes to ``manager``. Both kubelets
    in the slot have it; each sets ``manager`` (drasim's, or upstream's through its adapter)."""

    manager: DraManager

    def prepare_resources(self, pod: Mapping[str, Any]) -> None:
        """See :class:`Kubelet`."""
        self.manager.prepare_resources(pod)

    def unprepare_resources(self, pod: Mapping[str, Any]) -> None:
        """See :class:`Kubelet`."""
        self.manager.unprepare_resources(pod)

    def reconcile(self, active_pod_uids: Collection[str]) -> dict[str, str | None]:
        """See :class:`Kubelet`."""
        return self.manager.reconcile(active_pod_uids)

    def get_resources_by_device(
        self, pod: Mapping[str, Any], container: Mapping[str, Any] | str
    ) -> list[tuple[str, ...]]:
        """See :class:`Kubelet`."""
        return self.manager.get_resources_by_device(pod, container)

    def claim_info(self, namespace: str, name: str) -> ClaimInfo | None:
        """See :class:`Kubelet`."""
        return self.manager.claim_info(namespace, name)

    def claim_infos(self) -> list[ClaimInfoState]:
        """See :class:`Kubelet`."""
        return self.manager.claim_infos()

    def is_prepared(self, namespace: str, name: str) -> bool:
        """See :class:`Kubelet`."""
        return self.manager.is_prepared(namespace, name)

    def pod_might_need_to_unprepare_resources(self, pod_uid: str) -> bool:
        """See :class:`Kubelet`."""
        return self.manager.pod_might_need_to_unprepare_resources(pod_uid)


class PluginHostSide:
    """The part of a kubelet that drasim's plugin host does: registration, registered instances,
    health streams and the host's timers. Both kubelets in the slot have it (the emulated one
    and upstream's, beside which drasim's host runs); each sets ``host`` and ``scheduler``."""

    host: PluginHost
    scheduler: ManualScheduler

    def sync_registrations(self, timeout: float) -> bool:
        """See :class:`Kubelet`."""
        return self.host.sync(timeout=timeout)

    def instances(self, driver: str) -> Sequence[Any]:
        """See :class:`Kubelet`."""
        return self.host.manager.instances(driver)

    def service_of(self, driver: str, endpoint: str) -> str | None:
        """See :class:`Kubelet`."""
        return self.host.manager.service_of(driver, endpoint)

    def health_service(self, driver: str, endpoint: str) -> str:
        """See :class:`Kubelet`."""
        stream = self.host.manager.health_stream(driver, endpoint)
        return "" if stream is None else str(stream.service)

    def wait_registered(
        self, driver: str, *, timeout: float, endpoint: str | None = None, connected: bool = False
    ) -> bool:
        """See :class:`Kubelet`."""
        return self.host.wait_registered(driver, timeout=timeout, endpoint=endpoint, connected=connected)

    def pending_timers(self) -> list[float]:
        """See :class:`Kubelet`."""
        return self.scheduler.pending()

    def advance_timers(self, seconds: float) -> None:
        """See :class:`Kubelet`."""
        self.scheduler.advance(seconds)

    def start(self) -> None:
        """See :class:`Kubelet`."""
        self.host.start()

    def health_streams(self, driver: str) -> list[Any] | None:
        """See :class:`Kubelet`."""
        return list(self.host.manager.health_streams(driver))


@dataclass
class EmulatedKubelet(ManagerSide, PluginHostSide):
    """drasim's emulated kubelet: the Python DRA manager with its plugin host and manual timers."""

    manager: Manager
    host: PluginHost
    scheduler: ManualScheduler
    checkpoint: FileCheckpointStore
    """Closed when the kubelet stops (it keeps files open)."""

    @classmethod
    def create(cls, node: KubeletNode) -> EmulatedKubelet:
        """Build the plugin host and load the manager from the checkpoint."""
        scheduler = ManualScheduler()
        host = plugin_host(node, scheduler)
        checkpoint = FileCheckpointStore(
            node.checkpoint_path,
            recorder=node.journal,
            fsync=node.fsync,
            record_bytes=node.record_checkpoint_writes,
            write_share_id=node.version.checkpoint_share_id,
        )
        try:
            manager = Manager(
                claims=node.claims,
                drivers=host.manager,
                checkpoint=checkpoint,
                clock=node.clock,
                recorder=node.journal,
                metrics=node.metrics,
                hooks=node.hook,
                version=node.version,
            )
        except KubeletError:
            host.stop()
            checkpoint.close()
            raise
        return cls(manager, host, scheduler, checkpoint)

    def stop(self) -> None:
        """See :class:`Kubelet`."""
        self.host.stop()
        self.scheduler.stop()
        self.checkpoint.close()

    def paused_watcher(self) -> contextlib.AbstractContextManager[None] | None:
        """See :class:`Kubelet`."""
        return self.host.watcher.paused()


def plugin_host(node: KubeletNode, scheduler: ManualScheduler) -> PluginHost:
    """drasim's plugin host for a kubelet on ``node``: registry scans, plugin clients, health
    streams and the slice wipes, its timers on ``scheduler``."""
    return PluginHost(
        node.registry_dir,
        clock=node.clock,
        recorder=node.journal,
        metrics=node.metrics,
        services=node.services,
        version=node.version,
        call_timeout=node.timers.call_timeout,
        slice_wiper=node.slice_wiper,
        node_name=node.node_name,
        wiping_delay=node.timers.wiping_delay,
        scheduler=scheduler,
        health_callback=node.on_health,
        health_ended_callback=node.on_health_ended,
        # Polling (plus the runner's explicit rescans) keeps runs deterministic: queued
        # inotify events could otherwise arrive after a rescan.
        use_inotify=False,
        poll_interval=0.05,
        # Registration passes run on directory changes and on explicit syncs only, so
        # retries of failed registrations happen when the scenario advances its clock.
        reconcile_period=1e9,
    )
