"""The upstream kubelet process and its control client (one JSON request per line, one reply each).

Requests carry an id; a reader thread hands each reply to the caller waiting for that id,
so several callers may have requests in flight. The process logs (klog) to a file.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from drasim.errors import DrasimError

REPLY_TIMEOUT = 120.0
"""Seconds to wait for one reply: longer than any call timeout a scenario scales to."""


START_ERROR_PREFIX = "drasim-start-error: "
"""The program's stderr line saying why upstream's manager did not start (see main.go)."""


class UpstreamKubeletError(DrasimError):
    """The upstream kubelet process failed, exited, or broke the control protocol."""


class UpstreamStartError(UpstreamKubeletError):
    """Upstream's DRA manager refused to start; the message is upstream's error."""


@dataclass(frozen=True)
class LaunchConfig:
    """Where the upstream kubelet keeps its state and whom it talks to."""

    binary: Path
    state_dir: Path
    registry_dir: Path
    kubeconfig: Path
    node_name: str
    log_path: Path
    call_timeout: float | None = None
    """Seconds; None: upstream's default (45 s) for drivers that set none."""
    wiping_delay: float | None = None
    """Seconds; None: upstream's default (30 s)."""
    verbosity: int = 2
    checkpoint_bytes: bool = False
    """Checkpoint-write events carry the file's bytes (``drasim diff``); else only its size."""

    def args(self) -> list[str]:
        """The command line."""
        args = [
            str(self.binary),
            f"--state-dir={self.state_dir}",
            f"--plugins-registry={self.registry_dir}",
            f"--kubeconfig={self.kubeconfig}",
            f"--node-name={self.node_name}",
            f"--v={self.verbosity}",
        ]
        if self.call_timeout is not None:
            args.append(f"--call-timeout={_go_duration(self.call_timeout)}")
        if self.wiping_delay is not None:
            args.append(f"--wiping-delay={_go_duration(self.wiping_delay)}")
        if self.checkpoint_bytes:
            args.append("--checkpoint-bytes")
        return args


def _go_duration(seconds: float) -> str:
    """A Go duration string (time.ParseDuration); at least 1 ms."""
    return f"{max(1, round(seconds * 1000))}ms"


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    reply: dict[str, Any] | None = None


EventCallback = Callable[[dict[str, Any]], None]
"""Called (on the reader thread) with each event line (id 0), in the order the program sent
them; an event comes before the reply of the operation that caused it."""


class UpstreamKubelet:
    """A running upstream kubelet; :meth:`call` sends a request and returns its reply."""

    def __init__(self, config: LaunchConfig, on_event: EventCallback | None = None) -> None:
        self.config = config
        self._on_event = on_event
        config.state_dir.mkdir(parents=True, exist_ok=True)
        config.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log: IO[bytes] = open(config.log_path, "ab")  # noqa: SIM115 - closed in _reap
        try:
            self.process = subprocess.Popen(
                config.args(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                start_new_session=True,
            )
        except OSError as err:
            self._log.close()
            raise UpstreamKubeletError(f"cannot start {config.binary}: {err}") from None
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._next = 0
        self._closed = False
        self._reader = threading.Thread(target=self._read, name="upstream-kubelet-replies", daemon=True)
        self._reader.start()
        # The first reply proves the manager started (or the process says why it did not).
        try:
            self.call("ping")
        except UpstreamKubeletError:
            self._reap(10.0)
            reason = self.start_error()
            if reason is not None:
                raise UpstreamStartError(reason) from None
            raise

    @property
    def pid(self) -> int:
        return self.process.pid

    def call(self, op: str, timeout: float = REPLY_TIMEOUT, **fields: Any) -> dict[str, Any]:
        """Send one request and wait for its reply; raises UpstreamKubeletError if none comes."""
        with self._lock:
            if self._closed:
                raise UpstreamKubeletError(f"the upstream kubelet is not running (asked to {op})")
            self._next += 1
            ident = self._next
            pending = self._pending[ident] = _Pending()
            line = json.dumps({"id": ident, "op": op, **fields}, separators=(",", ":")) + "\n"
            try:
                assert self.process.stdin is not None
                self.process.stdin.write(line.encode("utf-8"))
                self.process.stdin.flush()
            except OSError:
                self._pending.pop(ident, None)
                raise UpstreamKubeletError(self._died(f"asked to {op}")) from None
        if not pending.done.wait(timeout):
            with self._lock:
                self._pending.pop(ident, None)
            raise UpstreamKubeletError(f"the upstream kubelet did not answer {op} within {timeout:g}s")
        reply = pending.reply
        if reply is None:
            raise UpstreamKubeletError(self._died(f"asked to {op}"))
        if reply.get("protocolError"):
            raise UpstreamKubeletError(f"the upstream kubelet refused {op}: {reply['protocolError']}")
        return reply

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            try:
                reply = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(reply, dict):
                continue
            if reply.get("event"):
                if self._on_event is not None:
                    self._on_event(reply)
                continue
            with self._lock:
                pending = self._pending.pop(int(reply.get("id", 0)), None)
            if pending is not None:
                pending.reply = reply
                pending.done.set()
        with self._lock:
            self._closed = True
            waiting, self._pending = list(self._pending.values()), {}
        for pending in waiting:
            pending.done.set()

    def _died(self, doing: str) -> str:
        code = self.process.poll()
        tail = self.log_tail()
        status = "is exiting" if code is None else f"exited with status {code}"
        return f"the upstream kubelet {status} ({doing}); its log ({self.config.log_path}) ends:\n{tail}"

    def start_error(self) -> str | None:
        """Upstream's reason for not starting, from the log, or None."""
        try:
            text = self.config.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        for line in reversed(text.splitlines()):
            if line.startswith(START_ERROR_PREFIX):
                return line[len(START_ERROR_PREFIX) :]
        return None

    def log_tail(self, lines: int = 15) -> str:
        """The last lines of the process's log."""
        try:
            text = self.config.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 30.0) -> None:
        """Clean stop: the manager stops, the process exits 0."""
        if self.process.poll() is None:
            with contextlib.suppress(UpstreamKubeletError):
                self.call("stop", timeout=timeout)
        self._reap(timeout)

    def kill(self) -> None:
        """A crash: SIGKILL, no clean-up (the checkpoint stays as last written)."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGKILL)
        self._reap(10.0)

    def _reap(self, timeout: float) -> None:
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10.0)
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        self._reader.join(10.0)
        self._log.close()
