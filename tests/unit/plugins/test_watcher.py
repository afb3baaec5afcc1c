"""The registry-directory watcher on a real directory with real Unix sockets."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from drasim.plugins import inotify
from drasim.plugins.watcher import PluginWatcher


class Desired:
    """Records add_or_update / remove calls and lets tests wait for them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self._cond = threading.Condition()

    def add_or_update(self, socket_path: str) -> None:
        with self._cond:
            self.calls.append(("add", socket_path))
            self._cond.notify_all()

    def remove(self, socket_path: str) -> None:
        with self._cond:
            self.calls.append(("remove", socket_path))
            self._cond.notify_all()

    def wait_calls(self, n: int, timeout: float = 5.0) -> list[tuple[str, str]]:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.calls) >= n, timeout), self.calls
            return list(self.calls)


def make_socket(path: Path) -> None:
    """Bind (and leave) a Unix socket file at ``path``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()


MODES = [
    pytest.param(True, id="inotify", marks=pytest.mark.skipif(not inotify.available(), reason="no inotify")),
    pytest.param(False, id="polling"),
]


@pytest.fixture(params=MODES)
def watched(
    request: pytest.FixtureRequest, short_socket_dir: Path
) -> Iterator[tuple[PluginWatcher, Desired, Path]]:
    registry = short_socket_dir / "registry"
    desired = Desired()
    watcher = PluginWatcher(registry, desired, use_inotify=request.param, poll_interval=0.01)
    watcher.start()
    yield watcher, desired, registry
    watcher.stop()


def test_existing_sockets_are_reported_at_start(short_socket_dir: Path) -> None:
    registry = short_socket_dir / "r"
    (registry / "sub").mkdir(parents=True)
    make_socket(registry / "a.sock")
    make_socket(registry / "sub" / "b.sock")
    make_socket(registry / ".hidden.sock")
    (registry / "file.sock").write_text("")
    desired = Desired()
    watcher = PluginWatcher(registry, desired)
    watcher.start()
    try:
        assert sorted(desired.calls) == [
            ("add", str(registry / "a.sock")),
            ("add", str(registry / "sub" / "b.sock")),
        ]
    finally:
        watcher.stop()


def test_creates_directory(short_socket_dir: Path) -> None:
    registry = short_socket_dir / "x" / "y"
    watcher = PluginWatcher(registry, Desired())
    watcher.start()
    watcher.stop()
    assert registry.is_dir()


def test_new_removed_and_recreated_sockets(watched: tuple[PluginWatcher, Desired, Path]) -> None:
    watcher, desired, registry = watched
    path = registry / "d-reg.sock"
    make_socket(path)
    assert desired.wait_calls(1) == [("add", str(path))]
    os.unlink(path)
    assert desired.wait_calls(2)[1] == ("remove", str(path))
    make_socket(path)
    assert desired.wait_calls(3)[2] == ("add", str(path))
    assert watcher.known_sockets() == [str(path)]


def test_dot_files_and_regular_files_are_ignored(watched: tuple[PluginWatcher, Desired, Path]) -> None:
    watcher, desired, registry = watched
    make_socket(registry / ".tmp.sock")
    (registry / "plain.sock").write_text("not a socket")
    marker = registry / "marker.sock"
    make_socket(marker)
    assert desired.wait_calls(1) == [("add", str(marker))]
    watcher.rescan()
    assert desired.calls == [("add", str(marker))]


def test_sockets_in_new_subdirectories(watched: tuple[PluginWatcher, Desired, Path]) -> None:
    _, desired, registry = watched
    sub = registry / "driver"
    sub.mkdir()
    make_socket(sub / "r.sock")
    assert desired.wait_calls(1) == [("add", str(sub / "r.sock"))]
    os.unlink(sub / "r.sock")
    sub.rmdir()
    assert desired.wait_calls(2)[1] == ("remove", str(sub / "r.sock"))


def test_rescan_is_idempotent(watched: tuple[PluginWatcher, Desired, Path]) -> None:
    watcher, desired, registry = watched
    make_socket(registry / "a.sock")
    desired.wait_calls(1)
    watcher.rescan()
    watcher.rescan()
    assert desired.calls == [("add", str(registry / "a.sock"))]


def test_mode_falls_back_to_polling(short_socket_dir: Path) -> None:
    watcher = PluginWatcher(short_socket_dir / "r", Desired(), use_inotify=False)
    watcher.start()
    try:
        assert watcher.mode == "polling"
    finally:
        watcher.stop()


@pytest.mark.skipif(not inotify.available(), reason="no inotify")
def test_inotify_reports_events_and_wakes(short_socket_dir: Path) -> None:
    ino = inotify.Inotify()
    try:
        ino.add_watch(str(short_socket_dir))
        (short_socket_dir / "f").write_text("")
        events = ino.read(timeout=5)
        assert any(e.path == str(short_socket_dir / "f") and e.mask & inotify.IN_CREATE for e in events)
        ino.wake()
        assert ino.read(timeout=5) == []
    finally:
        ino.close()
    broken = inotify.Inotify()
    try:
        with pytest.raises(OSError, match="inotify_add_watch"):
            broken.add_watch(str(short_socket_dir / "missing"))
    finally:
        broken.close()
