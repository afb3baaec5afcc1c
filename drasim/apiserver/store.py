"""The object store behind every face of the fake API server.

Objects are JSON dicts keyed by (group, resource, namespace, name), independent of
API version. Every write takes the next value of one global, monotonically
increasing resourceVersion and is appended to a bounded history that watches
resume from. All state sits behind one lock, so writes and the watch events they
produce are totally ordered. Methods return deep copies rendered under the API
version the caller asked for; they raise :class:`~drasim.apiserver.status.StatusError`
(an :class:`~drasim.errors.ApiError`) exactly where a real server answers with an
error Status.
"""

from __future__ import annotations

import builtins
import logging
import random
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from drasim.apiserver import meta, validation
from drasim.apiserver.faults import FaultInjector
from drasim.apiserver.kinds import RESOURCE_TYPES, Registry, ResourceType, api_version_of
from drasim.apiserver.patch import apply_patch
from drasim.apiserver.selectors import FieldSelector, LabelSelector, predicate
from drasim.apiserver.status import (
    STALE_OBJECT,
    already_exists,
    bad_request,
    conflict,
    delete_precondition_failed,
    expired,
    invalid,
    not_found,
)
from drasim.apiserver.watch import ADDED, DELETED, MODIFIED, Watch, WatchEvent, bookmark
from drasim.interfaces import NullRecorder, ReadyRecord, Recorder, ready_recording

log = logging.getLogger(__name__)

KubeObject = dict[str, Any]
_Key = tuple[str, str]  # (namespace, name)
_History = tuple[int, ResourceType, str, KubeObject, KubeObject | None]

DEFAULT_HISTORY = 1000
DEFAULT_WATCH_QUEUE = 10_000
"""Events a watcher may leave unread before its watch is ended (see :class:`Watch`)."""
#: How many copies :meth:`ObjectStore.get_shared` keeps before it starts over.
SHARED_READS_LIMIT = 16384
DEFAULT_NAMESPACES = ("default", "kube-system")


