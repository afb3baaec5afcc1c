"""Watch streams: one queue per watcher, fed by the store under its lock so events stay in order."""

from __future__ import annotations

import queue
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Self

from drasim.apiserver.kinds import ResourceType

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"

INITIAL_EVENTS_END = "k8s.io/initial-events-end"


@dataclass(frozen=True)
class WatchEvent:
    """One event of a watch stream, shaped as the REST API sends it."""

    type: str
    object: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """``{"type": ..., "object": ...}``."""
        return {"type": self.type, "object": self.object}

    @property
    def resource_version(self) -> str:
        """The object's ``metadata.resourceVersion``."""
        return str(self.object.get("metadata", {}).get("resourceVersion", ""))


def bookmark(
    rtype: ResourceType, api_version: str, resource_version: int, *, initial_end: bool
) -> WatchEvent:
    """A BOOKMARK event; with ``initial_end`` it marks the end of a watch-list's initial events."""
    meta: dict[str, Any] = {"resourceVersion": str(resource_version)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return WatchEvent(BOOKMARK, {"kind": rtype.kind, "apiVersion": api_version, "metadata": meta})


class EventStream(ABC):
    """What every watch stream offers its consumer: :meth:`next` with a timeout, iteration,
    and ``with`` (which calls :meth:`stop`). Producers put events on ``_queue``; ``None``
    marks the end and stays there for later callers.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[WatchEvent | None] = queue.SimpleQueue()
        self.stopped = False

    @abstractmethod
    def stop(self) -> None:
        """End the stream; a consumer blocked in :meth:`next` wakes up with ``None``."""

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event, or ``None`` when the stream ended or ``timeout`` seconds passed."""
        try:
            event = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if event is None:
            self._queue.put(None)  # keep reporting the end to later callers
        return event

    def __iter__(self) -> Iterator[WatchEvent]:
        while True:
            event = self.next()
            if event is None:
                return
            yield event

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Watch(EventStream):
    """A live watch: iterate it, or call :meth:`next` with a timeout; :meth:`stop` ends it.

    The store calls :meth:`offer` under its lock for every write, so events arrive in
    resourceVersion order. ``drop_after`` (from a dropWatch fault) ends the stream
    after that many events, as a dropped connection would. ``max_queued`` bounds the
    events waiting for a consumer: a change offered while that many wait ends the stream
    instead (``dropped``), as kube-apiserver ends a watcher that does not keep up, and the
    client lists again. Initial events and bookmarks are not counted against it.
    """

    def __init__(
        self,
        rtype: ResourceType,
        namespace: str,
        matches: Callable[[Mapping[str, Any]], bool],
        render: Callable[[dict[str, Any]], dict[str, Any]],
        *,
        drop_after: int | None = None,
        on_stop: Callable[[Watch], None] | None = None,
        max_queued: int | None = None,
    ) -> None:
        super().__init__()
        self.max_queued = max_queued
        self._uncounted = 0  # initial events and bookmarks still queued (they come out first)
        self.rtype = rtype
        self.namespace = namespace
        self._matches = matches
        self._render = render
        self._remaining = drop_after
        self._on_stop = on_stop
        self.dropped = False

    def _in_scope(self, obj: Mapping[str, Any]) -> bool:
        if self.namespace and obj.get("metadata", {}).get("namespace", "") != self.namespace:
            return False
        return self._matches(obj)

    def offer(self, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Translate a store change into this watcher's event, honouring its selectors."""
        if self.stopped:
            return
        now_in = self._in_scope(obj)
        was_in = old is not None and self._in_scope(old)
        if kind == MODIFIED:
            if now_in and not was_in:
                kind = ADDED
            elif was_in and not now_in and old is not None:
                # As upstream's watch cache: the last content that matched, at the change's
                # resourceVersion.
                rv = obj.get("metadata", {}).get("resourceVersion")
                gone = {**old, "metadata": {**old.get("metadata", {}), "resourceVersion": rv}}
                self.push(WatchEvent(DELETED, self._render(gone)))
                return
            elif not now_in:
                return
        elif not now_in:
            return
        unread = self._queue.qsize() - self._uncounted
        if self.max_queued is not None and unread >= self.max_queued:
            self.drop()  # the consumer stopped reading: it lists again instead of growing this queue
            return
        self._put(WatchEvent(kind, self._render(obj)))

    def push(self, event: WatchEvent) -> None:
        """Queue an event as is (initial events, bookmarks): not counted against ``max_queued``."""
        if not self.stopped:
            self._uncounted += 1
        self._put(event)

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event, or ``None`` when the stream ended or ``timeout`` seconds passed."""
        event = super().next(timeout)
        if event is not None and self._uncounted > 0:
            self._uncounted -= 1
        return event

    def _put(self, event: WatchEvent) -> None:
        if self.stopped:
            return
        if self._remaining is not None:
            if self._remaining <= 0:
                self.drop()
                return
            self._remaining -= 1
        self._queue.put(event)
        if self._remaining == 0:
            self.drop()

    def drop(self) -> None:
        """End the stream as a dropped connection (a dropWatch fault) would."""
        self.dropped = True
        self.stop()

    def stop(self) -> None:
        """End the stream; a consumer blocked in :meth:`next` wakes up with ``None``."""
        if self.stopped:
            return
        self.stopped = True
        self._queue.put(None)
        if self._on_stop is not None:
            self._on_stop(self)
