"""drasim.runner.reaper: reaping on interrupt, the death signal, sweeping workspaces of dead runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from drasim.runner import reaper


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _tree(base: Path, name: str, owner: str | None) -> Path:
    root = base / name
    (root / "kubelet").mkdir(parents=True)
    if owner is not None:
        (root / reaper.OWNER_FILE).write_text(owner + "\n")
    return root


def test_sweep_removes_only_trees_whose_owner_is_gone(tmp_path: Path) -> None:
    reaper.forget_sweeps()
    dead = _tree(tmp_path, "drasim-dead", f"{_dead_pid()} 123")
    mine = _tree(tmp_path, "drasim-mine", reaper.owner_tag())
    reused = _tree(tmp_path, "drasim-reused", f"{os.getpid()} 1")  # our pid, another start time
    kept = _tree(tmp_path, "drasim-kept", None)  # --keep-workspace trees have no owner file
    other = _tree(tmp_path, "other-dead", f"{_dead_pid()} 123")
    assert sorted(reaper.sweep_stale(tmp_path)) == sorted([dead, reused])
    assert not dead.exists()
    assert not reused.exists()
    assert mine.exists()
    assert kept.exists()
    assert other.exists()
    # once per directory and process
    again = _tree(tmp_path, "drasim-again", f"{_dead_pid()} 123")
    assert reaper.sweep_stale(tmp_path) == []
    assert again.exists()
    reaper.forget_sweeps()


def test_reap_kills_tracked_process_groups_and_removes_tracked_workspaces(tmp_path: Path) -> None:
    proc = reaper.spawn([sys.executable, "-c", "import time; time.sleep(60)"])
    root = _tree(tmp_path, "drasim-live", reaper.owner_tag())
    reaper.track_workspace(root)
    assert proc.pid in reaper.live()[0]
    reaper.reap()
    assert proc.wait(timeout=10) == -9
    assert not root.exists()
    assert reaper.live() == ([], [])


def test_spawned_process_arms_its_death_signal() -> None:
    # /proc/<pid>/status has no PDEATHSIG field; ask the process itself (prctl PR_GET_PDEATHSIG).
    get = "ctypes.CDLL(None).prctl(2, ctypes.byref(v), 0, 0, 0)"
    code = f"import ctypes; v = ctypes.c_int(); {get}; print(v.value)"
    proc = reaper.spawn([sys.executable, "-c", code], stdout=subprocess.PIPE)
    out, _ = proc.communicate(timeout=30)
    reaper.untrack_process(proc)
    if sys.platform.startswith("linux"):
        assert int(out) == 9


def test_spawn_of_a_missing_program_raises_like_popen() -> None:
    with pytest.raises(FileNotFoundError):
        reaper.spawn(["/nonexistent/driver", "--x"])
    with pytest.raises(FileNotFoundError):
        reaper.spawn(["no-such-program-drasim"])
    assert reaper.live()[0] == []
