"""`--fsync`: scenario runs skip fsync by default and make every write durable when asked.

fsync calls are counted by wrapping ``os.fsync``; the files themselves must be the same
either way (atomic replace through a temporary file), which the checkpoint and fake-driver
tests check elsewhere.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from drasim.checkpoint.codec import decode
from drasim.checkpoint.store import FileCheckpointStore
from drasim.cli import main
from drasim.fsutil import atomic_write_bytes
from drasim.state import ClaimInfoState

SCENARIO = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: fsync-round-trip, description: prepare and unprepare one claim}
spec:
  driver: {fake: {name: gpu.example.com, devices: 2}}
  claims: [{name: gpu}]
  steps:
    - startPod: {name: a, claims: [gpu]}
    - expectCdiSpecs: {count: 1}
    - deletePod: a
    - expectCheckpoint: {entries: 0}
"""


class FsyncCounter:
    """Records the path of every file or directory ``os.fsync`` is called on."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, fd: int) -> None:
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            path = "?"
        with self._lock:
            self.paths.append(path)
        _REAL_FSYNC(fd)


_REAL_FSYNC = os.fsync


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> FsyncCounter:
    counter = FsyncCounter()
    monkeypatch.setattr(os, "fsync", counter)
    return counter


def test_atomic_write_without_sync_does_not_fsync_but_replaces(tmp_path: Path, fsyncs: FsyncCounter) -> None:
    target = tmp_path / "d" / "f.json"
    atomic_write_bytes(target, b"one", durable=True, sync=False)
    atomic_write_bytes(target, b"two", durable=True, sync=False)
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.json"]  # no temp file left behind
    assert fsyncs.paths == []
    atomic_write_bytes(target, b"three", durable=True)
    assert target.read_bytes() == b"three"
    assert len(fsyncs.paths) == 2  # the file, then its directory


def test_checkpoint_store_fsync_switch(tmp_path: Path, fsyncs: FsyncCounter) -> None:
    entry = ClaimInfoState(claim_uid="uid-1", claim_name="c", namespace="default", pod_uids={"p"})
    quick = FileCheckpointStore(tmp_path / "quick" / "dra_manager_state", fsync=False)
    quick.store([entry])
    assert fsyncs.paths == []
    durable = FileCheckpointStore(tmp_path / "durable" / "dra_manager_state")
    durable.store([entry])
    assert len(fsyncs.paths) == 2  # temp file + directory, as before
    # Same bytes either way: only the durability differs.
    assert quick.path.read_bytes() == durable.path.read_bytes()
    assert [e.claim_uid for e in decode(quick.path.read_bytes()).entries] == ["uid-1"]


def _run(tmp_path: Path, *extra: str) -> int:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    return main(["run", str(path), *extra])


def test_scenario_run_skips_fsync_by_default(tmp_path: Path, fsyncs: FsyncCounter, capsys) -> None:
    code = _run(tmp_path)
    out = capsys.readouterr().out
    assert code == 0, out
    assert fsyncs.paths == []


def test_scenario_run_with_fsync_flag_syncs_checkpoint_and_driver_files(
    tmp_path: Path, fsyncs: FsyncCounter, capsys
) -> None:
    code = _run(tmp_path, "--fsync")
    out = capsys.readouterr().out
    assert code == 0, out
    names = [Path(p).name for p in fsyncs.paths]
    # The kubelet writes its checkpoint through a ".<random>" temp file; the fake driver
    # writes a prepared claim's file (prepared-claims/<uid>.json) and a CDI spec through
    # ".<name>.<random>" temp files, and fsyncs prepared-claims/ after them.
    assert any(n.startswith(".") and ".json." in n and not n.startswith(".gpu.") for n in names), names
    assert "prepared-claims" in names, names
    assert any(n.startswith(".gpu.example.com-") for n in names), names
    assert sum(1 for n in names if n.startswith(".") and "." not in n[1:]) >= 3, names  # kubelet writes
