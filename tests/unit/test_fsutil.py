"""drasim.fsutil: exclusive temporary files and atomic replacement."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from drasim import fsutil


def test_temp_file_is_new_private_and_named_by_prefix(tmp_path: Path) -> None:
    fd, name = fsutil.create_temp_file(str(tmp_path), ".state.json.")
    os.close(fd)
    path = Path(name)
    assert path.parent == tmp_path
    assert path.name.startswith(".state.json.")
    assert len(path.name) == len(".state.json.") + 10
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_taken_name_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = tmp_path / ".x.0000000000"
    taken.write_text("someone else's")
    names = iter(["0000000000", "0000000001"])
    monkeypatch.setattr(fsutil.secrets, "token_hex", lambda _n: next(names))
    fd, name = fsutil.create_temp_file(str(tmp_path), ".x.")
    os.close(fd)
    assert name == str(tmp_path / ".x.0000000001")
    assert taken.read_text() == "someone else's"


def test_atomic_write_creates_the_directory_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "f.json"
    fsutil.atomic_write_bytes(target, b"one", sync=False)
    fsutil.atomic_write_bytes(target, b"two" * 100_000)
    assert target.read_bytes() == b"two" * 100_000
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]


def test_a_failed_rename_removes_the_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.json"
    target.write_bytes(b"old")

    def boom(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsutil.os, "replace", boom)
    with pytest.raises(OSError, match="No space left"):
        fsutil.atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]
