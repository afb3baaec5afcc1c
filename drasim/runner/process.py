"""Run a DRA driver as a separate process from a command template.

This is how real driver binaries (and the fake plugin, when a scenario wants real
process events) are started. The template may use these placeholders, which
drasim fills in:

``{node}``, ``{kubeconfig}``, ``{registrar_dir}``, ``{plugins_dir}``,
``{plugin_dir}`` (``plugins_dir/<driver>``), ``{cdi_dir}``, ``{state_dir}``,
``{driver_name}``.

The same values are exported as environment variables: ``NODE_NAME``,
``KUBECONFIG``, ``DRASIM_REGISTRAR_DIR``, ``DRASIM_PLUGINS_DIR``,
``DRASIM_PLUGIN_DIR``, ``DRASIM_CDI_DIR``, ``DRASIM_STATE_DIR``,
``DRASIM_DRIVER_NAME``. Standard output and error go to files in the
workspace so that reports can show them.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from drasim.errors import ConfigError, DrasimError
from drasim.runner import reaper

PLACEHOLDERS = (
    "node",
    "kubeconfig",
    "registrar_dir",
    "plugins_dir",
    "plugin_dir",
    "cdi_dir",
    "state_dir",
    "driver_name",
)

_ENV_NAMES = {
    "node": "NODE_NAME",
    "kubeconfig": "KUBECONFIG",
    "registrar_dir": "DRASIM_REGISTRAR_DIR",
    "plugins_dir": "DRASIM_PLUGINS_DIR",
    "plugin_dir": "DRASIM_PLUGIN_DIR",
    "cdi_dir": "DRASIM_CDI_DIR",
    "state_dir": "DRASIM_STATE_DIR",
    "driver_name": "DRASIM_DRIVER_NAME",
}


class DriverProcessError(DrasimError):
    """The driver process could not be started or died unexpectedly."""


def render_command(template: str | Sequence[str], values: Mapping[str, str]) -> list[str]:
    """Split ``template`` (shell words, or a list) and fill in the placeholders.

    An unknown ``{name}`` is an error that lists the valid placeholders; ``{{`` and
    ``}}`` stand for literal braces.
    """
    words = shlex.split(template) if isinstance(template, str) else list(template)
    if not words:
        msg = "driver command is empty"
        raise ConfigError(msg)
    rendered = []
    for word in words:
        try:
            rendered.append(word.format_map(dict(values)))
        except KeyError as err:
            valid = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            msg = (
                f"driver command: unknown placeholder {{{err.args[0]}}} in {word!r}. "
                f"Valid placeholders: {valid}"
            )
            raise ConfigError(msg) from None
        except (ValueError, IndexError) as err:
            msg = f"driver command: bad placeholder syntax in {word!r}: {err}"
            raise ConfigError(msg) from None
    return rendered


@dataclass
class DriverProcess:
    """One driver process: start, stop (SIGTERM), kill (SIGKILL), restart, output capture."""

    template: str | Sequence[str]
    values: Mapping[str, str]
    logs_dir: Path
    extra_env: Mapping[str, str] = field(default_factory=dict)
    on_event: Callable[[str, dict[str, object]], None] | None = None
    stop_grace: float = 10.0
    _proc: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _starts: int = field(default=0, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def argv(self) -> list[str]:
        """The rendered command line."""
        return render_command(self.template, self.values)

    @property
    def pid(self) -> int | None:
        """The process id while running."""
        return self._proc.pid if self._proc is not None else None

    @property
    def starts(self) -> int:
        """How many times the process was started (each run has its own log files)."""
        return self._starts

    def run_output(self, run: int, limit: int = 4000) -> tuple[str, str]:
        """The (stdout, stderr) tails of run number ``run`` (1-based)."""
        out = self.logs_dir / f"driver-{run}.stdout"
        err = self.logs_dir / f"driver-{run}.stderr"
        return self.tail(out, limit), self.tail(err, limit)

    @property
    def stdout_path(self) -> Path:
        """Where the current run's standard output goes."""
        return self.logs_dir / f"driver-{self._starts}.stdout"

    @property
    def stderr_path(self) -> Path:
        """Where the current run's standard error goes."""
        return self.logs_dir / f"driver-{self._starts}.stderr"

    def environment(self) -> dict[str, str]:
        """The environment the driver gets: ours plus the placeholder values."""
        env = dict(os.environ)
        for key, name in _ENV_NAMES.items():
            if key in self.values:
                env[name] = self.values[key]
        env.update(self.extra_env)
        return env

    def start(self) -> None:
        """Start the process (no-op if it is running)."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return
            argv = self.argv
            self._starts += 1
            self.logs_dir.mkdir(parents=True, exist_ok=True)
            with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
                try:
                    self._proc = reaper.spawn(
                        argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=self.environment()
                    )
                except OSError as error:
                    msg = f"cannot start driver command {shlex.join(argv)}: {error.strerror or error}"
                    raise DriverProcessError(msg) from None
            self._emit("started", pid=self._proc.pid, argv=argv)

    def running(self) -> bool:
        """Whether the process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def returncode(self) -> int | None:
        """The exit status once it ended."""
        return None if self._proc is None else self._proc.poll()

    def stop(self) -> int | None:
        """SIGTERM, wait up to ``stop_grace`` seconds, then SIGKILL. Returns the exit status."""
        return self._end(signal.SIGTERM, "stopped")

    def kill(self) -> int | None:
        """SIGKILL at once (the process gets no chance to clean its sockets)."""
        return self._end(signal.SIGKILL, "killed")

    def crash(self) -> int | None:
        """SIGKILL at once and wait, as if the process died on its own: unlike :meth:`kill` the
        exit status stays (:meth:`returncode`) until the next start, and no event is emitted."""
        with self._lock:
            proc = self._proc
            if proc is None or proc.poll() is not None:
                return None if proc is None else proc.returncode
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return proc.returncode

    def restart(self) -> None:
        """Stop gracefully and start again."""
        self.stop()
        self.start()

    def _end(self, sig: signal.Signals, what: str) -> int | None:
        with self._lock:
            proc = self._proc
            if proc is None:
                return None
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, sig)
                try:
                    proc.wait(timeout=self.stop_grace)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            reaper.untrack_process(proc)
            self._proc = None
        self._emit(what, pid=proc.pid, returncode=proc.returncode, stderr=self.tail(self.stderr_path))
        return proc.returncode

    def wait_until(self, predicate: Callable[[], bool], *, timeout: float, what: str) -> None:
        """Wait for ``predicate`` while checking that the process stays alive.

        Raises :class:`DriverProcessError` with the tail of the driver's stderr if the
        process exits first or the timeout passes.
        """
        deadline = time.monotonic() + timeout
        event = threading.Event()
        while not predicate():
            if not self.running():
                code = self.returncode()
                msg = (
                    f"driver exited with status {code} before {what}; "
                    f"stderr:\n{self.tail(self.stderr_path) or '(empty)'}"
                )
                raise DriverProcessError(msg)
            if time.monotonic() >= deadline:
                msg = (
                    f"timed out after {timeout:g}s waiting for {what}; "
                    f"driver stderr:\n{self.tail(self.stderr_path) or '(empty)'}"
                )
                raise DriverProcessError(msg)
            event.wait(0.02)

    @staticmethod
    def tail(path: Path, limit: int = 4000) -> str:
        """The last ``limit`` bytes of a log file, from the start of a line ('' if missing)."""
        try:
            data = path.read_bytes()
        except OSError:
            return ""
        if len(data) > limit:
            data = data[-limit:]
            cut = data.find(b"\n")
            if 0 <= cut < len(data) - 1:
                data = data[cut + 1 :]
        return data.decode("utf-8", "replace")

    def _emit(self, what: str, **fields: object) -> None:
        if self.on_event is not None:
            self.on_event(what, dict(fields))
