"""The driver process launcher: placeholders, environment, stop/kill, early-exit errors."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from drasim.errors import ConfigError
from drasim.runner.process import DriverProcess, DriverProcessError, render_command
from drasim.runner.workspace import MAX_SOCKET_PATH, create_workspace

# A stand-in driver: binds a unix socket named after the driver in the registrar dir,
# writes its environment, then serves until SIGTERM (which removes the socket).
FAKE = r"""
import os, signal, socket, sys, json, threading
reg, name = sys.argv[1], sys.argv[2]
path = os.path.join(reg, name + "-reg.sock")
with open(os.path.join(reg, "..", "env.json"), "w") as f:
    json.dump({k: v for k, v in os.environ.items() if k in ("NODE_NAME", "KUBECONFIG", "DRASIM_CDI_DIR")}, f)
s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(1)
def term(*_):
    os.unlink(path); sys.exit(0)
signal.signal(signal.SIGTERM, term)
print("serving", flush=True)
threading.Event().wait()
"""


def _values(ws_root: Path) -> dict[str, str]:
    return {
        "node": "node-1",
        "kubeconfig": str(ws_root / "kubeconfig"),
        "registrar_dir": str(ws_root / "kubelet" / "plugins_registry"),
        "plugins_dir": str(ws_root / "kubelet" / "plugins"),
        "plugin_dir": str(ws_root / "kubelet" / "plugins" / "gpu.example.com"),
        "cdi_dir": str(ws_root / "cdi"),
        "state_dir": str(ws_root / "driver-state"),
        "driver_name": "gpu.example.com",
    }


def test_render_command_fills_placeholders() -> None:
    argv = render_command(
        "drv --node={node} --kubeconfig {kubeconfig} '{{literal}}'", {"node": "n1", "kubeconfig": "/k"}
    )
    assert argv == ["drv", "--node=n1", "--kubeconfig", "/k", "{literal}"]


def test_render_command_unknown_placeholder_names_valid_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown placeholder \{nod\}.*Valid placeholders: \{node\}"):
        render_command(["drv", "--node={nod}"], {"node": "n1"})


def test_render_command_empty() -> None:
    with pytest.raises(ConfigError, match="empty"):
        render_command("", {})


def test_workspace_layout_fits_socket_limit() -> None:
    ws = create_workspace()
    try:
        assert ws.registry_dir.is_dir()
        assert ws.cdi_dir.is_dir()
        sock = ws.registry_dir / ("x" * 40 + "-reg.sock")
        assert len(str(sock)) < MAX_SOCKET_PATH
    finally:
        ws.remove()
    assert not ws.root.exists()


def test_workspace_too_long_base_is_rejected(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 80)
    deep.mkdir()
    with pytest.raises(ConfigError, match="too long for unix sockets"):
        create_workspace(deep)


def test_start_wait_stop_kill() -> None:
    ws = create_workspace()
    events: list[tuple[str, dict[str, object]]] = []
    try:
        values = _values(ws.root)
        script = ws.root / "fake_driver.py"
        script.write_text(FAKE)
        proc = DriverProcess(
            [sys.executable, str(script), "{registrar_dir}", "{driver_name}"],
            values,
            ws.logs_dir,
            on_event=lambda what, f: events.append((what, f)),
        )
        sock = ws.registry_dir / "gpu.example.com-reg.sock"
        proc.start()
        proc.wait_until(sock.exists, timeout=20, what="the registration socket")
        env = (ws.root / "kubelet" / "env.json").read_text()
        assert '"NODE_NAME": "node-1"' in env
        assert str(ws.cdi_dir) in env
        assert proc.stop() == 0
        assert not sock.exists(), "SIGTERM lets the driver remove its socket"
        # SIGKILL leaves the socket behind, as a crashed driver does.
        proc.start()
        # The stand-in binds its socket before it prints, so wait for both: a kill between
        # the two would leave an empty log (seen once in CI).
        proc.wait_until(
            lambda: sock.exists() and DriverProcess.tail(proc.stdout_path).startswith("serving"),
            timeout=20,
            what="the registration socket and the driver's first output line",
        )
        assert proc.kill() == -9
        assert sock.exists()
        with socket.socket(socket.AF_UNIX) as client, pytest.raises(ConnectionRefusedError):
            client.connect(str(sock))
        assert [what for what, _ in events] == ["started", "stopped", "started", "killed"]
        assert DriverProcess.tail(proc.stdout_path).startswith("serving")
    finally:
        ws.remove()


def test_early_exit_reports_stderr() -> None:
    ws = create_workspace()
    try:
        proc = DriverProcess(
            [sys.executable, "-c", "import sys; sys.stderr.write('no GPU found\\n'); sys.exit(3)"],
            {},
            ws.logs_dir,
        )
        proc.start()
        with pytest.raises(DriverProcessError, match=r"exited with status 3 .*\n.*no GPU found"):
            proc.wait_until(lambda: False, timeout=20, what="registration")
    finally:
        ws.remove()


def test_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    proc = DriverProcess(["/nonexistent/driver", "--x"], {}, tmp_path)
    with pytest.raises(DriverProcessError, match="cannot start driver command /nonexistent/driver --x"):
        proc.start()
