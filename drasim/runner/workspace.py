"""Per-scenario directories, short enough for unix socket paths.

Linux limits a unix socket path (``sun_path``) to 107 usable bytes, and pytest's
``tmp_path`` or a deep checkout easily exceeds that. Every scenario therefore gets
a fresh ``/tmp/drasim-XXXXXX`` tree laid out like a node::

    <root>/kubelet/                  kubelet root dir (dra_manager_state lives here)
    <root>/kubelet/plugins_registry/ registration sockets (the plugin watcher's directory)
    <root>/kubelet/plugins/          per-driver plugin directories (dra.sock)
    <root>/cdi/                      CDI spec directory (a tmpfs on a real node)
    <root>/driver-state/             the driver's own state (survives a node reboot)
    <root>/logs/                     driver stdout/stderr, journals
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from drasim.errors import ConfigError

# sun_path is 108 bytes including the terminating NUL.
MAX_SOCKET_PATH = 107
# Room we keep for socket file names such as "<driver>-reg.sock".
_SOCKET_NAME_BUDGET = 60


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


def create_workspace(base: Path | None = None, prefix: str = "drasim-") -> Workspace:
    """Make a fresh workspace under ``base`` (default ``/tmp``) and check socket path room."""
    parent = base if base is not None else Path("/tmp")
    if not parent.is_dir():
        parent = Path(tempfile.gettempdir())
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    ws = Workspace(root)
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