class ObjectStore:
    """Thread-safe Kubernetes object store with resourceVersions, selectors and watches.

    ``served`` configures the served versions per group (see :class:`Registry`);
    ``history`` bounds how many events a watch can resume across, ``watch_queue`` how many
    a watcher may leave unread before its watch is ended. ``faults`` and
    ``recorder`` are used by the faces (see :mod:`drasim.apiserver.calls`).
    """

    def __init__(
        self,
        *,
        served: Mapping[str, Sequence[str]] | None = None,
        history: int = DEFAULT_HISTORY,
        recorder: Recorder | None = None,
        seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        watch_queue: int = DEFAULT_WATCH_QUEUE,
    ) -> None:
        if history < 1:
            msg = f"watch history must hold at least one event, got {history}"
            raise ValueError(msg)
        if watch_queue < 1:
            msg = f"a watch queue must hold at least one event, got {watch_queue}"
            raise ValueError(msg)
        self.watch_queue = watch_queue
        self.registry = Registry(served)
        self.faults = FaultInjector()
        self.recorder = recorder if recorder is not None else NullRecorder()
        self.sleep = sleep
        self._rng = random.Random(seed)
        self._lock = threading.RLock()
        self._rv = 0
        self._objects: dict[str, dict[_Key, KubeObject]] = {}
        self._history: deque[_History] = deque(maxlen=history)
        self._evicted_upto = 0
        self._watches: set[Watch] = set()
        # (resource, version, namespace, name) -> (stored object, the copy get_shared serves)
        self._shared: dict[tuple[str, str, str, str], tuple[KubeObject, KubeObject]] = {}
        self._seed_namespaces()

    # ----------------------------------------------------------------- helpers

    @property
    def recorder(self) -> Recorder:
        """Where the faces journal API calls; ``record_ready`` follows it (see :func:`ready_recording`)."""
        return self._recorder

    @recorder.setter
    def recorder(self, value: Recorder) -> None:
        self._recorder = value
        self.record_ready: ReadyRecord = ready_recording(value)

    def _bucket(self, rtype: ResourceType) -> dict[_Key, KubeObject]:
        return self._objects.setdefault(f"{rtype.group}/{rtype.resource}", {})

    def _scope(self, rtype: ResourceType, namespace: str) -> str:
        if not rtype.namespaced:
            return ""
        if not namespace:
            raise bad_request(f"{rtype.qualified} is namespaced: a namespace is required")
        return namespace

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _emit(self, rtype: ResourceType, kind: str, obj: KubeObject, old: KubeObject | None) -> None:
        rv = int(obj["metadata"]["resourceVersion"])
        if len(self._history) == self._history.maxlen:
            self._evicted_upto = self._history[0][0]
        self._history.append((rv, rtype, kind, meta.clone(obj), meta.clone(old)))
        for watch in list(self._watches):
            if watch.rtype != rtype:
                continue
            try:
                watch.offer(kind, obj, old)
            except Exception:  # one broken watcher must not cost the others their event
                log.exception("dropping a %s watch that failed on a %s event", rtype.qualified, kind)
                watch.drop()

    def _existing(self, rtype: ResourceType, namespace: str, name: str) -> KubeObject:
        obj = self._bucket(rtype).get((namespace, name))
        if obj is None:
            raise not_found(rtype, name)
        return obj

    def _seed_namespaces(self) -> None:
        rtype = self.registry.resource("", "v1", "namespaces")
        for name in DEFAULT_NAMESPACES:
            self.create(rtype, "v1", {"metadata": {"name": name}})

    @property
    def resource_version(self) -> int:
        """The resourceVersion of the latest write."""
        with self._lock:
            return self._rv

    # ------------------------------------------------------------------- reads
    def get(self, rtype: ResourceType, version: str, namespace: str, name: str) -> KubeObject:
        """One object, or a 404 NotFound Status."""
        with self._lock:
            return meta.render(self._existing(rtype, self._scope(rtype, namespace), name), rtype, version)

    def get_shared(self, rtype: ResourceType, version: str, namespace: str, name: str) -> KubeObject:
        """:meth:`get` for a reader that never changes what it is given: the copy served is
        made once per stored version of the object and handed to every such reader.

        A write never changes a stored object in place (it stores a new dict), so the
        stored object's identity tells whether the copy is still current.
        """
        with self._lock:
            ns = self._scope(rtype, namespace)
            stored = self._existing(rtype, ns, name)
            key = (rtype.resource, version, ns, name)
            cached = self._shared.get(key)
            if cached is not None and cached[0] is stored:
                return cached[1]
            served = meta.render(stored, rtype, version)
            if len(self._shared) >= SHARED_READS_LIMIT:
                self._shared.clear()
            self._shared[key] = (stored, served)
            return served

    def list(
        self,
        rtype: ResourceType,
        version: str,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> tuple[list[KubeObject], int]:
        """Matching objects sorted by (namespace, name), and the store's resourceVersion."""
        match = predicate(
            LabelSelector.parse(label_selector),
            FieldSelector.parse(field_selector, rtype.selectable_fields()),
        )
        with self._lock:
            items = [
                meta.render(obj, rtype, version)
                for key, obj in sorted(self._bucket(rtype).items())
                if (not namespace or key[0] == namespace) and match(obj)
            ]
            return items, self._rv

    # ------------------------------------------------------------------ writes
    def create(
        self, rtype: ResourceType, version: str, obj: Mapping[str, Any], namespace: str = ""
    ) -> KubeObject:
        """Store a new object: name from generateName, uid, timestamps, resourceVersion, generation."""
        new = meta.clone(dict(obj))
        validation.check_shape(new, rtype)
        md = new.setdefault("metadata", {})
        with self._lock:
            ns = self._create_namespace(rtype, md, namespace)
            bucket = self._bucket(rtype)
            name = self._create_name(rtype, md, ns, bucket)
            md.update(name=name)
            if ns:
                md["namespace"] = ns
            md.pop("generation", None)
            validation.validate(rtype, new)
            if (ns, name) in bucket:
                raise already_exists(rtype, name)
            md.update(uid=str(uuid.uuid4()), creationTimestamp=meta.timestamp())
            md.pop("resourceVersion", None)
            md.pop("deletionTimestamp", None)
            if rtype.resource != "events":
                md["generation"] = 1
            meta.initial_status(rtype, new)
            new["apiVersion"], new["kind"] = "", rtype.kind
            md["resourceVersion"] = str(self._next_rv())
            bucket[(ns, name)] = new
            self._emit(rtype, ADDED, new, None)
            return meta.render(new, rtype, version)

    def _create_namespace(self, rtype: ResourceType, md: dict[str, Any], namespace: str) -> str:
        body_ns = md.get("namespace") or ""
        if not rtype.namespaced:
            md.pop("namespace", None)
            return ""
        if namespace and body_ns and body_ns != namespace:
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        return self._scope(rtype, namespace or body_ns)

    def _create_name(
        self, rtype: ResourceType, md: dict[str, Any], ns: str, bucket: dict[_Key, KubeObject]
    ) -> str:
        name = md.get("name") or ""
        prefix = md.get("generateName") or ""
        if name:
            return str(name)
        if not prefix:
            raise invalid(rtype, "", "metadata.name", "Required value: name or generateName is required")
        for _ in range(8):
            candidate = meta.generated_name(prefix, self._rng)
            if (ns, candidate) not in bucket:
                return candidate
        raise already_exists(rtype, candidate)

    def update(
        self,
        rtype: ResourceType,
        version: str,
        obj: Mapping[str, Any],
        namespace: str = "",
        *,
        status: bool = False,
    ) -> KubeObject:
        """Replace an object (or only its status) with optimistic concurrency.

        A ``metadata.resourceVersion`` in ``obj`` must equal the stored one (409
        Conflict otherwise); an empty one updates unconditionally. An update that
        changes nothing is not a write (no new resourceVersion, no event).
        """
        body = meta.clone(dict(obj))
        validation.check_shape(body, rtype)
        md = body.get("metadata") or {}
        name = md.get("name") or ""
        if not name:
            raise invalid(rtype, "", "metadata.name", "Required value: name is required")
        body_ns = md.get("namespace") or ""
        if rtype.namespaced and namespace and body_ns and body_ns != namespace:
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        with self._lock:
            ns = self._scope(rtype, namespace or body_ns)
            old = self._existing(rtype, ns, name)
            self._check_preconditions(
                rtype, old, uid=md.get("uid"), resource_version=md.get("resourceVersion")
            )
            new = meta.merge_update(old, body, rtype, status=status)
            validation.validate(rtype, new)
            new["apiVersion"], new["kind"] = "", rtype.kind
            new_md = new["metadata"]
            new_md["resourceVersion"] = old["metadata"]["resourceVersion"]
            if "generation" in old["metadata"]:
                bump = meta.content(new, rtype) != meta.content(old, rtype)
                new_md["generation"] = old["metadata"]["generation"] + int(bump)
            if new == old:
                return meta.render(old, rtype, version)
            new_md["resourceVersion"] = str(self._next_rv())
            if new_md.get("deletionTimestamp") and not new_md.get("finalizers"):
                del self._bucket(rtype)[(ns, name)]
                self._emit(rtype, DELETED, new, old)
            else:
                self._bucket(rtype)[(ns, name)] = new
                self._emit(rtype, MODIFIED, new, old)
            return meta.render(new, rtype, version)

    def patch(
        self,
        rtype: ResourceType,
        version: str,
        namespace: str,
        name: str,
        *,
        body: Any,
        content_type: str,
        status: bool = False,
    ) -> KubeObject:
        """Apply a merge, JSON or strategic merge patch, then update (or update status) atomically.

        The patch may carry ``metadata.resourceVersion`` as a precondition, exactly
        like an update; otherwise it applies to whatever is stored.
        """
        with self._lock:
            ns = self._scope(rtype, namespace)
            current = meta.render(self._existing(rtype, ns, name), rtype, version)
            patched = apply_patch(current, body, content_type)
            if not isinstance(patched.get("metadata"), dict):
                raise bad_request("the patch removed or replaced metadata")
            validation.check_patched_shape(patched, rtype, name)
            md = patched["metadata"]
            md["name"] = name
            if ns:
                md["namespace"] = ns
            return self.update(rtype, version, patched, ns, status=status)

    def _check_preconditions(
        self, rtype: ResourceType, old: KubeObject, *, uid: str | None, resource_version: str | None
    ) -> None:
        name = old["metadata"]["name"]
        have_uid = old["metadata"]["uid"]
        have_rv = old["metadata"]["resourceVersion"]
        if uid and uid != have_uid:
            why = f"Precondition failed: UID in precondition: {uid}, UID in object meta: {have_uid}"
            raise conflict(rtype, name, why)
        if resource_version and str(resource_version) != have_rv:
            raise conflict(rtype, name, STALE_OBJECT)

    def delete(
        self,
        rtype: ResourceType,
        version: str,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        resource_version: str | None = None,
    ) -> KubeObject:
        """Delete with optional preconditions; objects with finalizers only get a deletionTimestamp."""
        with self._lock:
            ns = self._scope(rtype, namespace)
            old = self._existing(rtype, ns, name)
            have_rv = old["metadata"]["resourceVersion"]
            have_uid = old["metadata"]["uid"]
            if uid and uid != have_uid:
                why = (
                    f"the UID in the precondition ({uid}) does not match the UID in record ({have_uid}). "
                    "The object might have been deleted and then recreated"
                )
                raise delete_precondition_failed(rtype, name, why)
            if resource_version and str(resource_version) != have_rv:
                why = (
                    f"the ResourceVersion in the precondition ({resource_version}) does not match the "
                    f"ResourceVersion in record ({have_rv}). The object might have been modified"
                )
                raise delete_precondition_failed(rtype, name, why)
            new = meta.clone(old)
            new_md = new["metadata"]
            if new_md.get("finalizers"):
                if new_md.get("deletionTimestamp"):
                    return meta.render(old, rtype, version)
                new_md.update(deletionTimestamp=meta.timestamp(), deletionGracePeriodSeconds=0)
                new_md["resourceVersion"] = str(self._next_rv())
                self._bucket(rtype)[(ns, name)] = new
                self._emit(rtype, MODIFIED, new, old)
                return meta.render(new, rtype, version)
            new_md["resourceVersion"] = str(self._next_rv())
            del self._bucket(rtype)[(ns, name)]
            self._emit(rtype, DELETED, new, old)
            if rtype.kind == "Namespace":
                self._delete_contents(name)
            return meta.render(new, rtype, version)

    def _delete_contents(self, namespace: str) -> None:
        """What the namespace controller does once a namespace is deleted (here at once)."""
        for rtype in RESOURCE_TYPES:
            if rtype.namespaced:
                for ns, name in [key for key in self._bucket(rtype) if key[0] == namespace]:
                    self.delete(rtype, self.registry.served[rtype.group][0], ns, name)

    def delete_collection(
        self,
        rtype: ResourceType,
        version: str,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> builtins.list[KubeObject]:
        """Delete every matching object; returns what was deleted (or marked for deletion)."""
        with self._lock:
            items, _ = self.list(
                rtype, version, namespace, label_selector=label_selector, field_selector=field_selector
            )
            return [
                self.delete(rtype, version, item["metadata"].get("namespace", ""), item["metadata"]["name"])
                for item in items
            ]

    # ----------------------------------------------------------------- watches
    def watch(
        self,
        rtype: ResourceType,
        version: str,
        namespace: str = "",
        *,
        resource_version: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        send_initial_events: bool | None = None,
        allow_bookmarks: bool = False,
        drop_after: int | None = None,
    ) -> Watch:
        """Open a watch, with Kubernetes' resourceVersion semantics.

        Unset or ``"0"``: synthetic ADDED events for the current state, then changes
        (unless ``send_initial_events`` is False). A specific version: every change
        after it, replayed from history (410 Expired when it is too old).
        ``send_initial_events`` with ``allow_bookmarks`` ends the initial events with
        a BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` (watch-list).
        """
        match = predicate(
            LabelSelector.parse(label_selector),
            FieldSelector.parse(field_selector, rtype.selectable_fields()),
        )
        unset = resource_version in (None, "", "0")
        initial = send_initial_events if send_initial_events is not None else unset
        since = None if unset or send_initial_events else _parse_rv(resource_version)
        with self._lock:
            watch = Watch(
                rtype,
                namespace,
                match,
                lambda obj: meta.render(obj, rtype, version),
                drop_after=drop_after,
                on_stop=self._forget,
                max_queued=self.watch_queue,
            )
            if since is not None:
                self._replay(watch, since)
            elif initial:
                for key, obj in sorted(self._bucket(rtype).items()):
                    if (not namespace or key[0] == namespace) and match(obj):
                        watch.push(WatchEvent(ADDED, meta.render(obj, rtype, version)))
                if send_initial_events and allow_bookmarks:
                    api_version = api_version_of(rtype.group, version)
                    watch.push(bookmark(rtype, api_version, self._rv, initial_end=True))
            if drop_after == 0:
                watch.drop()
            if not watch.stopped:
                self._watches.add(watch)
            return watch

    def _replay(self, watch: Watch, since: int) -> None:
        if since < self._evicted_upto:
            oldest = self._history[0][0] if self._history else self._rv + 1
            raise expired(since, oldest)
        for rv, rtype, kind, obj, old in self._history:
            if rv > since and rtype == watch.rtype:
                watch.offer(kind, obj, old)

    def _forget(self, watch: Watch) -> None:
        with self._lock:
            self._watches.discard(watch)

    # ------------------------------------------------------------------- reset
    def reset(self) -> None:
        """Forget every object, fault and watch; resourceVersions keep counting up.

        Watches still open are ended, and resuming from any earlier resourceVersion
        gets 410, so clients relist instead of missing the reset.
        """
        with self._lock:
            for watch in list(self._watches):
                watch.stop()
            self._watches.clear()
            self._objects.clear()
            self._history.clear()
            self._evicted_upto = self._rv + 1
            self.faults.clear()
            self._seed_namespaces()
            self._evicted_upto = self._rv


def _parse_rv(value: str | None) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise bad_request(f"invalid resource version: {value!r}") from None


RESOURCE_SLICE_MAX_DEVICES = validation.RESOURCE_SLICE_MAX_DEVICES
"""Devices in one ResourceSlice (upstream ``resourceapi.ResourceSliceMaxDevices``)."""
