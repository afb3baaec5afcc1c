"""File-system faults on every path drasim writes, on a fake file system (pyfakefs).

ENOSPC (a full disk) and EACCES (a read-only folder, as a non-root user) are the fake file
system's own behaviour; EROFS (a read-only mount: opening for writing, renaming and linking
fail) and EIO (a failing disk: writing and fsync fail) are injected into the system calls.
For the kubelet checkpoint, the fake driver's CDI specs and its checkpoint, each fault must
leave the previous file whole, fail with one clear error naming the file and the reason, and
the next write after the fault clears must succeed.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyfakefs.helpers import get_uid, set_uid

from drasim.checkpoint.store import DRA_MANAGER_STATE_FILE, FileCheckpointStore
from drasim.errors import CheckpointError
from drasim.state import ClaimInfoState, DriverState
from drasim.values import ClaimRef, Device
from fake_plugins import Behaviour, FakeDriverConfig
from fake_plugins.core import CallError, DriverCore
from fake_plugins.state import DriverState as FakeDriverState
from fake_plugins.state import PreparedClaim

FAULTS = ["ENOSPC", "EACCES", "EROFS", "EIO"]
REASONS = {name: os.strerror(getattr(errno, name)) for name in FAULTS}
KUBELET = Path("/var/lib/kubelet")
PLUGIN = Path("/var/lib/kubelet/plugins/gpu.example.com")
CDI = Path("/var/run/cdi")


def _failing(code: int):
    def fail(*_args, **_kwargs):
        raise OSError(code, os.strerror(code))

    return fail


def _read_only(folders: list[Path], *, on: bool) -> None:
    for folder in folders:
        for item in [folder, *folder.rglob("*")]:
            writable = 0o755 if item.is_dir() else 0o600
            item.chmod(writable & 0o555 if on else writable)


def _patch_read_only_mount(patch: pytest.MonkeyPatch, code: int) -> None:
    real_open = os.open

    def read_only_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(code, os.strerror(code))
        return real_open(path, flags, *args, **kwargs)

    patch.setattr(os, "open", read_only_open)
    for call in ("replace", "rename", "link"):
        patch.setattr(os, call, _failing(code))


@contextlib.contextmanager
def fault(fs, monkeypatch: pytest.MonkeyPatch, name: str, folders: list[Path]) -> Iterator[None]:
    """Inject one fault for the duration of the block (``folders`` are made read-only for EACCES)."""
    code = getattr(errno, name)
    uid = get_uid()
    with monkeypatch.context() as patch:
        if name == "ENOSPC":
            fs.set_disk_usage(fs.get_disk_usage().used + 8)
        elif name == "EACCES":
            _read_only(folders, on=True)
            set_uid(1000)
        elif name == "EROFS":
            _patch_read_only_mount(patch, code)
        else:
            for call in ("write", "writev", "pwrite", "pwritev", "fsync"):
                if hasattr(os, call):
                    patch.setattr(os, call, _failing(code))
        try:
            yield
        finally:
            if name == "ENOSPC":
                fs.set_disk_usage(1 << 40)
            elif name == "EACCES":
                set_uid(uid)
                _read_only(folders, on=False)


def claim(name: str) -> ClaimInfoState:
    return ClaimInfoState(
        claim_uid=f"uid-{name}",
        claim_name=name,
        namespace="default",
        pod_uids={"pod-1"},
        driver_state={
            "gpu.example.com": DriverState(devices=[Device("pool", f"gpu-{name}", ("r",), ("cdi",))])
        },
    )


# ------------------------------------------------------------ kubelet checkpoint
@pytest.mark.parametrize("fsync", [True, False], ids=["fsync", "recycling"])
@pytest.mark.parametrize("name", FAULTS)
def test_the_previous_checkpoint_survives_a_failed_write(fs, monkeypatch, name, fsync):
    fs.create_dir(KUBELET)
    path = KUBELET / DRA_MANAGER_STATE_FILE
    store = FileCheckpointStore(path, fsync=fsync)
    try:
        store.store([claim("a")])
        before = path.read_bytes()
        bigger = [claim(f"c{i:02d}") for i in range(40)]  # needs new space even where files are recycled
        with fault(fs, monkeypatch, name, [KUBELET]), pytest.raises(CheckpointError) as err:
            store.store(bigger)
        assert str(err.value) == f"{path}: cannot write checkpoint: {REASONS[name]}"
        assert path.read_bytes() == before
        assert _stored(path) == [claim("a")]
        store.store(bigger)  # the fault is gone: the next write goes through
        assert _stored(path) == bigger
    finally:
        store.close()  # the recycling store holds descriptors of the fake file system


def _stored(path: Path) -> list[ClaimInfoState]:
    reader = FileCheckpointStore(path)
    try:
        return reader.get_or_create()
    finally:
        reader.close()


# --------------------------------------------------------- the fake driver's files
class NoEffects:
    def before(self, faults, context=None) -> None:
        pass

    def after(self, faults) -> None:
        pass


def allocated(ns: str, name: str) -> dict:
    results = [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": f"gpu-{name}"}]
    return {
        "kind": "ResourceClaim",
        "metadata": {"namespace": ns, "name": name, "uid": f"uid-{name}"},
        "status": {"allocation": {"devices": {"results": results}}},
    }


def make_core() -> DriverCore:
    config = FakeDriverConfig(plugin_dir=str(PLUGIN), cdi_dir=str(CDI), state_dir=str(PLUGIN), fsync=True)
    return DriverCore(config, claim_source=allocated, effects=NoEffects(), behaviour=Behaviour())


def ref(name: str) -> ClaimRef:
    return ClaimRef("default", f"uid-{name}", name)


@pytest.mark.parametrize("name", FAULTS)
def test_a_prepare_that_cannot_write_fails_clearly_and_keeps_the_previous_files(fs, monkeypatch, name):
    fs.create_dir(PLUGIN)
    fs.create_dir(CDI)
    core = make_core()
    core.prepare([ref("a")], [])
    files = {p: p.read_bytes() for folder in (PLUGIN, CDI) for p in folder.rglob("*") if p.is_file()}
    assert any(p.parent == CDI for p in files)
    with fault(fs, monkeypatch, name, [PLUGIN, CDI]), pytest.raises(CallError) as err:
        core.prepare([ref("b")], [])
    assert err.value.code == "INTERNAL"
    assert err.value.details.endswith(REASONS[name])
    assert str(CDI) in err.value.details or str(PLUGIN) in err.value.details
    assert {p: p.read_bytes() for p in files} == files
    assert "uid-b" not in core.prepared_claims()
    assert set(core.prepare([ref("b")], [])) == {"uid-b"}  # the fault is gone: the retry prepares
    assert set(make_core().prepared_claims()) == {"uid-a", "uid-b"}  # and a restart still knows both


def test_a_prepare_whose_checkpoint_cannot_be_saved_is_saved_by_the_retry(fs, monkeypatch):
    fs.create_dir(PLUGIN)
    fs.create_dir(CDI)
    core = make_core()
    core.prepare([ref("a")], [])
    real_replace = os.replace

    def state_dir_fails(src, dst):  # the CDI folder works, the driver's state folder does not
        if str(dst).startswith(str(PLUGIN)):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_replace(src, dst)

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", state_dir_fails)
        with pytest.raises(CallError) as err:
            core.prepare([ref("b")], [])
    assert err.value.code == "INTERNAL"
    assert err.value.details.endswith(f"cannot write fake driver checkpoint: {REASONS['EIO']}")
    assert set(make_core().prepared_claims()) == {"uid-a"}
    assert set(core.prepare([ref("b")], [])) == {"uid-b"}  # the kubelet retries
    assert set(make_core().prepared_claims()) == {"uid-a", "uid-b"}  # now on disk too


@pytest.mark.parametrize("name", FAULTS)
def test_an_unprepare_that_cannot_remove_the_spec_keeps_the_claim_prepared(fs, monkeypatch, name):
    if name in ("ENOSPC", "EIO"):
        pytest.skip(f"removing a file needs no space and writes nothing: {name} cannot hit it")
    fs.create_dir(PLUGIN)
    fs.create_dir(CDI)
    core = make_core()
    core.prepare([ref("a")], [])
    with fault(fs, monkeypatch, name, [PLUGIN, CDI]), contextlib.suppress(CallError):
        core.unprepare([ref("a")], [])
    # whatever the fault hit, the claim is either still prepared with its spec, or fully gone
    spec = next(CDI.glob("*uid-a*"), None)
    assert ("uid-a" in core.prepared_claims()) == (spec is not None)
    core.unprepare([ref("a")], [])
    assert core.prepared_claims() == {}
    assert not list(CDI.glob("*uid-a*"))


@pytest.mark.parametrize("name", FAULTS)
def test_the_fake_driver_checkpoint_survives_a_failed_save(fs, monkeypatch, name):
    fs.create_dir(PLUGIN)
    state = FakeDriverState("gpu.example.com", PLUGIN, sync=True)
    state.claims["u"] = PreparedClaim("default", "old", ())
    state.save()
    path = next(state.claims_dir.glob("u*"))
    before = path.read_bytes()
    state.claims["u"] = PreparedClaim("default", "new", ())
    with fault(fs, monkeypatch, name, [PLUGIN]), pytest.raises(CheckpointError) as err:
        state.save()
    assert str(err.value).endswith(f"cannot write fake driver checkpoint: {REASONS[name]}")
    assert path.read_bytes() == before
    state.save()  # the claim that could not be written is written now
    assert FakeDriverState.load("gpu.example.com", PLUGIN).claims["u"].name == "new"
