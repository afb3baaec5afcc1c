"""Crash consistency of FileCheckpointStore.store: a kill at any write point leaves old or new.

The store replaces the whole ``dra_manager_state`` file on every write (temp file,
write, fsync, rename, fsync of the directory). These tests intercept the OS calls
such a write makes (``os.open``, ``os.write`` or a file object's ``write``/``flush``,
``os.fsync``, ``os.replace``/``os.rename``) and stop the write at step k, for every k:

* *kill*: the process dies at step k. The directory is snapshotted at that
  instant (the cleanup a dying process never runs cannot matter), and the target
  file in the snapshot must be the complete old or the complete new checkpoint. A
  kubelet restarted on that snapshot must load it and write again.
* *error*: the OS call fails at step k (EIO). The store raises CheckpointError (or
  succeeds when the failure came after the rename), the file is old or new, and no
  temp file is left behind.

A kill in the middle of ``write`` leaves a torn temp file (half the bytes).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from drasim.checkpoint import codec
from drasim.checkpoint import store as store_module
from drasim.checkpoint.store import FileCheckpointStore
from drasim.errors import CheckpointError
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

STATE_FILE = "dra_manager_state"


class Killed(BaseException):
    """Raised at the chosen step; BaseException so that ``except Exception`` cannot swallow it."""


def claim(index: int) -> ClaimInfoState:
    device = Device(
        "node-1",
        f"gpu-{index}",
        request_names=("gpu",),
        cdi_device_ids=(f"gpu.example.com/gpu=gpu-{index}",),
    )
    return ClaimInfoState(
        claim_uid=f"uid-{index}",
        claim_name=f"claim-{index}",
        namespace="default",
        pod_uids={f"pod-{index}"},
        driver_state={"gpu.example.com": DriverState(devices=[device])},
    )


OLD = [claim(0)]
NEW = [claim(0), claim(1), claim(2)]


class WritePoints:
    """Counts the OS-level write steps under ``directory`` and acts at step ``stop_at``."""

    def __init__(self, directory: Path, stop_at: int | None, mode: str) -> None:
        self.directory = directory
        self.stop_at = stop_at
        self.mode = mode
        self.steps: list[str] = []
        self.snapshot: dict[str, bytes] | None = None

    def step(self, name: str, before_raise: Callable[[], None] | None = None) -> None:
        self.steps.append(name)
        if self.stop_at is None or len(self.steps) != self.stop_at:
            return
        if self.mode == "kill":
            if before_raise is not None:
                before_raise()
            self.snapshot = read_dir(self.directory)
            raise Killed(name)
        raise OSError(errno.EIO, f"injected I/O error at {name}")

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: C901 - the crash points of one write, in order
        real_open, real_fsync, real_fdopen = os.open, os.fsync, os.fdopen
        real_write, real_writev, real_ftruncate = os.write, os.writev, os.ftruncate
        real_pwritev = os.pwritev
        real_replace, real_rename, real_link = os.replace, os.rename, os.link

        def mine(path: Any) -> bool:
            try:
                return Path(os.fsdecode(path)).resolve().parent == self.directory or (
                    Path(os.fsdecode(path)).resolve() == self.directory
                )
            except (TypeError, ValueError):
                return False

        def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if mine(path):
                self.step("create" if flags & os.O_CREAT else "open-dir")
            return real_open(path, flags, *args, **kwargs)

        def fake_write(fd: int, data: Any) -> int:
            if not mine(os.readlink(f"/proc/self/fd/{fd}")):
                return real_write(fd, data)
            payload = bytes(data)

            def torn() -> None:  # a kill mid-write: half of the bytes reached the file
                real_write(fd, payload[: len(payload) // 2])

            self.step("write", torn)
            return real_write(fd, data)

        def fake_writev(fd: int, buffers: Any) -> int:
            if not mine(os.readlink(f"/proc/self/fd/{fd}")):
                return real_writev(fd, buffers)
            payload = b"".join(bytes(b) for b in buffers)

            def torn() -> None:  # a kill mid-write: half of the bytes reached the file
                real_write(fd, payload[: len(payload) // 2])

            self.step("write", torn)
            return real_writev(fd, buffers)

        def fake_pwritev(fd: int, buffers: Any, offset: int, *args: Any) -> int:
            if not mine(os.readlink(f"/proc/self/fd/{fd}")):
                return real_pwritev(fd, buffers, offset, *args)
            payload = b"".join(bytes(b) for b in buffers)

            def torn() -> None:  # a kill mid-write: half of the bytes reached the file
                os.pwrite(fd, payload[: len(payload) // 2], offset)

            self.step("write", torn)
            return real_pwritev(fd, buffers, offset, *args)

        def fake_ftruncate(fd: int, length: int) -> None:
            if mine(os.readlink(f"/proc/self/fd/{fd}")):
                self.step("truncate")
            real_ftruncate(fd, length)

        def fake_link(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            if mine(dst):
                self.step("link")
            real_link(src, dst, *args, **kwargs)

        def fake_fsync(fd: Any) -> None:
            self.step("fsync")
            real_fsync(fd)

        def fake_fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
            return _WatchedFile(real_fdopen(fd, *args, **kwargs), self)

        def fake_replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            if mine(dst):
                self.step("rename")
            real_replace(src, dst, *args, **kwargs)

        def fake_rename(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            if mine(dst):
                self.step("rename")
            real_rename(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, "open", fake_open)
        monkeypatch.setattr(os, "fsync", fake_fsync)
        monkeypatch.setattr(os, "fdopen", fake_fdopen)
        monkeypatch.setattr(os, "write", fake_write)
        monkeypatch.setattr(os, "writev", fake_writev)
        monkeypatch.setattr(os, "pwritev", fake_pwritev)
        monkeypatch.setattr(os, "ftruncate", fake_ftruncate)
        monkeypatch.setattr(os, "link", fake_link)
        monkeypatch.setattr(os, "replace", fake_replace)
        monkeypatch.setattr(os, "rename", fake_rename)
        real_exchange = store_module._exchange

        def fake_exchange(first: str, second: str) -> None:  # renameat2(RENAME_EXCHANGE): the rename
            if mine(second):
                self.step("rename")
            real_exchange(first, second)

        monkeypatch.setattr(store_module, "_exchange", fake_exchange)


class _WatchedFile:
    """Wraps the temp file object: ``write`` and ``flush`` are write points."""

    def __init__(self, inner: io.BufferedWriter, points: WritePoints) -> None:
        self._inner = inner
        self._points = points

    def write(self, data: bytes) -> int:
        def torn() -> None:  # a kill mid-write: half of the bytes reached the file
            self._inner.write(data[: len(data) // 2])
            self._inner.flush()

        self._points.step("write", torn)
        return self._inner.write(data)

    def flush(self) -> None:
        self._points.step("flush")
        self._inner.flush()

    def __enter__(self) -> _WatchedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def read_dir(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


def restore_dir(directory: Path, files: dict[str, bytes]) -> None:
    for path in directory.iterdir():
        path.unlink()
    for name, data in files.items():
        (directory / name).write_bytes(data)


def entries_of(blob: bytes) -> list[ClaimInfoState]:
    decoded = codec.decode(blob)
    assert decoded.checksum_ok
    return decoded.entries


def count_steps(
    directory: Path, monkeypatch: pytest.MonkeyPatch, old: list[ClaimInfoState] | None
) -> list[str]:
    store = FileCheckpointStore(directory / STATE_FILE)
    if old is not None:
        store.store(old)
    points = WritePoints(directory.resolve(), None, "kill")
    with monkeypatch.context() as patch:
        points.install(patch)
        store.store(NEW)
    restore_dir(directory, {})
    return points.steps


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "kubelet"
    directory.mkdir()
    return directory


def test_write_points_are_the_expected_ones(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the other tests: they must see a temp-file write that is fsynced before the rename."""
    steps = count_steps(state_dir, monkeypatch, OLD)
    assert "write" in steps
    assert "rename" in steps
    assert steps.index("create") < steps.index("write") < steps.index("rename")
    fsyncs = [i for i, s in enumerate(steps) if s == "fsync"]
    assert any(i < steps.index("rename") for i in fsyncs), f"no fsync of the temp file before rename: {steps}"
    assert any(i > steps.index("rename") for i in fsyncs), f"no fsync of the directory after rename: {steps}"


