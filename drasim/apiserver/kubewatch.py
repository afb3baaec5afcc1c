"""KubeWatch: a watch response of the kubernetes client, read line by line on a background thread."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

from drasim.apiserver.watch import WatchEvent
from drasim.errors import ApiError


class KubeWatch:
    """A watch stream read by a background thread; ``next(timeout)``, iteration and ``stop()``."""

    def __init__(self, response: Any) -> None:
        self._response = response
        self._queue: queue.SimpleQueue[WatchEvent | None] = queue.SimpleQueue()
        self.stopped = False
        self.error: ApiError | None = None
        self._thread = threading.Thread(target=self._read, name="drasim-kubewatch", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        buffer = b""
        try:
            for chunk in self._response.stream(amt=None, decode_content=True):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        self._deliver(json.loads(line))
        except Exception:
            pass
        finally:
            self._queue.put(None)

    def _deliver(self, data: dict[str, Any]) -> None:
        event = WatchEvent(str(data.get("type")), dict(data.get("object") or {}))
        if event.type == "ERROR":
            obj = event.object
            self.error = ApiError(
                int(obj.get("code") or 500), str(obj.get("reason")), str(obj.get("message"))
            )
        self._queue.put(event)

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event, or ``None`` when the stream ended or ``timeout`` passed."""
        try:
            event = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if event is None:
            self._queue.put(None)
        return event

    def stop(self) -> None:
        """Close the connection; the reader thread ends."""
        if self.stopped:
            return
        self.stopped = True
        shutdown = getattr(self._response, "shutdown", None)
        if shutdown is not None:
            shutdown()
        self._response.release_conn()

    def __iter__(self) -> Iterator[WatchEvent]:
        while True:
            event = self.next()
            if event is None:
                return
            yield event

    def __enter__(self) -> KubeWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
