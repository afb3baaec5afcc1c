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


@pytest.fixture
def umask():
    """Set the process umask for one test; restored afterwards."""
    saved = os.umask(0o022)
    yield os.umask
    os.umask(saved)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0, 0o666)])
def test_user_files_get_the_mode_the_umask_allows(tmp_path: Path, umask, mask: int, expected: int) -> None:
    umask(mask)
    assert fsutil.current_umask() == mask
    target = fsutil.atomic_write_text(tmp_path / "report.html", "x", mode=fsutil.USER_FILE_MODE)
    assert stat.S_IMODE(target.stat().st_mode) == expected
    private = fsutil.atomic_write_bytes(tmp_path / "state.json", b"x")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600


def test_reports_journal_and_reproducer_respect_the_umask(tmp_path: Path, umask) -> None:
    from drasim.cli import main
    from drasim.explore import ExploreConfig, explore
    from drasim.explore.reproducer import write_reproducer
    from drasim.journal import Journal

    umask(0o022)
    out = [tmp_path / "r.xml", tmp_path / "r.json", tmp_path / "r.html"]
    argv = ["run", "-k", "prepare-unprepare-round-trip", "--junit", str(out[0]), "--json", str(out[1])]
    assert main([*argv, "--html", str(out[2])]) == 0
    journal = Journal()
    journal.record("step", index=1, name="x", text="x")
    journal.write_jsonl(tmp_path / "journal.jsonl")
    out.append(tmp_path / "journal.jsonl")
    config = ExploreConfig(max_examples=20, seed=1, steps=8, bugs=("drops-claim",))
    failure = explore(config).failure
    assert failure is not None
    out.append(write_reproducer(failure, tmp_path / "repro", config, verify=False).path)
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in out} == {p.name: "0o644" for p in out}