@pytest.mark.parametrize("old", [OLD, None], ids=["replace-existing", "first-write"])
def test_kill_at_every_write_point_leaves_old_or_new(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch, old: list[ClaimInfoState] | None
) -> None:
    steps = count_steps(state_dir, monkeypatch, old)
    path = state_dir / STATE_FILE
    new_blob = codec.encode(NEW)
    outcomes: list[str] = []
    for k in range(1, len(steps) + 1):
        restore_dir(state_dir, {})
        store = FileCheckpointStore(path)
        if old is not None:
            store.store(old)
        old_blob = path.read_bytes() if old is not None else None
        points = WritePoints(state_dir.resolve(), k, "kill")
        with monkeypatch.context() as patch:
            points.install(patch)
            with pytest.raises(Killed):
                store.store(NEW)
        assert points.snapshot is not None
        on_disk = points.snapshot.get(STATE_FILE)
        where = f"kill at step {k} ({steps[k - 1]})"
        if on_disk is None:
            assert old is None, f"{where}: the checkpoint vanished"
            outcomes.append("absent")
        elif on_disk == old_blob:
            outcomes.append("old")
        else:
            assert on_disk == new_blob, f"{where}: torn checkpoint {on_disk[:80]!r}"
            outcomes.append("new")
        # A kubelet restarted on exactly what was on disk loads it and can write again.
        restore_dir(state_dir, points.snapshot)
        restarted = FileCheckpointStore(path)
        loaded = restarted.get_or_create()
        expected = {"absent": [], "old": old or [], "new": NEW}[outcomes[-1]]
        assert loaded == sorted(expected, key=codec.entry_sort_key), where
        restarted.store(NEW)
        assert entries_of(path.read_bytes()) == NEW
    # The switch from old to new happens exactly once, at the rename.
    rename = steps.index("rename")
    before = "old" if old is not None else "absent"
    assert outcomes == [before] * (rename + 1) + ["new"] * (len(steps) - rename - 1), list(
        zip(steps, outcomes, strict=True)
    )


