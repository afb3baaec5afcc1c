"""MemoryCluster: the in-process face of the object store (no HTTP, no serialization).

It implements the kubelet's ClaimReader port and the runner's
:class:`~drasim.apiserver.port.Cluster` operations directly on an
:class:`~drasim.apiserver.store.ObjectStore`, with the same faults and journal
entries as the HTTP face.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from drasim.apiserver.calls import IN_PROCESS, ApiCall, guarded
from drasim.apiserver.faults import StoreFault
from drasim.apiserver.kinds import RESOURCE_GROUP, ResourceType
from drasim.apiserver.meta import clone
from drasim.apiserver.patch import merge_patch
from drasim.apiserver.port import PATCH_TYPES, KubeObject
from drasim.apiserver.status import bad_request
from drasim.apiserver.store import ObjectStore
from drasim.apiserver.watch import Watch
from drasim.errors import ApiError

T = TypeVar("T")


class MemoryCluster:
    """ClaimReader + Cluster operations on a store, in process.

    ``claim_version`` is the resource.k8s.io version :meth:`get_resource_claim`
    asks for (the kubelet of 1.34+ uses v1); ``client`` is the name the journal
    records for calls made through this object. With ``shared_reads``,
    :meth:`get_resource_claim` hands out one copy per stored version of a claim
    (:meth:`ObjectStore.get_shared <drasim.apiserver.store.ObjectStore.get_shared>`)
    instead of a fresh deep copy per call: for a reader that never changes what it
    gets, such as the emulated kubelet.
    """

    def __init__(
        self,
        store: ObjectStore | None = None,
        *,
        claim_version: str = "v1",
        client: str = IN_PROCESS,
        shared_reads: bool = False,
    ) -> None:
        self.store = store if store is not None else ObjectStore()
        self.claim_version = claim_version
        self.client = client
        self.shared_reads = shared_reads

    # ---------------------------------------------------------------- helpers
    def _type(self, api_version: str, kind: str) -> tuple[ResourceType, str]:
        return self.store.registry.by_kind(api_version, kind)

    def _of(self, obj: Mapping[str, Any]) -> tuple[ResourceType, str, str, str]:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            raise bad_request("object needs apiVersion and kind")
        rtype, version = self._type(api_version, kind)
        md = obj.get("metadata") or {}
        return rtype, version, md.get("namespace") or "", md.get("name") or ""

    def _call(
        self,
        verb: str,
        rtype: ResourceType,
        version: str,
        action: Callable[[StoreFault | None], T],
        *,
        namespace: str = "",
        name: str = "",
        subresource: str = "",
    ) -> T:
        ns = namespace if rtype.namespaced else ""
        if rtype.namespaced and not ns and verb not in ("list", "watch", "deletecollection"):
            ns = "default"
        call = ApiCall(verb, rtype, version, ns, name, subresource, self.client)
        return guarded(self.store, call, action)

    # ------------------------------------------------------------ ClaimReader
    def get_resource_claim(self, namespace: str, name: str) -> KubeObject:
        """GET resource.k8s.io/<claim_version> ResourceClaim; ApiError 404 when missing or unserved.

        With ``shared_reads`` the result is shared: the caller must not change it.
        """
        if not self.shared_reads:
            return self.get(f"{RESOURCE_GROUP}/{self.claim_version}", "ResourceClaim", name, namespace)
        rtype, version = self._type(f"{RESOURCE_GROUP}/{self.claim_version}", "ResourceClaim")
        ns = namespace or "default"
        return self._call(
            "get",
            rtype,
            version,
            lambda _f: self.store.get_shared(rtype, version, ns, name),
            namespace=ns,
            name=name,
        )

    # ------------------------------------------------------------------ reads
    def get(self, api_version: str, kind: str, name: str, namespace: str = "") -> KubeObject:
        """GET one object."""
        rtype, version = self._type(api_version, kind)
        ns = namespace or ("default" if rtype.namespaced else "")
        return self._call(
            "get",
            rtype,
            version,
            lambda _f: self.store.get(rtype, version, ns, name),
            namespace=ns,
            name=name,
        )

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> builtins.list[KubeObject]:
        """LIST objects."""
        rtype, version = self._type(api_version, kind)

        def action(_fault: StoreFault | None) -> builtins.list[KubeObject]:
            items, _ = self.store.list(
                rtype, version, namespace, label_selector=label_selector, field_selector=field_selector
            )
            return items

        return self._call("list", rtype, version, action, namespace=namespace)

    # ----------------------------------------------------------------- writes
    def create(self, obj: Mapping[str, Any]) -> KubeObject:
        """POST; a ``status`` in the manifest is then written through the status subresource."""
        rtype, version, namespace, name = self._of(obj)
        ns = namespace or ("default" if rtype.namespaced else "")
        created = self._call(
            "create",
            rtype,
            version,
            lambda _f: self.store.create(rtype, version, obj, ns),
            namespace=ns,
            name=name,
        )
        if rtype.has_status and obj.get("status") and created.get("status") != obj["status"]:
            created["status"] = clone(obj["status"])
            return self.update_status(created)
        return created

    def apply(self, obj: Mapping[str, Any]) -> KubeObject:
        """Create, or merge the manifest over the existing object (then its status)."""
        rtype, version, namespace, name = self._of(obj)
        try:
            current = self.store.get(rtype, version, namespace or "default", name)
        except ApiError as err:
            if err.code != 404 or not name:
                raise
            return self.create(obj)
        body = merge_patch(current, {k: v for k, v in obj.items() if k != "status"})
        body["metadata"].pop("resourceVersion", None)
        updated = self.update(body)
        if rtype.has_status and "status" in obj:
            updated["status"] = merge_patch(updated.get("status") or {}, obj["status"])
            return self.update_status(updated)
        return updated

    def update(self, obj: Mapping[str, Any]) -> KubeObject:
        """PUT; a stale resourceVersion raises ApiError 409."""
        return self._update(obj, status=False)

    def update_status(self, obj: Mapping[str, Any]) -> KubeObject:
        """PUT the status subresource (only ``.status`` changes)."""
        return self._update(obj, status=True)

    def _update(self, obj: Mapping[str, Any], *, status: bool) -> KubeObject:
        rtype, version, namespace, name = self._of(obj)
        sub = "status" if status else ""
        if status and not rtype.has_status:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        ns = namespace or ("default" if rtype.namespaced else "")
        return self._call(
            "update",
            rtype,
            version,
            lambda _f: self.store.update(rtype, version, obj, ns, status=status),
            namespace=ns,
            name=name,
            subresource=sub,
        )

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
        rtype, version = self._type(api_version, kind)
        content_type = PATCH_TYPES.get(patch_type)
        if content_type is None:
            raise bad_request(f"unknown patch type {patch_type!r}; valid: {', '.join(PATCH_TYPES)}")
        ns = namespace or ("default" if rtype.namespaced else "")
        status = subresource == "status"
        return self._call(
            "patch",
            rtype,
            version,
            lambda _f: self.store.patch(
                rtype, version, ns, name, body=patch, content_type=content_type, status=status
            ),
            namespace=ns,
            name=name,
            subresource=subresource,
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str = "",
        *,
        uid: str | None = None,
        resource_version: str | None = None,
        grace_period_seconds: int | None = None,  # noqa: ARG002 - the store deletes at once
    ) -> KubeObject:
        """DELETE with optional uid / resourceVersion preconditions (always at once: no grace period)."""
        rtype, version = self._type(api_version, kind)
        ns = namespace or ("default" if rtype.namespaced else "")
        return self._call(
            "delete",
            rtype,
            version,
            lambda _f: self.store.delete(
                rtype, version, ns, name, uid=uid, resource_version=resource_version
            ),
            namespace=ns,
            name=name,
        )

    def delete_collection(
        self,
        api_version: str,
        kind: str,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> builtins.list[KubeObject]:
        """DELETE every matching object (the kubelet's ResourceSlice wipe uses this)."""
        rtype, version = self._type(api_version, kind)
        return self._call(
            "deletecollection",
            rtype,
            version,
            lambda _f: self.store.delete_collection(
                rtype, version, namespace, label_selector=label_selector, field_selector=field_selector
            ),
            namespace=namespace,
        )

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str = "",
        *,
        resource_version: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        send_initial_events: bool | None = None,
        allow_bookmarks: bool = False,
    ) -> Watch:
        """WATCH; a dropWatch fault ends the stream after its ``afterEvents``."""
        rtype, version = self._type(api_version, kind)

        def action(fault: StoreFault | None) -> Watch:
            drop = fault.after_events if fault is not None and fault.drop_watch else None
            return self.store.watch(
                rtype,
                version,
                namespace,
                resource_version=resource_version,
                label_selector=label_selector,
                field_selector=field_selector,
                send_initial_events=send_initial_events,
                allow_bookmarks=allow_bookmarks,
                drop_after=drop,
            )

        return self._call("watch", rtype, version, action, namespace=namespace)

    def reset(self) -> None:
        """Forget every object, fault and open watch (the store's reset)."""
        self.store.reset()
