"""The operations the runner uses on any backend: in-process store, HTTP server or real cluster.

:class:`~drasim.apiserver.memory.MemoryCluster` and
:class:`~drasim.apiserver.kubeclient.KubeClientCluster` both satisfy
:class:`Cluster`, so a scenario runs the same code against either. Objects are
plain JSON-shaped dicts; errors are :class:`drasim.errors.ApiError` with the
HTTP code and Kubernetes reason.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from drasim.apiserver.watch import WatchEvent

KubeObject = dict[str, Any]

PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}


@runtime_checkable
class WatchStream(Protocol):
    """A watch: iterate it or poll :meth:`next`; :meth:`stop` ends it."""

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event, or ``None`` when the stream ended or the timeout passed."""
        ...

    def stop(self) -> None:
        """End the stream."""
        ...

    def __iter__(self) -> Iterator[WatchEvent]:
        """Events until the stream ends."""
        ...


@runtime_checkable
class Cluster(Protocol):
    """ClaimReader plus what the runner needs to seed, drive and reset the world."""

    claim_version: str
    """The resource.k8s.io version :meth:`get_resource_claim` reads through."""

    def get_resource_claim(self, namespace: str, name: str) -> KubeObject:
        """GET the ResourceClaim (ClaimReader port); raises ApiError 404 when missing."""
        ...

    def get(self, api_version: str, kind: str, name: str, namespace: str = "") -> KubeObject:
        """GET one object."""
        ...

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[KubeObject]:
        """LIST objects (all namespaces when ``namespace`` is empty)."""
        ...

    def create(self, obj: Mapping[str, Any]) -> KubeObject:
        """POST a manifest; a ``status`` in it is then written through the status subresource."""
        ...

    def apply(self, obj: Mapping[str, Any]) -> KubeObject:
        """Create, or merge the manifest over the existing object (and its status)."""
        ...

    def update(self, obj: Mapping[str, Any]) -> KubeObject:
        """PUT; a stale ``metadata.resourceVersion`` raises ApiError 409."""
        ...

    def update_status(self, obj: Mapping[str, Any]) -> KubeObject:
        """PUT the status subresource."""
        ...

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        namespace: str = "",
        *,
        patch_type: str = "merge",
        subresource: str = "",
    ) -> KubeObject:
        """PATCH with ``patch_type`` merge, json or strategic."""
        ...

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str = "",
        *,
        uid: str | None = None,
        resource_version: str | None = None,
        grace_period_seconds: int | None = None,
    ) -> KubeObject:
        """DELETE with optional preconditions (``grace_period_seconds=0``: a pod goes at once)."""
        ...

    def delete_collection(
        self,
        api_version: str,
        kind: str,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> builtins.list[KubeObject]:
        """DELETE every matching object."""
        ...

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str = "",
        *,
        resource_version: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
    ) -> WatchStream:
        """WATCH from ``resource_version`` (unset: current state as ADDED events, then changes)."""
        ...

    def reset(self) -> None:
        """Forget every object (and fault) this backend may forget."""
        ...
