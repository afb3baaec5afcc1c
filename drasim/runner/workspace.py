"""Per-scenario directories, short enough for unix socket paths.

Linux limits a unix socket path (``sun_path``) to 107 usable bytes, and pytest's
``tmp_path`` or a deep checkout easily exceeds that. Every scenario therefore gets
a fresh, short tree laid out like a node: ``/dev/shm/drasim-XXXX`` when ``/dev/shm``
is a writable directory with room to spare (a tmpfs on Linux, so the many small
checkpoint, CDI and state-file writes of a run never wait for a disk), otherwise, or
when the tree is to be kept for inspection, ``/tmp/drasim-XXXXXXXX``; an explicit base
directory (``--workspace-dir``) overrides both::

    <root>/kubelet/                  kubelet root dir (dra_manager_state lives here)
    <root>/kubelet/plugins_registry/ registration sockets (the plugin watcher's directory)
    <root>/kubelet/plugins/          per-driver plugin directories (dra.sock)
    <root>/cdi/                      CDI spec directory (a tmpfs on a real node)
    <root>/driver-state/             the driver's own state (survives a node reboot)
    <root>/logs/                     driver stdout/stderr, journals
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import string
import tempfile
from dataclasses import dataclass
from pathlib import Path

from drasim.errors import ConfigError
from drasim.runner import reaper

# sun_path is 108 bytes including the terminating NUL.
MAX_SOCKET_PATH = 107
# Room we keep for socket file names such as "<driver>-reg.sock".
_SOCKET_NAME_BUDGET = 60

#: The memory-backed default base directory, and the free space it must have to be used.
SHM_DIR = Path("/dev/shm")
SHM_MIN_FREE = 256 * 1024 * 1024


@dataclass(frozen=True)
class Workspace:
    """The directory tree of one simulated node."""

    root: Path

    @property
    def kubelet_dir(self) -> Path:
        """The kubelet root directory."""
        return self.root / "kubelet"

    @property
    def registry_dir(self) -> Path:
        """Where plugins put their registration sockets."""
        return self.kubelet_dir / "plugins_registry"

    @property
    def plugins_dir(self) -> Path:
        """Parent of every driver's plugin directory."""
        return self.kubelet_dir / "plugins"

    @property
    def cdi_dir(self) -> Path:
        """The CDI spec directory."""
        return self.root / "cdi"

    @property
    def driver_state_dir(self) -> Path:
        """The driver's own persistent state."""
        return self.root / "driver-state"

    @property
    def logs_dir(self) -> Path:
        """Driver output and journals."""
        return self.root / "logs"

    @property
    def checkpoint_path(self) -> Path:
        """The kubelet DRA checkpoint file."""
        return self.kubelet_dir / "dra_manager_state"

    def plugin_dir(self, driver_name: str) -> Path:
        """The plugin directory of one driver (``plugins/<driver>``)."""
        return self.plugins_dir / driver_name

    def remove(self) -> None:
        """Delete the whole tree."""
        shutil.rmtree(self.root, ignore_errors=True)
        reaper.untrack_workspace(self.root)


def shm_usable(path: Path | None = None, min_free: int = SHM_MIN_FREE) -> bool:
    """Whether ``path`` (default :data:`SHM_DIR`) is a writable directory with ``min_free`` bytes free."""
    path = SHM_DIR if path is None else path
    try:
        if not path.is_dir() or not os.access(path, os.W_OK | os.X_OK):
            return False
        stats = os.statvfs(path)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize >= min_free


def default_base(*, keep: bool = False) -> Path:
    """The base directory of a workspace nobody placed explicitly."""
    if not keep and shm_usable():
        return SHM_DIR
    tmp = Path("/tmp")
    return tmp if tmp.is_dir() else Path(tempfile.gettempdir())


_NAME_CHARS = string.ascii_lowercase + string.digits + "_"
_MIN_RANDOM = 4


def max_base_length(prefix: str = "drasim-") -> int:
    """The longest base directory path a workspace fits under (the socket budget kept)."""
    registry = len("/kubelet/plugins_registry")
    return MAX_SOCKET_PATH - _SOCKET_NAME_BUDGET - registry - len("/" + prefix) - _MIN_RANDOM


def check_base(base: Path, prefix: str = "drasim-") -> None:
    """Raise :class:`ConfigError` unless ``base`` is an existing directory short enough for sockets."""
    if not base.is_dir():
        raise ConfigError(f"workspace directory {base}: not an existing directory")
    limit = max_base_length(prefix)
    if len(str(base)) > limit:
        msg = (
            f"workspace directory {base} is {len(str(base))} characters long; unix socket paths "
            f"under it would exceed {MAX_SOCKET_PATH} bytes: choose one of at most {limit} "
            "characters, such as /tmp or /dev/shm"
        )
        raise ConfigError(msg)


def _make_root(parent: Path, prefix: str) -> Path:
    """A new private directory ``<parent>/<prefix><random>``.

    The random part is as long as :func:`tempfile.mkdtemp`'s (8) under ``/tmp`` and
    shorter under a longer parent, so that every tree's paths are no longer than
    ``/tmp/drasim-XXXXXXXX/...``: the socket-name budget is the same wherever it is.
    """
    length = max(_MIN_RANDOM, 8 - max(0, len(str(parent)) - len("/tmp")))
    for _ in range(1000):
        candidate = parent / (prefix + "".join(secrets.choice(_NAME_CHARS) for _ in range(length)))
        try:
            candidate.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(errno.EEXIST, "no free workspace name", str(parent))


def create_workspace(base: Path | None = None, prefix: str = "drasim-", *, keep: bool = False) -> Workspace:
    """Make a fresh workspace under ``base`` and check socket path room.

    Without ``base`` the tree goes where :func:`default_base` says (``keep``: it outlives
    the run, so not into memory). An explicit ``base`` must be an existing directory.
    """
    parent = default_base(keep=keep) if base is None else Path(base)
    if not parent.is_dir():
        raise ConfigError(f"workspace directory {parent}: not an existing directory")
    reaper.sweep_stale(parent, prefix)
    try:
        root = _make_root(parent, prefix)
    except OSError as err:
        raise ConfigError(
            f"workspace directory {parent}: cannot create a directory in it: {err.strerror or err}"
        ) from None
    ws = Workspace(root)
    if not keep:
        # Removed by reaper.reap() on an interrupt, or by the next run's sweep if we are killed.
        reaper.track_workspace(root)
        reaper.write_owner(root)
    longest = max(len(str(ws.registry_dir)), len(str(ws.plugins_dir)) + 1)
    if longest + _SOCKET_NAME_BUDGET > MAX_SOCKET_PATH:
        ws.remove()
        msg = (
            f"workspace directory {root} is too long for unix sockets: socket paths must stay under "
            f"{MAX_SOCKET_PATH} bytes; choose a shorter base directory"
        )
        raise ConfigError(msg)
    for path in (ws.registry_dir, ws.plugins_dir, ws.cdi_dir, ws.driver_state_dir, ws.logs_dir):
        path.mkdir(parents=True, exist_ok=True)
    ws.registry_dir.chmod(0o755)
    return ws
