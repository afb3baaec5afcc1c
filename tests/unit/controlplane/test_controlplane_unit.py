"""drasim.controlplane without Go: the state file, finding and stopping only our own process."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from drasim import controlplane
from drasim.errors import ConfigError


def _state(directory: Path, pid: int, binary: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    state = {
        "dir": str(directory),
        "pid": pid,
        "server": "https://127.0.0.1:1",
        "port": 1,
        "etcd": "http://127.0.0.1:2",
        "kubeconfigs": {"admin": str(directory / "admin.kubeconfig")},
        "binary": binary,
    }
    (directory / controlplane.STATE_FILE).write_text(json.dumps(state))


def test_a_state_file_naming_another_process_is_not_a_running_control_plane(tmp_path: Path) -> None:
    # Our own pid: alive, but not the control-plane binary serving this directory.
    _state(tmp_path / "cp", os.getpid(), "/cache/drasim-control-plane-0123456789abcdef")
    assert controlplane.find(tmp_path / "cp") is None
    assert controlplane.stop(tmp_path / "cp") is False  # nothing signalled
    assert not (tmp_path / "cp").exists()  # the dead one's directory is removed


def test_our_process_is_recognised_by_binary_and_directory(tmp_path: Path) -> None:
    directory = (tmp_path / "cp").resolve()
    fake = tmp_path / "drasim-control-plane-x"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(0o755)
    code = "import time; print('up', flush=True); time.sleep(60)"
    child = subprocess.Popen(
        [sys.executable, "-c", code, "--dir", str(directory)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "up\n"  # running its own program (exec is over)
        # The process runs python, not the binary the state names: not ours.
        assert not controlplane._is_ours(child.pid, fake, directory)
        assert controlplane._is_ours(child.pid, Path(sys.executable), directory)
        assert not controlplane._is_ours(child.pid, Path(sys.executable), tmp_path / "other")
    finally:
        child.kill()
        child.wait()


def test_garbage_state_is_no_control_plane(tmp_path: Path) -> None:
    (tmp_path / controlplane.STATE_FILE).write_text("{not json")
    assert controlplane.find(tmp_path) is None


def test_start_refuses_a_foreign_directory_before_building(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a control plane's data directory"):
        controlplane.start(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_shared_holders_are_counted(tmp_path: Path) -> None:
    assert controlplane._users(tmp_path, add="gw0") == ["gw0"]
    assert controlplane._users(tmp_path, add="gw1") == ["gw0", "gw1"]
    assert controlplane._users(tmp_path, remove="gw0") == ["gw1"]
    assert controlplane._users(tmp_path, remove="gw1") == []


def test_a_tied_child_dies_with_its_parent_even_on_sigkill(tmp_path: Path) -> None:
    """What exit_with_caller does: the kernel signals the child when its parent dies."""
    script = (
        "import subprocess, sys\n"
        "from drasim import controlplane\n"
        "child = subprocess.Popen(['sleep', '60'], preexec_fn=controlplane._exit_with_parent,"
        " start_new_session=True)\n"
        "print(child.pid, flush=True)\n"
        "import time; time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    handle = os.pidfd_open(pid)
    try:
        parent.kill()
        parent.wait()
        ready, _, _ = select.select([handle], [], [], 10)
        assert ready, "the tied child outlived its parent"
    finally:
        os.close(handle)
