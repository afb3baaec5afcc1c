"""KubeWatch: a watch response of the kubernetes client, read line by line on a background thread."""

from __future__ import annotations

import json
import threading
from typing import Any

from drasim.apiserver.watch import EventStream, WatchEvent
from drasim.errors import ApiError


class KubeWatch(EventStream):
    """A watch stream read by a background thread; ``next(timeout)``, iteration and ``stop()``."""

    def __init__(self, response: Any) -> None:
        super().__init__()
        self._response = response
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

    def stop(self) -> None:
        """Close the connection; the reader thread ends."""
        if self.stopped:
            return
        self.stopped = True
        shutdown = getattr(self._response, "shutdown", None)
        if shutdown is not None:
            shutdown()
        self._response.release_conn()
