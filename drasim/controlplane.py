"""A real control plane (kube-apiserver with an embedded etcd) on 127.0.0.1, from published modules.

drasim's Go program ``upstream/cmd/control-plane`` (built and cached by :mod:`drasim.gobuild`)
runs a real kube-apiserver, etcd, and the namespace and service account controllers. It writes
three kubeconfigs into its data directory and prints one JSON line when it serves. This module
starts it (in the background or held by the caller), finds it again through a state file in the
data directory, and stops it: SIGTERM, then SIGKILL if it does not end in time, and the data
directory removed unless it is to be kept.

Layout of a data directory ``DIR``:

* ``DIR/control-plane.json``: the ready line plus the binary (what ``status`` and ``stop`` read);
* ``DIR/control-plane.log``: the program's log (kube-apiserver's klog, etcd's errors);
* ``DIR/admin.kubeconfig``, ``DIR/driver.kubeconfig``, ``DIR/node.kubeconfig``;
* ``DIR/etcd``, ``DIR/certs``, ``DIR/tokens.csv``: the servers' own files.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drasim import gobuild
from drasim.errors import ConfigError, DrasimError
from drasim.fsutil import exclusive_lock

PROGRAM = "control-plane"
STATE_FILE = "control-plane.json"
LOG_FILE = "control-plane.log"
DEFAULT_DIR = Path(".drasim") / "control-plane"
START_TIMEOUT = 180.0  # a cold etcd and kube-apiserver on a busy 2-core machine
STOP_TIMEOUT = 60.0


class ControlPlaneError(DrasimError):
    """The control plane could not be started, found or stopped; the message says why."""


@dataclass(frozen=True)
class ControlPlane:
    """A running control plane, as its ready line describes it."""

    dir: Path
    pid: int
    server: str
    port: int
    etcd: str
    version: str
    kubeconfigs: dict[str, Path]
    identities: dict[str, str]
    binary: Path

    @property
    def admin_kubeconfig(self) -> Path:
        return self.kubeconfigs["admin"]

    @property
    def driver_kubeconfig(self) -> Path:
        return self.kubeconfigs["driver"]

    @property
    def node_kubeconfig(self) -> Path:
        return self.kubeconfigs["node"]

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> ControlPlane:
        return cls(
            dir=Path(state["dir"]),
            pid=int(state["pid"]),
            server=str(state["server"]),
            port=int(state["port"]),
            etcd=str(state["etcd"]),
            version=str(state.get("version", "")),
            kubeconfigs={k: Path(v) for k, v in state["kubeconfigs"].items()},
            identities={k: str(v) for k, v in state.get("identities", {}).items()},
            binary=Path(state["binary"]),
        )

    def alive(self) -> bool:
        """Whether the process the state file names is still this control plane."""
        return _is_ours(self.pid, self.binary, self.dir)


def start(
    directory: Path,
    *,
    release: str | None = None,
    node_name: str = "node-1",
    timeout: float = START_TIMEOUT,
    quiet: bool = True,
    exit_with_caller: bool = False,
) -> tuple[ControlPlane, subprocess.Popen[bytes]]:
    """Build (if needed) and start the control plane with its data in ``directory``.

    Returns once it serves. The process runs in a session of its own, so it outlives the caller
    unless stopped (:func:`stop`) or ``exit_with_caller`` (then the kernel sends it SIGTERM when
    the calling thread's process dies, even by SIGKILL); its log goes to
    ``directory/control-plane.log``.
    """
    directory = directory.resolve()
    existing = find(directory)
    if existing is not None:
        raise ControlPlaneError(
            f"a control plane already runs with data in {directory} (pid {existing.pid}, "
            f"{existing.server}); stop it first (drasim control-plane stop --dir {directory})"
        )
    if directory.exists() and any(directory.iterdir()):
        if not (directory / STATE_FILE).is_file():
            raise ConfigError(
                f"--dir {directory}: exists and is not a control plane's data directory; "
                "give a new or empty directory"
            )
        shutil.rmtree(directory)  # the leftovers of one that was killed
    binary = gobuild.build(PROGRAM, release, quiet=quiet)
    directory.mkdir(parents=True, exist_ok=True)
    log = open(directory / LOG_FILE, "ab")  # noqa: SIM115 - handed to the child, closed below
    try:
        process = subprocess.Popen(
            [str(binary), "--dir", str(directory), "--node-name", node_name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
            preexec_fn=_exit_with_parent if exit_with_caller else None,  # noqa: PLW1509
        )
    except OSError as err:
        raise ControlPlaneError(f"cannot run {binary}: {err.strerror}") from None
    finally:
        log.close()
    try:
        line = _ready_line(process, timeout)
    except ControlPlaneError:
        _terminate(process.pid, binary, directory, wait_child=process)
        shutil.rmtree(directory, ignore_errors=True)
        raise
    state = json.loads(line)
    state["binary"] = str(binary)
    tmp = directory / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, directory / STATE_FILE)
    return ControlPlane.from_state(state), process


def _exit_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent dies (Linux prctl PR_SET_PDEATHSIG)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)


def _ready_line(process: subprocess.Popen[bytes], timeout: float) -> str:
    """The program's one stdout line, or an error with the log's last lines."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    buf = b""
    fd = process.stdout.fileno()
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            tail = _log_tail(process)
            raise ControlPlaneError(f"the control plane did not serve within {timeout:.0f}s{tail}")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            code = process.wait()
            raise ControlPlaneError(f"the control plane exited ({code}) before serving{_log_tail(process)}")
        buf += chunk
    process.stdout.close()  # the program writes nothing else there
    return buf.split(b"\n", 1)[0].decode()


def _log_tail(process: subprocess.Popen[bytes]) -> str:
    args = process.args if isinstance(process.args, list) else []
    try:
        directory = Path(str(args[args.index("--dir") + 1]))
        lines = (directory / LOG_FILE).read_text(errors="replace").strip().splitlines()
    except (ValueError, IndexError, OSError):
        return ""
    return ":\n" + "\n".join(lines[-15:]) if lines else ""


def find(directory: Path) -> ControlPlane | None:
    """The control plane running with data in ``directory``, or None."""
    try:
        state = json.loads((directory / STATE_FILE).read_text(encoding="utf-8"))
        plane = ControlPlane.from_state(state)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return plane if plane.alive() else None


def stop(directory: Path, *, keep: bool = False, timeout: float = STOP_TIMEOUT) -> bool:
    """Stop the control plane with data in ``directory``; remove the directory unless ``keep``.

    Returns whether one was running. A directory left by one that was killed is removed too.
    """
    directory = directory.resolve()
    plane = find(directory)
    if plane is not None:
        _terminate(plane.pid, plane.binary, plane.dir, timeout=timeout)
        if plane.alive():
            raise ControlPlaneError(f"the control plane (pid {plane.pid}) did not stop, even on SIGKILL")
    if not keep and (directory / STATE_FILE).is_file():
        shutil.rmtree(directory, ignore_errors=True)
    elif keep:
        (directory / STATE_FILE).unlink(missing_ok=True)
    return plane is not None


def _terminate(
    pid: int,
    binary: Path,
    directory: Path,
    *,
    timeout: float = STOP_TIMEOUT,
    wait_child: subprocess.Popen[bytes] | None = None,
) -> None:
    """SIGTERM, wait for the exit (an event, not a poll), SIGKILL if it takes too long."""
    if not _is_ours(pid, binary, directory):
        return
    try:
        handle = os.pidfd_open(pid)
    except OSError:
        return  # already gone
    try:
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            if wait_child is not None:
                try:
                    wait_child.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
            ready, _, _ = select.select([handle], [], [], wait)
            if ready:
                break
    finally:
        os.close(handle)
    if wait_child is not None and wait_child.poll() is None:
        wait_child.wait(10)


def _is_ours(pid: int, binary: Path, directory: Path) -> bool:
    """Whether process ``pid`` is the control plane binary serving ``directory`` (never kill another)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    args = [a.decode(errors="replace") for a in raw.split(b"\0") if a]
    if not args or Path(args[0]).name != binary.name:
        return False
    if "--dir" not in args or args.index("--dir") + 1 >= len(args):
        return False
    return Path(args[args.index("--dir") + 1]) == directory


@contextmanager
def shared(
    root: Path, user: str, *, release: str | None = None, exit_with_caller: bool = False
) -> Iterator[ControlPlane]:
    """One control plane in ``root/data`` shared by every holder (pytest-xdist workers).

    The first holder starts it; each holder is listed in ``root/users``; the last one out stops
    it and removes its data. A file lock on ``root/lock`` orders them. ``exit_with_caller``
    (only for a single holder: another may outlive the starter) ties it to the starter's life.
    """
    root.mkdir(parents=True, exist_ok=True)
    data = (root / "data").resolve()
    process: subprocess.Popen[bytes] | None = None
    with exclusive_lock(root / "lock"):
        plane = find(data)
        if plane is None:
            plane, process = start(data, release=release, exit_with_caller=exit_with_caller)
        _users(root, add=user)
    try:
        yield plane
    finally:
        with exclusive_lock(root / "lock"):
            if not _users(root, remove=user):
                stop(data)
        if process is not None and process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(STOP_TIMEOUT)  # reap it (when this holder stopped it)


def _users(root: Path, *, add: str = "", remove: str = "") -> list[str]:
    path = root / "users"
    try:
        users = [u for u in path.read_text(encoding="utf-8").split() if u]
    except OSError:
        users = []
    if add:
        users.append(add)
    if remove in users:
        users.remove(remove)
    path.write_text("".join(f"{u}\n" for u in users), encoding="utf-8")
    return users
