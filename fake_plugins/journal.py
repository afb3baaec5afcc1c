"""The fake driver's record of every call it served.

Each call becomes a :class:`Call`; it is kept in memory, forwarded to a drasim
``Recorder`` (kind ``rpc``, ``side="plugin"``) and, when a path is given, appended
as one JSON line to a file that a harness can read while the driver runs in
another process.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # keeps drasim.interfaces out of the runtime imports
    from drasim.interfaces import Recorder


@dataclass(frozen=True)
class Call:
    """One served RPC (or one message sent on a health stream)."""

    seq: int
    driver: str
    method: str
    """Full gRPC method path, e.g. ``/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources``."""
    request: dict[str, Any]
    """The request as protobuf JSON (camelCase)."""
    response: dict[str, Any] | None
    """The reply as protobuf JSON; ``None`` when the call failed or the driver crashed."""
    code: str
    """gRPC status code name (OK, UNAVAILABLE, ...) or CRASHED."""
    details: str
    start: float
    """Wall-clock start, seconds since the epoch."""
    duration: float
    """Seconds from start to reply."""
    stream: bool = False
    """True for a message sent on a server stream (health)."""
    client: str = ""
    """The caller's gRPC library from its user agent (``grpc-go``: upstream's kubelet;
    ``grpc-python``: drasim's emulated kubelet), when known."""

    @property
    def rpc(self) -> str:
        """The short method name, e.g. ``NodePrepareResources``."""
        return self.method.rsplit("/", 1)[-1]

    def to_json(self) -> dict[str, Any]:
        """The JSON-lines record (also has ``kind: rpc`` and ``side: plugin``)."""
        return {"kind": "rpc", "side": "plugin", **asdict(self)}


class Journal:
    """Thread-safe call log with optional recorder and JSON-lines file."""

    def __init__(
        self, driver: str, *, recorder: Recorder | None = None, path: str | Path | None = None
    ) -> None:
        self.driver = driver
        self._recorder = recorder
        self._lock = threading.Condition()
        self._calls: list[Call] = []
        self._file: IO[str] | None = None
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the driver's life

    def record(
        self,
        method: str,
        request: dict[str, Any],
        response: dict[str, Any] | None,
        *,
        code: str,
        details: str = "",
        start: float,
        duration: float,
        stream: bool = False,
        client: str = "",
    ) -> Call:
        """Append one call; safe from any thread."""
        with self._lock:
            call = Call(
                seq=len(self._calls) + 1,
                driver=self.driver,
                method=method,
                request=request,
                response=response,
                code=code,
                details=details,
                start=start,
                duration=duration,
                stream=stream,
                client=client,
            )
            self._calls.append(call)
            if self._file is not None:
                self._file.write(json.dumps(call.to_json(), sort_keys=True) + "\n")
                self._file.flush()
            self._lock.notify_all()
        if self._recorder is not None:
            # The recorder converts (and so copies) every value itself: no asdict() first.
            self._recorder.record("rpc", side="plugin", **vars(call))
        return call

    @property
    def calls(self) -> list[Call]:
        """A copy of every call so far."""
        with self._lock:
            return list(self._calls)

    def wait_for(self, predicate: Callable[[list[Call]], bool], timeout: float) -> bool:
        """Block until ``predicate(calls)`` holds (checked after every new call) or ``timeout`` passes."""
        with self._lock:
            return self._lock.wait_for(lambda: predicate(self._calls), timeout)

    def close(self) -> None:
        """Close the file (the in-memory list stays)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def read_journal(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON-lines journal written by a fake driver process (a torn last line is skipped)."""
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records
