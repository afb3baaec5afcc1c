"""Interrupt ``drasim run`` with a driver process running and check what is left behind.

Shared by tests/e2e/test_signals.py (the fake plugin as the driver process) and
tests/real_driver/ (each real driver).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HOLD_SCENARIO = Path(__file__).parent / "scenarios" / "hold-for-signals.yaml"
REPO = Path(__file__).resolve().parents[2]


@contextmanager
def short_base() -> Iterator[Path]:
    """A fresh base directory short enough for ``--workspace-dir`` (at most 10 characters)."""
    for _ in range(100):
        path = Path("/tmp/d" + secrets.token_hex(2))
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)
        return
    raise RuntimeError("no free /tmp/dXXXX name")


def _alive(pid: int) -> bool:
    """Running (not gone and not a zombie waiting for a reaper)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def processes_mentioning(text: str) -> list[int]:
    """Pids of live processes whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def wait_for(predicate: object, *, timeout: float, what: str) -> None:
    """Wait (on an event with a deadline, polling the file system) until ``predicate()`` holds."""
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        tick.wait(0.02)


def _env() -> dict[str, str]:
    """Our environment, with this checkout first on the Python path (drasim and fake_plugins)."""
    path = [str(REPO), os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))


@dataclass
class HeldRun:
    """A ``drasim run`` subprocess whose driver process has registered."""

    proc: subprocess.Popen[bytes]
    workspace: Path
    driver_pids: list[int]
    log: Path


def start_held_run(
    base: Path, driver_cmd: str, log: Path, *extra: str, scenario: Path = HOLD_SCENARIO
) -> HeldRun:
    """Start ``drasim run`` on a hold scenario and wait until its driver registered."""
    env = _env()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "drasim", "run", str(scenario), "--driver-cmd", driver_cmd,
             "--workspace-dir", str(base), *extra],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=REPO,
        )  # fmt: skip

    def registered() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"drasim run ended early ({proc.returncode}):\n{log.read_text()}")
        return any(
            root.is_dir() and any((root / "kubelet" / "plugins_registry").glob("*.sock"))
            for root in base.glob("drasim-*")
        )

    wait_for(registered, timeout=60, what="the driver to register")
    (workspace,) = [root for root in base.glob("drasim-*") if root.is_dir()]
    pids = processes_mentioning(str(workspace))
    assert pids, f"no driver process mentions {workspace}"
    return HeldRun(proc, workspace, pids, log)


def interrupt_and_check(run: HeldRun, sig: signal.Signals, base: Path) -> None:
    """Send ``sig`` to drasim and check that no driver process, socket or workspace remains.

    SIGINT and SIGTERM: drasim cleans up and exits with 128 + the signal number. SIGKILL:
    the driver dies with drasim (death signal); the workspace is swept by the next run
    that uses the same base directory. Whatever the outcome, no process is left running.
    """
    try:
        _interrupt_and_check(run, sig, base)
    finally:
        for pid in [run.proc.pid, *run.driver_pids]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _interrupt_and_check(run: HeldRun, sig: signal.Signals, base: Path) -> None:
    os.kill(run.proc.pid, sig)
    try:
        code = run.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        run.proc.kill()
        raise AssertionError(f"drasim did not exit after {sig.name}:\n{run.log.read_text()}") from None
    output = run.log.read_text()
    if sig == signal.SIGKILL:
        assert code == -signal.SIGKILL
    else:
        assert code == 128 + sig, output
        assert f"interrupted ({sig.name})" in output, output
    wait_for(
        lambda: not any(_alive(pid) for pid in run.driver_pids),
        timeout=15,
        what=f"driver processes {run.driver_pids} to end",
    )
    assert processes_mentioning(str(run.workspace)) == []
    if sig == signal.SIGKILL:
        # Nothing ran in drasim: the tree is still there, owned by a dead process...
        assert (run.workspace / ".drasim-owner").read_text().split()[0] == str(run.proc.pid)
        # ... and the next run in the same base directory removes it.
        env = _env()
        quick = REPO / "scenarios" / "conformance" / "registration.yaml"
        swept = subprocess.run(
            [sys.executable, "-m", "drasim", "run", str(quick), "--workspace-dir", str(base)],
            capture_output=True,
            env=env,
            cwd=REPO,
            timeout=120,
            check=False,
        )
        assert swept.returncode == 0, swept.stdout.decode() + swept.stderr.decode()
    assert not run.workspace.exists(), sorted(str(p) for p in run.workspace.rglob("*"))
    assert list(base.glob("drasim-*")) == []
