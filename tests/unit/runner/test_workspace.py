"""Where scenario workspaces go: memory-backed /dev/shm by default, /tmp when kept, or a chosen base."""

from __future__ import annotations

import itertools
import os
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from drasim.errors import ConfigError
from drasim.runner import workspace as ws_module
from drasim.runner.workspace import MAX_SOCKET_PATH, create_workspace, default_base, shm_usable


@pytest.fixture
def fake_shm(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh stand-in for /dev/shm with the same path length, so the name-length rule is exercised."""
    for attempt in itertools.product(string.ascii_lowercase, repeat=3):
        base = Path("/tmp") / "".join(attempt)
        try:
            base.mkdir(mode=0o700)
        except FileExistsError:
            continue
        break
    assert len(str(base)) == len("/dev/shm")
    monkeypatch.setattr(ws_module, "SHM_DIR", base)
    yield base
    for child in base.iterdir():
        ws_module.Workspace(child).remove()
    base.rmdir()


def test_default_is_shm_when_usable_and_tmp_when_kept(fake_shm: Path) -> None:
    assert default_base() == fake_shm
    assert default_base(keep=True) == Path("/tmp")
    ws = create_workspace()
    try:
        assert ws.root.parent == fake_shm
        assert ws.root.name.startswith("drasim-")
        # No longer than /tmp/drasim-XXXXXXXX: the socket-name budget is the same.
        assert len(str(ws.root)) == len("/tmp/drasim-XXXXXXXX")
        assert ws.registry_dir.is_dir()
        assert ws.cdi_dir.is_dir()
        assert (os.stat(ws.root).st_mode & 0o777) == 0o700
    finally:
        ws.remove()
    kept = create_workspace(keep=True)
    try:
        assert kept.root.parent == Path("/tmp")
        assert len(kept.root.name) == len("drasim-XXXXXXXX")
    finally:
        kept.remove()


def test_shm_not_used_without_room_or_access(tmp_path: Path) -> None:
    assert shm_usable(tmp_path, min_free=0)
    assert not shm_usable(tmp_path, min_free=1 << 62)  # more free space than any disk has
    assert not shm_usable(tmp_path / "missing", min_free=0)
    (tmp_path / "file").write_text("")
    assert not shm_usable(tmp_path / "file", min_free=0)


def test_default_falls_back_to_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ws_module, "SHM_DIR", tmp_path / "no-such-shm")
    assert default_base() == Path("/tmp")


def test_rolling_update_socket_name_fits_wherever_the_default_is() -> None:
    # The longest socket the built-in library creates: <driver>-<uuid>-reg.sock.
    ws = create_workspace()
    try:
        sock = ws.registry_dir / "gpu.example.com-5d2c5e8a-0f7e-4c37-9d61-2b1f0c6f1a11-reg.sock"
        assert len(str(sock)) <= MAX_SOCKET_PATH
    finally:
        ws.remove()


def test_explicit_base(tmp_path: Path) -> None:
    base = Path("/tmp")
    ws = create_workspace(base, keep=False)
    try:
        assert ws.root.parent == base
    finally:
        ws.remove()
    with pytest.raises(ConfigError, match=r"workspace directory .*missing: not an existing directory"):
        create_workspace(tmp_path / "missing")


def test_unique_names(fake_shm: Path) -> None:
    made = [create_workspace() for _ in range(50)]
    try:
        assert len({w.root for w in made}) == 50
    finally:
        for w in made:
            w.remove()


SCENARIO = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: kept, description: one prepare}
spec:
  driver: {fake: {name: gpu.example.com, devices: 1}}
  claims: [{name: gpu}]
  steps:
    - startPod: {name: a, claims: [gpu]}
"""


def test_run_keep_workspace_says_where_and_workspace_dir_places_it(tmp_path: Path, capsys) -> None:
    from drasim.cli import main

    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    base = Path("/tmp")
    code = main(["run", str(scenario), "--keep-workspace", "--workspace-dir", str(base)])
    out = capsys.readouterr().out
    assert code == 0, out
    (line,) = [x for x in out.splitlines() if x.strip().startswith("workspace:")]
    kept = Path(line.split(":", 1)[1].strip())
    try:
        assert kept.parent == base
        assert (kept / "kubelet" / "dra_manager_state").is_file()
        assert list((kept / "cdi").iterdir())  # the running pod's CDI spec is still there
    finally:
        ws_module.Workspace(kept).remove()


def test_run_rejects_a_missing_workspace_dir(tmp_path: Path, capsys) -> None:
    from drasim.cli import main

    code = main(["run", "--workspace-dir", str(tmp_path / "nope")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"--workspace-dir: workspace directory {tmp_path / 'nope'}: not an existing directory" in err


def test_run_rejects_a_workspace_dir_too_long_for_sockets(tmp_path: Path, capsys) -> None:
    from drasim.cli import main

    code = main(["run", "--workspace-dir", str(tmp_path)])  # pytest's tmp_path is far too long
    err = capsys.readouterr().err
    assert code == 2
    assert f"--workspace-dir: workspace directory {tmp_path} is {len(str(tmp_path))} characters long" in err
    assert "at most 10 characters, such as /tmp or /dev/shm" in err


def test_the_longest_allowed_base_still_fits_the_socket_budget() -> None:
    from drasim.runner.workspace import _SOCKET_NAME_BUDGET, check_base, max_base_length

    limit = max_base_length()
    assert limit == 10
    check_base(Path("/tmp"))
    base = Path("/tmp") / ("b" * (limit - len("/tmp/")))
    base.mkdir(exist_ok=True)
    try:
        check_base(base)
        ws = create_workspace(base)
        try:
            assert len(str(ws.registry_dir)) + _SOCKET_NAME_BUDGET <= MAX_SOCKET_PATH
        finally:
            ws.remove()
    finally:
        base.rmdir()