def test_io_error_at_every_write_point_keeps_a_valid_file_and_no_temp(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = count_steps(state_dir, monkeypatch, OLD)
    path = state_dir / STATE_FILE
    rename = steps.index("rename")
    for k in range(1, len(steps) + 1):
        restore_dir(state_dir, {})
        store = FileCheckpointStore(path)
        store.store(OLD)
        points = WritePoints(state_dir.resolve(), k, "error")
        where = f"EIO at step {k} ({steps[k - 1]})"
        with monkeypatch.context() as patch:
            points.install(patch)
            if k <= rename + 1:
                with pytest.raises(CheckpointError, match="cannot write checkpoint"):
                    store.store(NEW)
            else:
                store.store(NEW)  # only the directory fsync is left; its failure is tolerated
        files = read_dir(state_dir)
        assert set(files) == {STATE_FILE}, f"{where}: left behind {sorted(set(files) - {STATE_FILE})}"
        expected = OLD if k <= rename + 1 else NEW
        assert entries_of(files[STATE_FILE]) == expected, where


def test_a_leftover_temp_file_from_a_kill_does_not_disturb_the_next_start(state_dir: Path) -> None:
    path = state_dir / STATE_FILE
    FileCheckpointStore(path).store(OLD)
    (state_dir / ".123456").write_bytes(codec.encode(NEW)[:40])  # torn temp of a killed write
    store = FileCheckpointStore(path)
    assert store.get_or_create() == OLD
    store.store(NEW)
    assert entries_of(path.read_bytes()) == NEW


# ----- store_changes: os.writev of the pieces; without fsync, the recycled spare file --------

BIGGER = [claim(i) for i in range(6)]  # the spare holds more bytes than NEW: truncated


def _changes(states: list[ClaimInfoState]) -> dict[str, ClaimInfoState | None]:
    return {state.key: state for state in states}


#: How a store writes: fsync and a new temp file; recycling with renameat2(RENAME_EXCHANGE); recycling
#: where the file system refuses the exchange (a second name linked, then a rename).
MODES = ["fsync", "recycling", "recycling-link"]
RECYCLING_MODES = MODES[1:]


def _new_store(path: Path, mode: str) -> FileCheckpointStore:
    store = FileCheckpointStore(path, fsync=mode == "fsync")
    if mode == "recycling-link":
        store._exchanging = False  # as after a file system refused RENAME_EXCHANGE
    return store


def _prepare_store(directory: Path, mode: str | bool) -> tuple[FileCheckpointStore, object, bytes]:
    """A store that wrote BIGGER then OLD through store_changes: without fsync it holds a spare.

    ``mode`` is one of :data:`MODES`, or ``fsync`` as a bool (``False``: recycling).
    """
    if isinstance(mode, bool):
        mode = "fsync" if mode else "recycling"
    store = _new_store(directory / STATE_FILE, mode)
    owner = object()
    store.store_changes(owner, {}, lambda: BIGGER)
    removed: dict[str, ClaimInfoState | None] = {s.key: None for s in BIGGER if s.key != OLD[0].key}
    store.store_changes(owner, removed, lambda: pytest.fail("incremental"))
    return store, owner, (directory / STATE_FILE).read_bytes()


def _write_new(store: FileCheckpointStore, owner: object) -> None:
    store.store_changes(owner, _changes(NEW), lambda: pytest.fail("incremental"))


def _steps_of_store_changes(directory: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> list[str]:
    store, owner, _ = _prepare_store(directory, mode)
    points = WritePoints(directory.resolve(), None, "kill")
    with monkeypatch.context() as patch:
        points.install(patch)
        _write_new(store, owner)
    restore_dir(directory, {})
    return points.steps


@pytest.mark.parametrize("mode", MODES)
def test_store_changes_write_points(state_dir: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    steps = _steps_of_store_changes(state_dir, monkeypatch, mode)
    if mode == "fsync":
        assert steps == ["create", "write", "fsync", "rename", "open-dir", "fsync"], steps
    elif mode == "recycling":  # the spare (kept open) is overwritten, cut to size, swapped in
        assert steps == ["write", "truncate", "rename"], steps
    else:  # the current file gets a second name before the rename
        assert steps == ["write", "truncate", "link", "rename"], steps


@pytest.mark.parametrize("mode", MODES)
def test_store_changes_killed_at_every_write_point_leaves_old_or_new(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    steps = _steps_of_store_changes(state_dir, monkeypatch, mode)
    new_blob = codec.encode(NEW)
    outcomes = []
    for k in range(1, len(steps) + 1):
        restore_dir(state_dir, {})
        store, owner, old_blob = _prepare_store(state_dir, mode)
        points = WritePoints(state_dir.resolve(), k, "kill")
        with monkeypatch.context() as patch:
            points.install(patch)
            with pytest.raises(Killed):
                _write_new(store, owner)
        assert points.snapshot is not None
        on_disk = points.snapshot[STATE_FILE]
        where = f"kill at step {k} ({steps[k - 1]})"
        assert on_disk in (old_blob, new_blob), f"{where}: torn checkpoint {on_disk[:80]!r}"
        outcomes.append("old" if on_disk == old_blob else "new")
        restore_dir(state_dir, points.snapshot)
        restarted = _new_store(state_dir / STATE_FILE, mode)
        expected = OLD if on_disk == old_blob else NEW
        assert restarted.get_or_create() == sorted(expected, key=codec.entry_sort_key), where
        restarted.store_changes(object(), {}, lambda: NEW)
        assert entries_of((state_dir / STATE_FILE).read_bytes()) == NEW, where
    rename = steps.index("rename")
    assert outcomes == ["old"] * (rename + 1) + ["new"] * (len(steps) - rename - 1), list(
        zip(steps, outcomes, strict=True)
    )


@pytest.mark.parametrize("mode", RECYCLING_MODES)
def test_recycling_store_changes_io_error_at_every_step_keeps_a_valid_file(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    steps = _steps_of_store_changes(state_dir, monkeypatch, mode)
    for k in range(1, len(steps) + 1):
        restore_dir(state_dir, {})
        store, owner, _ = _prepare_store(state_dir, mode)
        points = WritePoints(state_dir.resolve(), k, "error")
        step = steps[k - 1]
        where = f"EIO at step {k} ({step})"
        with monkeypatch.context() as patch:
            points.install(patch)
            if step in ("open-dir", "link"):
                # Recycling is an optimisation: a spare that cannot be opened is dropped and a
                # new temp file written; a current file that cannot be linked is not kept.
                _write_new(store, owner)
            else:
                with pytest.raises(CheckpointError, match="cannot write checkpoint"):
                    _write_new(store, owner)
        files = read_dir(state_dir)
        spares = sorted(name for name in files if name.startswith(f".{STATE_FILE}.spare-"))
        assert set(files) == {STATE_FILE, *spares}, f"{where}: left behind {sorted(files)}"
        if step == "open-dir":
            assert entries_of(files[STATE_FILE]) == NEW, where
            assert [entries_of(files[name]) for name in spares] == [OLD], where  # the next spare
        elif step == "link":
            assert entries_of(files[STATE_FILE]) == NEW, where
            assert spares == [], where
        else:  # the failed write's temp file (the spare it was overwriting) and its new spare are gone
            assert entries_of(files[STATE_FILE]) == OLD, where
            assert spares == [], where
        # The store goes on: the next write (a new temp file when no spare is left) is whole.
        store.store_changes(owner, {}, lambda: NEW)
        assert entries_of((state_dir / STATE_FILE).read_bytes()) == NEW, where


def test_a_spare_that_got_another_name_is_not_overwritten(state_dir: Path) -> None:
    """Two stores on one file: a spare that is also another store's current file stays intact."""
    path = state_dir / STATE_FILE
    first = FileCheckpointStore(path, fsync=False)
    first.store_changes(object(), {}, lambda: OLD)
    first.store_changes(object(), {}, lambda: NEW)  # first's spare: the OLD file
    spare = next(p for p in state_dir.iterdir() if p.name.startswith(f".{STATE_FILE}.spare-"))
    os.link(spare, state_dir / "someone-elses-name")  # e.g. a backup hard link
    first.store_changes(object(), {}, lambda: BIGGER)
    assert entries_of((state_dir / "someone-elses-name").read_bytes()) == OLD
    assert entries_of(path.read_bytes()) == BIGGER
    assert not spare.exists()  # its name was dropped, the inode left to the other name


def test_a_reader_between_two_recycling_writes_sees_whole_files(state_dir: Path) -> None:
    """A file opened after a write keeps that write's bytes through the next write."""
    path = state_dir / STATE_FILE
    store = FileCheckpointStore(path, fsync=False)
    owner = object()
    store.store_changes(owner, {}, lambda: OLD)
    store.store_changes(owner, _changes(NEW), lambda: pytest.fail("incremental"))
    with path.open("rb") as reader:  # the NEW file
        store.store_changes(owner, _changes(BIGGER), lambda: pytest.fail("incremental"))
        assert reader.read() == codec.encode(NEW)
    assert path.read_bytes() == codec.encode(BIGGER)
    assert os.stat(path).st_mode & 0o777 == 0o600


# ----- the recycled files' descriptors, kept open between writes -----------------------------


def _descriptors_into(directory: Path) -> list[str]:
    """The files of ``directory`` (or deleted ones that were there) this process holds open."""
    found = []
    for entry in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{entry}")
            if target.startswith(f"{directory.resolve()}/"):
                found.append(target)
    return found


def test_a_recycling_store_keeps_two_descriptors_and_close_releases_them(state_dir: Path) -> None:
    store, owner, _ = _prepare_store(state_dir, False)
    _write_new(store, owner)
    assert len(_descriptors_into(state_dir)) == 2  # the current file and the spare
    store.close()
    assert _descriptors_into(state_dir) == []
    assert sorted(p.name for p in state_dir.iterdir()) == [STATE_FILE]  # the spare is removed
    store.store_changes(owner, _changes(BIGGER), lambda: BIGGER)  # still usable: a new temp file
    assert entries_of((state_dir / STATE_FILE).read_bytes()) == BIGGER
    store.close()
    assert _descriptors_into(state_dir) == []


def test_a_dropped_store_closes_its_descriptors(state_dir: Path) -> None:
    store, owner, _ = _prepare_store(state_dir, False)
    _write_new(store, owner)
    assert _descriptors_into(state_dir)
    del store
    assert _descriptors_into(state_dir) == []


def test_a_durable_write_releases_the_current_files_descriptor(state_dir: Path) -> None:
    store, owner, _ = _prepare_store(state_dir, False)
    store.fsync = True
    _write_new(store, owner)
    assert entries_of((state_dir / STATE_FILE).read_bytes()) == NEW
    assert len(_descriptors_into(state_dir)) == 1  # only the spare, whose name still holds it
    store.fsync = False
    store.store_changes(owner, _changes(BIGGER), lambda: pytest.fail("incremental"))
    assert entries_of((state_dir / STATE_FILE).read_bytes()) == sorted(BIGGER, key=codec.entry_sort_key)


@pytest.mark.parametrize("mode", RECYCLING_MODES)
@pytest.mark.parametrize("change", ["removed", "replaced", "renamed-away"])
def test_a_spare_whose_name_changed_is_not_written(state_dir: Path, change: str, mode: str) -> None:
    """Between two writes the spare's name is removed, or another file takes it, or it moves away."""
    store, owner, _ = _prepare_store(state_dir, mode)
    spare = next(p for p in state_dir.iterdir() if p.name.startswith(f".{STATE_FILE}.spare-"))
    other = state_dir / "other"
    if change == "removed":
        spare.unlink()
    elif change == "replaced":
        other.write_bytes(b"someone else's file")
        os.link(other, state_dir / "other-kept")
        os.replace(other, spare)
        other = state_dir / "other-kept"
    else:
        os.rename(spare, other)
    _write_new(store, owner)
    assert entries_of((state_dir / STATE_FILE).read_bytes()) == NEW
    if change == "replaced":
        assert other.read_bytes() == b"someone else's file"
    elif change == "renamed-away":
        assert entries_of(other.read_bytes()) == sorted(BIGGER, key=codec.entry_sort_key)  # not written
    store.store_changes(owner, _changes(BIGGER), lambda: pytest.fail("incremental"))
    assert entries_of((state_dir / STATE_FILE).read_bytes()) == sorted(BIGGER, key=codec.entry_sort_key)
    store.close()
    assert _descriptors_into(state_dir) == []


def test_a_file_system_without_rename_exchange_gets_link_and_rename(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """renameat2(RENAME_EXCHANGE) refused (EINVAL, as some file systems answer): the store links
    a second name and renames instead, from then on, with the same bytes and spare."""
    refused: list[str] = []

    def refusing(first: str, second: str) -> None:
        refused.append(second)
        raise OSError(errno.EINVAL, "Invalid argument", first, None, second)

    store, owner, _ = _prepare_store(state_dir, False)
    monkeypatch.setattr(store_module, "_exchange", refusing)
    _write_new(store, owner)
    assert entries_of((state_dir / STATE_FILE).read_bytes()) == NEW
    store.store_changes(owner, _changes(BIGGER), lambda: pytest.fail("incremental"))
    assert entries_of((state_dir / STATE_FILE).read_bytes()) == sorted(BIGGER, key=codec.entry_sort_key)
    assert len(refused) == 1  # asked once, not again
    spares = [p for p in state_dir.iterdir() if p.name.startswith(f".{STATE_FILE}.spare-")]
    assert [entries_of(p.read_bytes()) for p in spares] == [NEW]  # the replaced file, kept
    store.close()
    assert _descriptors_into(state_dir) == []


def test_the_exchange_keeps_the_replaced_file_under_the_spare_name(state_dir: Path) -> None:
    if store_module._RENAMEAT2 is None:
        pytest.skip("no renameat2 here")
    store, owner, old_blob = _prepare_store(state_dir, False)
    spare = next(p for p in state_dir.iterdir() if p.name.startswith(f".{STATE_FILE}.spare-"))
    _write_new(store, owner)
    assert store._exchanging
    assert entries_of((state_dir / STATE_FILE).read_bytes()) == NEW
    assert spare.read_bytes() == old_blob  # the same name now holds the replaced checkpoint
    assert sorted(p.name for p in state_dir.iterdir()) == sorted([STATE_FILE, spare.name])
