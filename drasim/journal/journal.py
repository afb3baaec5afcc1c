"""The journal: an append-only, thread-safe record of everything that happened in a scenario.

It implements the :class:`drasim.interfaces.Recorder` port. Expectations query it
(the journal is the API for assertions; log text never is), reports render it,
and it is saved as JSON lines next to a run's other artifacts.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from itertools import compress
from operator import not_
from pathlib import Path
from typing import Any, TypeGuard

from drasim.clock import RealClock
from drasim.errors import ConfigError
from drasim.fsutil import USER_FILE_MODE, atomic_write_text
from drasim.interfaces import Clock
from drasim.journal import kinds
from drasim.journal.calls import RpcCall, method_matches
from drasim.journal.convert import to_jsonable

_PLAIN = frozenset({str, int, bool, type(None)})
_PLAIN_OR_FLOAT = _PLAIN | {float}
_INF = float("inf")
_is_float = float.__instancecheck__

HOLD_WAIT = 5.0
"""The longest a reader, or another thread's write, waits for events on their way
(:meth:`Journal.hold`)."""

Event = dict[str, Any]
"""One journal event: ``seq``, ``t``, ``kind`` and the kind's fields (see :mod:`drasim.journal.kinds`)."""


class Journal:
    """Append-only list of events, each stamped with ``seq`` (1..n) and ``t`` (seconds since start).

    ``t`` comes from ``clock`` (a :class:`drasim.interfaces.Clock`; real time by
    default), so with a virtual clock the journal shows virtual time.
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock: Clock = clock if clock is not None else RealClock()
        # The clock read for every event (time.monotonic itself for a plain RealClock).
        self._now = time.monotonic if type(self._clock) is RealClock else self._clock.now
        self._start = self._clock.now()
        self.started_wall = time.time()
        """Unix time at creation; used to place merged events that carry a ``wall`` stamp."""
        self._events: list[Event] = []
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._waiters = 0  # threads in wait_for or waiting out a hold: only they need a notify
        # Events on their way (hold/release): ticket -> holding thread, oldest first.
        self._holds: dict[int, int] = {}
        self._last_ticket = 0
        self._merged: dict[str, tuple[int, int]] = {}

    # -- writing ---------------------------------------------------------------------------

    def record(self, kind: str, **fields: Any) -> None:
        """Append one event (the Recorder port). Fields are converted to JSON values now.

        A field named ``seq`` or ``t`` (a forwarded event's own numbering) is kept as
        ``source_seq`` / ``source_t``: a recorder never fails its caller over a name.
        """
        self._append(kind, fields, None)

    def record_ready(self, kind: str, fields: dict[str, Any]) -> None:
        """Append one event whose ``fields`` the producer vouches for, as
        :func:`drasim.interfaces.ready_recording` says: the dict becomes the event's body
        as it is (no check, no copy). Producers reach it through ``ready_recording``."""
        self._push(kind, fields, None)

    def _append(self, kind: str, body: dict[str, Any], t: float | None) -> Event:
        """Append one event made of ``body``, a dict the caller hands over (it is not copied)."""
        if not isinstance(kind, str) or not kind:
            msg = f"journal event kind must be a non-empty string, got {kind!r}"
            raise ValueError(msg)
        # Converted before the lock (the conversion may be slow for big payloads). Most
        # fields are plain values: those are checked in C and taken as they are.
        if not kinds.RESERVED.isdisjoint(body):
            body = {_field_name(str(k)): v for k, v in body.items()}
        values = body.values()
        types = set(map(type, values))
        # Plain values and finite floats (durations) are taken as they are, checked in C: the
        # sum of the floats is finite only when each of them is (an overflowing sum of finite
        # ones just takes the loop below).
        if not types <= _PLAIN and not (
            types <= _PLAIN_OR_FLOAT and -_INF < sum(filter(_is_float, values)) < _INF
        ):
            # Only the fields that are not plain (picked in C) are looked at one by one.
            for key in list(compress(body, map(not_, map(_PLAIN.__contains__, map(type, values))))):
                value = body[key]
                if type(value) is float and -_INF < value < _INF:
                    continue
                body[key] = to_jsonable(value)
        return self._push(kind, body, t)

    def _push(self, kind: str, body: dict[str, Any], t: float | None) -> Event:
        """Number, stamp (now, unless ``t`` is given) and append one event of JSON-ready ``body``."""
        with self._lock:  # the condition's lock, entered without Condition's Python-level wrapper
            if self._holds:
                self._wait_for_holds()
            stamp = self._now() - self._start if t is None else t
            event: Event = {"seq": len(self._events) + 1, "t": round(stamp, 6), "kind": kind, **body}
            self._events.append(event)
            if self._waiters:
                self._cond.notify_all()
        return event

    def hold(self) -> int:
        """Say that events are on their way; returns the ticket to :meth:`release`.

        Until the matching release, what happens after the hold waits for them, at most
        :data:`HOLD_WAIT` seconds: readers (:meth:`mark`, :meth:`events`, :meth:`last`,
        :meth:`tail` and what is built on them) and other threads' writes, so the journal keeps
        the order in which things happened. The holding thread's own writes go at once (those
        are the events on their way), after those of older holds.

        A producer that must let something happen before it can record it (the proxy's splice
        passes a driver's reply on, then reads it) holds first: nobody who saw the effect
        reads, or records a consequence, before the event. The holding thread must not read the
        journal before it releases.
        """
        with self._lock:
            self._last_ticket += 1
            self._holds[self._last_ticket] = threading.get_ident()
            return self._last_ticket

    def release(self, ticket: int) -> None:
        """End the :meth:`hold` of ``ticket`` (its events are recorded, or none will be)."""
        with self._lock:
            self._holds.pop(ticket, None)
            if self._waiters:
                self._cond.notify_all()

    def _wait_for_holds(self) -> None:
        """Wait (the lock held) for the holds this thread must let go first: for a holder, those
        older than its own; for others, every hold taken so far. At most :data:`HOLD_WAIT` s."""
        me = threading.get_ident()
        limit = next((t for t, holder in self._holds.items() if holder == me), self._last_ticket + 1)
        if next(iter(self._holds)) >= limit:
            return
        deadline = time.monotonic() + HOLD_WAIT
        self._waiters += 1
        try:
            while self._holds and next(iter(self._holds)) < limit:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return  # a producer that never released: go on without its events
                self._cond.wait(remaining)
        finally:
            self._waiters -= 1

    # -- reading ---------------------------------------------------------------------------

    def mark(self) -> int:
        """The seq of the latest event (0 when empty): pass it as ``since_seq`` later."""
        with self._cond:
            if self._holds:
                self._wait_for_holds()
            return len(self._events)

    def __len__(self) -> int:
        return self.mark()

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events())

    def events(self, kind: str | None = None, since_seq: int = 0, **match: Any) -> list[Event]:
        """Events after ``since_seq``, of ``kind`` if given, whose fields equal every ``match`` value.

        Each event is a shallow copy; use ``events(**{"pod_uid": u})`` for keys
        that are not identifiers.
        """
        with self._cond:
            if self._holds:
                self._wait_for_holds()
            selected = self._events[max(since_seq, 0) :]
        return [dict(e) for e in selected if _matches(e, kind, match)]

    def last(self, kind: str | None = None, **match: Any) -> Event | None:
        """The newest event of ``kind`` (if given) whose fields equal every ``match`` value (a copy),
        or ``None``; reads backwards and copies only that event."""
        with self._cond:
            if self._holds:
                self._wait_for_holds()
            found = next((e for e in reversed(self._events) if _matches(e, kind, match)), None)
        return None if found is None else dict(found)

    def tail(self, count: int = 20) -> list[Event]:
        """The last ``count`` events (copies)."""
        with self._cond:
            if self._holds:
                self._wait_for_holds()
            selected = self._events[-count:] if count > 0 else []
        return [dict(e) for e in selected]

    def rpc_calls(
        self,
        method_suffix: str = "",
        side: str | None = "kubelet",
        driver: str | None = None,
        since_seq: int = 0,
    ) -> list[RpcCall]:
        """``rpc`` events as :class:`RpcCall` values, oldest first.

        ``method_suffix`` matches the end of the full gRPC path at a name boundary
        (``NodePrepareResources`` or the whole path); ``side=None`` takes both the
        kubelet's and the plugin's view of each call.
        """
        calls = []
        for event in self.events(kinds.RPC, since_seq=since_seq):
            if side is not None and event.get("side") != side:
                continue
            if driver is not None and event.get("driver") != driver:
                continue
            if method_matches(str(event.get("method", "")), method_suffix):
                calls.append(RpcCall.from_event(event))
        return calls

    def wait_for(
        self, timeout: float, kind: str | None = None, since_seq: int = 0, **match: Any
    ) -> Event | None:
        """Block until a matching event after ``since_seq`` exists; ``None`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for event in self._events[max(since_seq, 0) :]:
                    if _matches(event, kind, match):
                        return dict(event)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._waiters += 1
                try:
                    self._cond.wait(remaining)
                finally:
                    self._waiters -= 1

    # -- files -----------------------------------------------------------------------------

    def to_jsonl(self) -> str:
        """All events as JSON lines (``seq``, ``t``, ``kind`` first), newline-terminated."""
        return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.events())

    def write_jsonl(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_jsonl` atomically (temp file, fsync, rename)."""
        _atomic_write(Path(path), self.to_jsonl())

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike[str], clock: Clock | None = None) -> Journal:
        """Load a journal written by :meth:`write_jsonl`; events keep their ``t`` and are renumbered 1..n.

        Raises :class:`drasim.errors.ConfigError` naming ``file:line`` for a bad line.
        """
        journal = cls(clock)
        text = _read_text(Path(path))
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            obj, problem = _parse_line(line)
            if problem:
                msg = f"{path}:{lineno}: {problem}"
                raise ConfigError(msg)
            kind = obj.pop("kind")
            t = obj.pop("t", 0.0)
            obj.pop("seq", None)
            journal._append(kind, obj, float(t) if isinstance(t, int | float) else 0.0)
        return journal

    def merge_jsonl(self, path: str | os.PathLike[str], source: str = "plugin") -> int:
        """Fold in the new lines of another process's journal file; returns how many events were added.

        Call it as often as you like: each call reads only complete lines written
        since the previous call for the same path. Each line is an object with a
        ``kind`` and the same fields as here. Its own ``seq`` and ``t`` are kept as
        ``source_seq`` and ``source_t``, ``source`` names the writer, and the event
        gets the next ``seq`` here. ``t`` is ``wall - started_wall`` when the line has a
        ``wall`` (or, as the fake plugin writes, ``start``) Unix-time stamp, else the
        time of merging. A line that is not a
        JSON object with a ``kind`` becomes a ``merge-error`` event instead.
        """
        key = os.fspath(path)
        with self._cond:
            offset, lineno = self._merged.get(key, (0, 0))
        try:
            with open(path, "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except FileNotFoundError:
            return 0
        complete = data[: data.rfind(b"\n") + 1]
        added = 0
        for raw in complete.splitlines():
            lineno += 1
            if raw.strip():
                self._merge_line(raw, source, key, lineno)
                added += 1
        with self._cond:
            self._merged[key] = (offset + len(complete), lineno)
        return added

    def _merge_line(self, raw: bytes, source: str, path: str, lineno: int) -> None:
        obj, problem = _parse_line(raw.decode("utf-8", errors="replace"))
        if problem:
            report = {"source": source, "path": path, "line": lineno, "message": problem}
            self._append(kinds.MERGE_ERROR, report, None)
            return
        kind = obj.pop("kind")
        fields: dict[str, Any] = {"source": source}
        if "seq" in obj:
            fields["source_seq"] = obj.pop("seq")
        if "t" in obj:
            fields["source_t"] = obj.pop("t")
        fields.update(obj)
        wall = obj.get("wall", obj.get("start"))
        t = max(wall - self.started_wall, 0.0) if _is_unix_time(wall) else None
        self._append(kind, fields, t)


def _field_name(key: str) -> str:
    return f"source_{key}" if key in kinds.RESERVED else key


def _matches(event: Mapping[str, Any], kind: str | None, match: Mapping[str, Any]) -> bool:
    if kind is not None and event.get("kind") != kind:
        return False
    return all(k in event and event[k] == v for k, v in match.items())


def _is_unix_time(value: Any) -> TypeGuard[float]:
    """A plausible Unix timestamp (after 2001), not a duration or a monotonic reading."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 1e9


def _parse_line(line: str) -> tuple[dict[str, Any], str]:
    """The object on one JSON line and ``""``, or ``{}`` and what is wrong with it."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as err:
        return {}, f"not valid JSON ({err.msg} at column {err.colno})"
    if not isinstance(obj, dict):
        return {}, f"expected a JSON object, got {type(obj).__name__}"
    if not isinstance(obj.get("kind"), str) or not obj["kind"]:
        return {}, "event has no 'kind' string"
    return obj, ""


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        msg = f"{path}: cannot read journal: {err.strerror or err}"
        raise ConfigError(msg) from err
    except UnicodeDecodeError as err:
        msg = f"{path}: journal is not UTF-8 text ({err.reason})"
        raise ConfigError(msg) from err


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never half of it."""
    atomic_write_text(path, text, mode=USER_FILE_MODE)
