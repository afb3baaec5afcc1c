"""drasim.upstream_kubelet.registrar: upstream's registrations mirrored into drasim's plugin manager."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from drasim.journal import Journal
from drasim.upstream_kubelet.registrar import UpstreamRegistrar, registry_sockets, settled


class _Process:
    """Stands in for the upstream program: answers ``plugins`` with what the test sets."""

    def __init__(self) -> None:
        self.sockets: list[dict[str, Any]] = []

    def call(self, op: str, **_: Any) -> dict[str, Any]:
        assert op == "plugins"
        return {"plugins": [dict(s) for s in self.sockets]}


class _Manager:
    """Records what the registrar tells drasim's plugin manager."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def register_plugin(self, name: str, endpoint: str, versions: Sequence[str]) -> Any:
        self.calls.append(("register", name, endpoint, *versions))
        return type("Client", (), {"service": versions[0]})()

    def deregister_plugin(self, name: str, endpoint: str) -> None:
        self.calls.append(("deregister", name, endpoint))


def _registered_gpu(path: str) -> dict[str, Any]:
    """What upstream reports for a socket at ``path`` registered as plugin ``gpu`` (generation u1)."""
    return {
        "socket": path,
        "desired": True,
        "uuid": "u1",
        "registered": True,
        "registeredUUID": "u1",
        "name": "gpu",
        "endpoint": "/p/gpu.sock",
        "versions": ["v1.DRAPlugin"],
    }


def _socket(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()
    return path


def test_registry_sockets_are_the_visible_sockets(tmp_path: Path) -> None:
    visible = _socket(tmp_path, "a.sock")
    _socket(tmp_path, ".a.sock.live")
    (tmp_path / "notes.txt").write_text("not a socket")
    (tmp_path / "sub").mkdir()
    nested = _socket(tmp_path / "sub", "b.sock")
    assert set(registry_sockets(tmp_path)) == {str(visible), str(nested)}


def test_settled_needs_the_watcher_caught_up_and_every_socket_tried() -> None:
    registered = {"socket": "/r/a", "desired": True, "uuid": "u1", "registered": True, "registeredUUID": "u1"}
    failed = {"socket": "/r/b", "desired": True, "uuid": "u2", "registered": False, "errorAt": 5}
    assert settled([registered, failed], {"/r/a", "/r/b"})
    assert not settled([registered], {"/r/a", "/r/b"})  # the watcher has not seen /r/b yet
    assert not settled([registered, {**failed, "errorAt": 0}], {"/r/a", "/r/b"})  # not tried
    assert not settled([registered, {**failed, "pending": True}], {"/r/a", "/r/b"})
    assert not settled([{**registered, "uuid": "u3"}], {"/r/a"})  # re-created: re-registered next
    assert not settled([{**registered, "desired": False}], set())  # gone: deregistered next


def test_registrations_failures_and_removals_are_mirrored_and_journaled() -> None:
    process, manager, journal = _Process(), _Manager(), Journal()
    registrar = UpstreamRegistrar(process, manager, journal=journal, registry_dir="/nonexistent")  # type: ignore[arg-type]
    process.sockets = [
        {
            "socket": "/r/a",
            "desired": True,
            "uuid": "u1",
            "errorAt": 7,
            "error": "RegisterPlugin error -- boom",
        }
    ]
    registrar.poll()
    registrar.poll()  # the same failure is journaled once
    process.sockets = [{**_registered_gpu("/r/a"), "errorAt": 7}]
    registrar.poll()
    process.sockets = []
    registrar.poll()
    assert manager.calls == [
        ("register", "gpu", "/p/gpu.sock", "v1.DRAPlugin"),
        ("deregister", "gpu", "/p/gpu.sock"),
    ]
    events = [(e["outcome"], e["driver"], e["socket"], e["error"]) for e in journal.events("registration")]
    assert events == [
        ("failed", None, "/r/a", "RegisterPlugin error -- boom"),
        ("registered", "gpu", "/r/a", None),
        ("deregistered", "gpu", "/r/a", None),
    ]
    assert journal.events("registration", outcome="registered")[0]["service"] == "v1.DRAPlugin"


def test_sync_waits_until_upstreams_watcher_reported_a_socket_replaced_in_one_rename(tmp_path: Path) -> None:
    """The path stays, the file is new: settled only once upstream reports a new generation."""
    path = _socket(tmp_path, "gpu-reg.sock")
    process, manager, journal = _Process(), _Manager(), Journal()
    registrar = UpstreamRegistrar(process, manager, journal=journal, registry_dir=tmp_path)  # type: ignore[arg-type]
    registered = _registered_gpu(str(path))
    process.sockets = [registered]
    assert registrar.sync(timeout=1.0)
    replacement = _socket(tmp_path, ".gpu-reg.sock.new")
    replacement.replace(path)
    assert not registrar.sync(timeout=0.2)  # upstream still reports generation u1 for the old file
    process.sockets = [{**registered, "uuid": "u2", "registeredUUID": "u2"}]
    assert registrar.sync(timeout=1.0)
    outcomes = [e["outcome"] for e in journal.events("registration")]
    assert outcomes == ["registered", "deregistered", "registered"]
