"""Nothing outlives a drasim run: driver processes and workspaces, also when the run is killed.

Three ways a run can end early, and what happens to what it started:

* SIGINT (Ctrl-C) or SIGTERM to ``drasim run``: the CLI turns both into
  ``KeyboardInterrupt`` and calls :func:`reap`, which SIGKILLs the process group of
  every driver process still running and removes every workspace still present.
  The same happens at interpreter exit (``atexit``), e.g. under pytest.
* SIGKILL of drasim (or any death without handlers): every driver process execs with
  ``PR_SET_PDEATHSIG`` = SIGKILL armed (Linux), so the kernel kills it when drasim dies.
  The death signal belongs to the *thread* that forked the child, so every driver is
  forked by one long-lived spawner thread (:func:`spawn`), never by a scenario thread
  that may end while its driver should live on. Only the driver process itself gets
  it: a driver that forks helpers of its own must end them when it gets SIGKILL'd
  (its process group is also SIGKILL'd on SIGINT/SIGTERM). The workspace cannot be removed by a
  dead process: each non-kept workspace holds an owner file (``.drasim-owner``: pid and
  process start time), and the next workspace created in the same base directory
  removes trees whose owner is gone (:func:`sweep_stale`).

Kept workspaces (``--keep-workspace``) get no owner file and are never swept.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

OWNER_FILE = ".drasim-owner"

_lock = threading.Lock()
_processes: dict[int, subprocess.Popen[bytes]] = {}
_workspaces: set[Path] = set()
_swept: set[Path] = set()


# ------------------------------------------------------------------ tracking and reaping


def track_process(proc: subprocess.Popen[bytes]) -> None:
    """Remember a driver process (leader of its own process group) until it is ended."""
    with _lock:
        _processes[proc.pid] = proc


def untrack_process(proc: subprocess.Popen[bytes]) -> None:
    """Forget a driver process that was ended and waited for."""
    with _lock:
        _processes.pop(proc.pid, None)


def track_workspace(root: Path) -> None:
    """Remember a workspace that must be removed if the run is interrupted."""
    with _lock:
        _workspaces.add(root)


def untrack_workspace(root: Path) -> None:
    """Forget a workspace that was removed (or is to be kept)."""
    with _lock:
        _workspaces.discard(root)


def live() -> tuple[list[int], list[Path]]:
    """The pids of tracked driver processes and the tracked workspaces (for tests)."""
    with _lock:
        return sorted(_processes), sorted(_workspaces)


def reap() -> None:
    """SIGKILL every tracked driver process group, wait for it, remove every tracked workspace.

    Safe to call more than once and from a signal's ``KeyboardInterrupt`` handler; never raises.
    """
    with _lock:
        processes = list(_processes.values())
        workspaces = list(_workspaces)
        _processes.clear()
        _workspaces.clear()
    for proc in processes:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            proc.wait(timeout=10)
    for root in workspaces:
        shutil.rmtree(root, ignore_errors=True)


atexit.register(reap)


# ------------------------------------------------------------------ spawning with a death signal

# Run between fork and the driver's exec: arm the death signal, give up if drasim is
# already gone, then become the driver (same pid). A separate tiny interpreter (-S -E:
# no site, no PYTHON* variables) and not a preexec_fn, because a preexec_fn makes
# subprocess use fork() instead of vfork(), and gRPC's fork handlers then break the
# child (it aborted in gRPC's epoll loop before reaching exec).
_EXEC_WITH_DEATHSIG = """
import ctypes, os, sys
ctypes.CDLL(None).prctl(1, int(sys.argv[1]), 0, 0, 0)
if os.getppid() != int(sys.argv[2]):
    os._exit(1)
try:
    os.execvp(sys.argv[3], sys.argv[3:])
except OSError as err:
    sys.stderr.write(f"drasim: cannot run {sys.argv[3]}: {err.strerror or err}\\n")
    os._exit(127)
"""


def _with_deathsig(argv: list[str], parent: int) -> list[str]:
    """``argv`` wrapped so the process gets SIGKILL when ``parent`` dies (unchanged off Linux)."""
    if not sys.platform.startswith("linux"):
        return argv
    wrapper = [sys.executable, "-S", "-E", "-c", _EXEC_WITH_DEATHSIG, str(int(signal.SIGKILL)), str(parent)]
    return [*wrapper, *argv]


def _check_executable(argv: list[str], env: Any) -> None:
    """Raise ``FileNotFoundError``/``PermissionError`` as Popen would for a command it cannot run."""
    path = (env or os.environ).get("PATH", os.defpath)
    program = argv[0]
    found = program if os.sep in program else shutil.which(program, path=path)
    if found is None or not os.path.exists(found):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)


class _Spawner:
    """One daemon thread that forks every driver process (the death signal follows the thread)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def call(self, fn: Callable[[], Any]) -> Any:
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="drasim-spawner", daemon=True)
                self._thread.start()
        if threading.current_thread() is self._thread:
            return fn()
        future: Future[Any] = Future()
        self._queue.put((fn, future))
        return future.result()

    def _serve(self) -> None:
        while True:
            fn, future = self._queue.get()
            try:
                future.set_result(fn())
            except BaseException as err:  # handed to the caller
                future.set_exception(err)


_spawner = _Spawner()


def spawn(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv, start_new_session=True, **kwargs)`` that dies with drasim.

    The process is forked by the spawner thread and execs ``argv`` with
    ``PR_SET_PDEATHSIG`` armed; it is tracked for :func:`reap` until :func:`untrack_process`.
    A command that cannot be run raises ``OSError`` here, as Popen would.
    """
    _check_executable(argv, kwargs.get("env"))
    wrapped = _with_deathsig(argv, os.getpid())

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(wrapped, start_new_session=True, **kwargs)

    proc: subprocess.Popen[bytes] = _spawner.call(start)
    track_process(proc)
    return proc


# ------------------------------------------------------------------ workspaces of dead runs


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks (field 22 of /proc/<pid>/stat), None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]


def owner_tag() -> str:
    """``<pid> <start time>`` of this process, as written to the owner file."""
    pid = os.getpid()
    return f"{pid} {_start_time(pid) or '?'}"


def write_owner(root: Path) -> None:
    """Mark ``root`` as owned by this process (so a later run can sweep it if we die)."""
    (root / OWNER_FILE).write_text(owner_tag() + "\n")


def _owner_alive(tag: str) -> bool:
    parts = tag.split()
    if len(parts) != 2 or not parts[0].isdigit():
        return True  # not ours to judge
    pid, started = int(parts[0]), parts[1]
    now = _start_time(pid)
    if now is None:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return started in ("?", now)


def sweep_stale(parent: Path, prefix: str = "drasim-") -> list[Path]:
    """Remove ``<parent>/<prefix>*`` trees of this user whose owner process is gone.

    Runs once per parent directory and process. Trees without an owner file (kept
    workspaces, other tools) and trees of other users are left alone. Returns what it removed.
    """
    parent = Path(parent)
    with _lock:
        if parent in _swept:
            return []
        _swept.add(parent)
    removed: list[Path] = []
    try:
        candidates = [p for p in parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return removed
    uid = os.getuid()
    for root in candidates:
        try:
            if root.is_symlink() or not root.is_dir() or root.stat().st_uid != uid:
                continue
            tag = (root / OWNER_FILE).read_text().strip()
        except OSError:
            continue
        if not _owner_alive(tag):
            shutil.rmtree(root, ignore_errors=True)
            removed.append(root)
    return removed


def forget_sweeps() -> None:
    """Let :func:`sweep_stale` run again for every directory (for tests)."""
    with _lock:
        _swept.clear()
