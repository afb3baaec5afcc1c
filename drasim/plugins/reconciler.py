"""Desired versus actual registered plugins (upstream ``pluginmanager/reconciler``).

The watcher feeds the desired state: registration socket path -> generation, a
new generation each time a socket is (re)created. A background loop, woken by
changes and at least every 1 s (nominal), first deregisters plugins whose socket is
gone or was re-created, then registers desired sockets that are not registered.
Each socket has at most one operation in flight (``goroutinemap``); a failed
registration backs off exponentially (0.5 s doubling to 2 min 2 s, nominal) so a
stale socket with no listener is retried without thrashing.

Like upstream, a plugin is put into the actual state before the handler's
``register_plugin`` runs, so a handler error does not cause retries until the
socket changes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from drasim.interfaces import Clock, NullRecorder, Recorder
from drasim.plugins.registration import PluginHandler, PluginInfo, RegistrationFailedError, register_socket
from drasim.plugins.timers import ExponentialBackoff

#: upstream ``loopSleepDuration`` of the plugin manager.
RECONCILE_PERIOD = 1.0


#: The longest real time the reconciler loop sleeps between passes.
_MAX_WAIT = 60.0


@dataclass
class _Actual:
    generation: int
    info: PluginInfo
    handler: PluginHandler
    registered: bool = False


@dataclass
class _Retry:
    backoff: ExponentialBackoff = field(default_factory=ExponentialBackoff)
    not_before: float = 0.0
    last_error: str = ""


class Reconciler:
    """Keeps the handlers' registrations in line with the sockets the watcher reports."""

    def __init__(
        self,
        handlers: Mapping[str, PluginHandler],
        *,
        clock: Clock,
        recorder: Recorder | None = None,
        period: float = RECONCILE_PERIOD,
        call_timeout: float | None = None,
    ) -> None:
        self._handlers = dict(handlers)
        self._clock = clock
        self._recorder = recorder if recorder is not None else NullRecorder()
        self._period = period
        self._call_timeout = call_timeout
        self._lock = threading.RLock()  # predicates of wait_for may call the locked getters
        self._cond = threading.Condition(self._lock)
        self._desired: dict[str, int] = {}
        self._actual: dict[str, _Actual] = {}
        self._busy: set[str] = set()
        self._retries: dict[str, _Retry] = {}
        self._attempts: dict[str, int] = {}
        self._generation = 0
        self._passes = 0
        self._in_pass = False
        self._dirty = False
        self._stopping = False
        self._thread: threading.Thread | None = None

    # ---- desired state (upstream DesiredStateOfWorld) ----

    def add_or_update(self, socket_path: str) -> None:
        """A socket appeared or was re-created: give it a new generation."""
        with self._cond:
            self._generation += 1
            self._desired[socket_path] = self._generation
            self._dirty = True
            self._cond.notify_all()

    def remove(self, socket_path: str) -> None:
        """A socket went away (no-op if unknown)."""
        with self._cond:
            if self._desired.pop(socket_path, None) is not None:
                self._dirty = True
                self._cond.notify_all()

    def desired_sockets(self) -> list[str]:
        """Socket paths currently desired."""
        with self._lock:
            return sorted(self._desired)

    # ---- observation ----

    def registered(self) -> dict[str, PluginInfo]:
        """Socket path -> plugin info of every successfully registered plugin."""
        with self._lock:
            return {p: a.info for p, a in self._actual.items() if a.registered}

    def attempts(self, socket_path: str) -> int:
        """How many registration attempts were started for a socket."""
        with self._lock:
            return self._attempts.get(socket_path, 0)

    def last_error(self, socket_path: str) -> str:
        """The error of the last failed registration attempt for a socket, or ``""``."""
        with self._lock:
            retry = self._retries.get(socket_path)
            return retry.last_error if retry else ""

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until ``predicate()`` holds after some operation finished (or now)."""
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def sync(self, timeout: float) -> bool:
        """Run a full pass now and wait until it and the operations it started have finished."""
        with self._cond:
            # A pass already running may have missed the latest changes: wait for the next one.
            target = self._passes + (2 if self._in_pass else 1)
            self._dirty = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: self._passes >= target and not self._busy, timeout)

    # ---- loop ----

    def start(self) -> None:
        """Start the background loop."""
        self._thread = threading.Thread(target=self._loop, name="plugin-reconciler", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop and wait for in-flight operations (registrations are not undone)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        with self._cond:
            self._cond.wait_for(lambda: not self._busy, timeout)

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                self._in_pass = True
            self._reconcile_once()
            with self._cond:
                self._in_pass = False
                self._passes += 1
                self._cond.notify_all()
                if not self._dirty:
                    self._cond.wait(self._wait_time())
                self._dirty = False

    def _wait_time(self) -> float:
        """Until the next periodic pass or the earliest retry, whichever is sooner (lock held)."""
        wait = self._clock.scaled(self._period)
        now = self._clock.now()
        for path in self._desired:
            retry = self._retries.get(path)
            if retry is not None and path not in self._actual and path not in self._busy:
                wait = min(wait, max(retry.not_before - now, 0.001))
        # A wait is re-evaluated on every notify; capping it keeps a huge or infinite period
        # (a time scale far from 1, a paused clock) from overflowing the lock's timeout.
        return wait if wait <= _MAX_WAIT else _MAX_WAIT

    def _reconcile_once(self) -> None:
        with self._lock:
            stale = [
                path
                for path, actual in self._actual.items()
                if path not in self._busy and self._desired.get(path) != actual.generation
            ]
        for path in stale:
            self._unregister(path)
        now = self._clock.now()
        with self._lock:
            if self._stopping:
                return
            todo = [
                (path, gen)
                for path, gen in self._desired.items()
                if path not in self._actual and path not in self._busy and self._may_retry(path, now)
            ]
            for path, _gen in todo:
                self._busy.add(path)
                self._attempts[path] = self._attempts.get(path, 0) + 1
        for path, gen in todo:
            threading.Thread(
                target=self._register, args=(path, gen), name=f"register {path}", daemon=True
            ).start()

    def _may_retry(self, path: str, now: float) -> bool:
        retry = self._retries.get(path)
        return retry is None or now >= retry.not_before

    def _unregister(self, path: str) -> None:
        """Upstream ``GenerateUnregisterPluginFunc``: drop from the actual state, then tell the handler."""
        with self._lock:
            actual = self._actual.pop(path, None)
        if actual is None:
            return
        self._recorder.record(
            "registration",
            driver=actual.info.name,
            endpoint=actual.info.endpoint,
            socket=path,
            service=None,
            outcome="deregistered",
            error=None,
        )
        actual.handler.deregister_plugin(actual.info.name, actual.info.endpoint)
        with self._cond:
            self._cond.notify_all()

    def _register(self, path: str, generation: int) -> None:
        def add(info: PluginInfo, handler: PluginHandler) -> None:
            with self._lock:
                self._actual[path] = _Actual(generation, info, handler)

        error = ""
        try:
            register_socket(
                path,
                self._handlers,
                clock=self._clock,
                add_to_actual_state=add,
                recorder=self._recorder,
                call_timeout=self._call_timeout,
            )
        except RegistrationFailedError as exc:
            error = str(exc)
        except Exception as exc:  # an unexpected failure must not kill the loop; retried like any other
            error = f"RegisterPlugin error -- {exc!r}"
        with self._cond:
            self._busy.discard(path)
            if error:
                retry = self._retries.setdefault(path, _Retry())
                retry.not_before = self._clock.now() + self._clock.scaled(retry.backoff.next_delay())
                retry.last_error = error
            else:
                self._retries.pop(path, None)
                actual = self._actual.get(path)
                if actual is not None and actual.generation == generation:
                    actual.registered = True
            self._dirty = True
            self._cond.notify_all()
