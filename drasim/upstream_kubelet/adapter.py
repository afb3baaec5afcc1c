"""Upstream's DRA manager behind the method names the runner calls on the emulated Manager.

Errors are upstream's own strings (``prepare dynamic resources: ...``), raised as
:class:`~drasim.errors.KubeletError` as the emulation raises them. The gRPC calls upstream
makes are journaled from the fake driver's own record (plugin-side ``rpc`` events, copied
to the kubelet side after each operation); a driver process without such a record leaves
the kubelet side empty. The checkpoint is upstream's file; the program reports its bytes
after every write the manager makes (an event line), journaled as a ``checkpoint`` event by
:meth:`UpstreamManager.checkpoint_written`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from drasim.checkpoint.codec import CHECKPOINT_API_VERSION, CHECKPOINT_KIND, LIST_KEY, decode, envelope
from drasim.checkpoint.store import JOURNAL_ENTRIES_LIMIT
from drasim.errors import KubeletError
from drasim.journal import Journal
from drasim.kubelet.claiminfo import ClaimInfo
from drasim.state import ClaimInfoState
from drasim.upstream_kubelet.process import UpstreamKubelet

DRA_METHODS = ("NodePrepareResources", "NodeUnprepareResources")


def states_from_go(items: list[dict[str, Any]]) -> list[ClaimInfoState]:
    """ClaimInfoState values from Go's JSON of them (the checkpoint's own encoding)."""
    data = json.dumps({"kind": CHECKPOINT_KIND, "apiVersion": CHECKPOINT_API_VERSION, LIST_KEY: items})
    return list(decode(envelope(data)).entries)


def group_by_device(cdi: list[str], states: list[ClaimInfoState]) -> list[tuple[str, ...]]:
    """Upstream's flat CDI list for a container, grouped per prepared device.

    Each device's IDs appear in the flat list as one run, in claim order; a run is taken
    where it matches a device of the container's claims, an ID no device explains stays alone.
    """
    runs = [
        tuple(device.cdi_device_ids)
        for state in states
        for driver in (state.driver_state or {}).values()
        for device in driver.devices or []
        if device.cdi_device_ids
    ]
    groups: list[tuple[str, ...]] = []
    i = 0
    while i < len(cdi):
        for run in runs:
            if tuple(cdi[i : i + len(run)]) == run:
                groups.append(run)
                i += len(run)
                break
        else:
            groups.append((cdi[i],))
            i += 1
    return groups


class UpstreamManager:
    """The runner's kubelet slot, filled by upstream's DRA manager in a process of its own."""

    def __init__(
        self,
        kubelet: UpstreamKubelet,
        *,
        journal: Journal,
        checkpoint_path: Path,
    ) -> None:
        self.kubelet = kubelet
        self._journal = journal
        self._checkpoint_path = checkpoint_path
        self._lock = threading.Lock()
        self._copied_rpc = journal.mark()

    @staticmethod
    def checkpoint_recorder(journal: Journal, checkpoint_path: Path) -> Callable[[dict[str, Any]], None]:
        """The process's event callback: journals each checkpoint write upstream reports (with
        its bytes when the program was started with ``--checkpoint-bytes``)."""

        def on_event(event: dict[str, Any]) -> None:
            if event.get("event") != "checkpoint":
                return
            text = event.get("checkpoint")
            if isinstance(text, str):
                checkpoint_written(journal, checkpoint_path, text)
            else:
                journal.record(
                    "checkpoint",
                    path=str(checkpoint_path),
                    entries=None,
                    size=event.get("size"),
                    upstream=True,
                )

        return on_event

    # ----- the operations the runner calls -----------------------------------------------

    def prepare_resources(self, pod: Mapping[str, Any]) -> None:
        """PrepareResources; raises KubeletError with upstream's error text."""
        self._operation("PrepareResources", "prepare", pod)

    def unprepare_resources(self, pod: Mapping[str, Any]) -> None:
        """UnprepareResources; raises KubeletError with upstream's error text."""
        self._operation("UnprepareResources", "unprepare", pod)

    def get_resources(self, pod: Mapping[str, Any], container: Mapping[str, Any] | str) -> list[str]:
        """GetResources: the container's CDI device IDs."""
        reply = self._resources(pod, container)
        return list(reply.get("cdiDevices") or [])

    def get_resources_by_device(
        self, pod: Mapping[str, Any], container: Mapping[str, Any] | str
    ) -> list[tuple[str, ...]]:
        """GetResources grouped per prepared device (see :func:`group_by_device`)."""
        reply = self._resources(pod, container)
        return group_by_device(list(reply.get("cdiDevices") or []), states_from_go(reply.get("claims") or []))

    def pod_might_need_to_unprepare_resources(self, pod_uid: str) -> bool:
        """PodMightNeedToUnprepareResources."""
        return bool(self.kubelet.call("mightNeedUnprepare", podUID=pod_uid).get("bool"))

    def reconcile(self, active_pod_uids: Collection[str]) -> dict[str, str | None]:
        """One pass of upstream's reconcile loop; pod UID -> the error it logged (None: done)."""
        start = time.monotonic()
        reply = self.kubelet.call("reconcile", activePods=sorted(active_pod_uids))
        outcome: dict[str, str | None] = dict(reply.get("reconciled") or {})
        self._after()
        for uid, error in outcome.items():
            self._journal.record(
                "kubelet",
                operation="ReconcileUnprepare",
                pod_uid=uid,
                error=error,
                duration=time.monotonic() - start,
                upstream=True,
            )
        return outcome

    # ----- read-only views ---------------------------------------------------------------

    def claim_infos(self) -> list[ClaimInfoState]:
        """The claim info cache, sorted by namespace/name."""
        return sorted((info for info, _ in self._claims()), key=lambda s: s.key)

    def claim_info(self, namespace: str, name: str) -> ClaimInfo | None:
        """One cached claim with its prepared flag, or None."""
        for state, prepared in self._claims():
            if state.namespace == namespace and state.claim_name == name:
                return ClaimInfo(
                    claim_uid=state.claim_uid,
                    claim_name=state.claim_name,
                    namespace=state.namespace,
                    pod_uids=state.pod_uids,
                    driver_state=state.driver_state,
                    prepared=prepared,
                )
        return None

    def is_prepared(self, namespace: str, name: str) -> bool:
        """Whether the claim is cached and prepared."""
        info = self.claim_info(namespace, name)
        return info is not None and info.prepared

    def metrics_text(self) -> str:
        """The DRA manager's collector and the DRA histograms, Prometheus text format."""
        return str(self.kubelet.call("metrics").get("text") or "")

    def registered_drivers(self) -> list[str]:
        """Drivers upstream's registration handler accepted (and has not removed)."""
        return list(self.kubelet.call("drivers").get("drivers") or [])

    # ----- helpers -----------------------------------------------------------------------

    def _claims(self) -> list[tuple[ClaimInfoState, bool]]:
        items = self.kubelet.call("claims").get("claims") or []
        states = states_from_go([item["State"] for item in items])
        return list(zip(states, (bool(item.get("Prepared")) for item in items), strict=True))

    def _resources(self, pod: Mapping[str, Any], container: Mapping[str, Any] | str) -> dict[str, Any]:
        name = container if isinstance(container, str) else str(container.get("name", ""))
        reply = self.kubelet.call("resources", pod=dict(pod), container=name)
        if reply.get("error"):
            raise KubeletError(str(reply["error"]))
        return reply

    def _operation(self, operation: str, op: str, pod: Mapping[str, Any]) -> None:
        start = time.monotonic()
        reply = self.kubelet.call(op, pod=dict(pod))
        duration = time.monotonic() - start
        self._after()
        meta = pod.get("metadata") or {}
        error = reply.get("error")
        self._journal.record(
            "kubelet",
            operation=operation,
            pod=f"{meta.get('namespace', 'default')}/{meta.get('name', '')}",
            pod_uid=meta.get("uid"),
            error=error,
            duration=duration,
            upstream=True,
        )
        if error:
            raise KubeletError(str(error))

    def _after(self) -> None:
        """Journal the calls the operation made, from the driver's record."""
        with self._lock:
            since, self._copied_rpc = self._copied_rpc, self._journal.mark()
            for event in self._journal.events("rpc", since_seq=since):
                method = str(event.get("method", ""))
                if event.get("side") != "plugin" or method.rsplit("/", 1)[-1] not in DRA_METHODS:
                    continue
                self._journal.record(
                    "rpc",
                    side="kubelet",
                    driver=event.get("driver"),
                    endpoint=None,
                    method=method,
                    request=event.get("request"),
                    response=event.get("response"),
                    code=event.get("code"),
                    error=event.get("details") or None,
                    duration=event.get("duration"),
                    source="plugin-record",
                )
            self._copied_rpc = self._journal.mark()


def checkpoint_written(journal: Journal, path: Path, text: str) -> None:
    """Journal one checkpoint write upstream reported with its bytes, as the emulated store
    journals its own with ``record_bytes`` (``checkpoint``: path, size, the entries up to
    :data:`JOURNAL_ENTRIES_LIMIT`, the bytes)."""
    entries: list[Any] | int | None = None
    try:
        listed = json.loads(json.loads(text)["Data"]).get(LIST_KEY) or []
        entries = listed if len(listed) <= JOURNAL_ENTRIES_LIMIT else len(listed)
    except (ValueError, KeyError, TypeError, AttributeError):
        entries = None
    size = len(text.encode("utf-8"))
    journal.record("checkpoint", path=str(path), entries=entries, size=size, bytes=text, upstream=True)
