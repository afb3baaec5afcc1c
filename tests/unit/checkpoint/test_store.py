"""FileCheckpointStore on a fake file system (pyfakefs ``fs`` fixture)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from drasim.checkpoint import codec
from drasim.checkpoint import store as store_module
from drasim.checkpoint.codec import CheckpointFormat
from drasim.checkpoint.store import DRA_MANAGER_STATE_FILE, FileCheckpointStore
from drasim.errors import CheckpointError, CorruptCheckpointError
from drasim.interfaces import CheckpointStore
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

ROOT = Path("/var/lib/kubelet")
PATH = ROOT / DRA_MANAGER_STATE_FILE
# read before pyfakefs hides the real tree
LEGACY_GOLDEN = (Path(__file__).parent / "golden" / "legacy-1.30-single.json").read_bytes()


class ListRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def record(self, kind: str, **fields: Any) -> None:
        self.events.append((kind, fields))


def claim(name: str, share_id: str | None = None) -> ClaimInfoState:
    return ClaimInfoState(
        claim_uid=f"uid-{name}",
        claim_name=name,
        namespace="default",
        pod_uids={"pod-1"},
        driver_state={
            "gpu.example.com": DriverState(devices=[Device("pool", "gpu-0", ("r",), ("cdi",), share_id)])
        },
    )


@pytest.fixture
def kubelet_dir(fs):
    fs.create_dir(ROOT)
    return ROOT


def test_the_store_implements_the_port():
    assert isinstance(FileCheckpointStore(PATH), CheckpointStore)
    assert DRA_MANAGER_STATE_FILE == "dra_manager_state"


def test_missing_file_creates_a_fresh_checkpoint_with_a_null_list(kubelet_dir):
    recorder = ListRecorder()
    assert FileCheckpointStore(PATH, recorder=recorder).get_or_create() == []
    assert PATH.read_bytes() == codec.encode(None)
    assert '"ClaimInfoStateList":null' in json.loads(PATH.read_bytes())["Data"]
    assert recorder.events == [
        ("checkpoint", {"path": str(PATH), "entries": [], "size": len(codec.encode(None))})
    ]


def test_missing_directory_is_created(fs):
    path = Path("/fresh/dir") / DRA_MANAGER_STATE_FILE
    FileCheckpointStore(path).get_or_create()
    assert path.exists()


def test_store_then_get_or_create_round_trips(kubelet_dir):
    store = FileCheckpointStore(PATH)
    store.store([claim("b", share_id="s1"), claim("a")])
    assert FileCheckpointStore(PATH).get_or_create() == [claim("a"), claim("b", share_id="s1")]
    assert FileCheckpointStore(PATH).load().share_id_written is True


def test_write_is_atomic_mode_0600_and_leaves_no_temp_files(kubelet_dir):
    store = FileCheckpointStore(PATH)
    store.store([claim("a")])
    store.store([claim("a"), claim("b")])
    assert sorted(p.name for p in ROOT.iterdir()) == [DRA_MANAGER_STATE_FILE]
    assert stat.S_IMODE(PATH.stat().st_mode) == 0o600
    assert PATH.read_bytes() == codec.encode([claim("a"), claim("b")])


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_failed_write_keeps_the_old_file_and_removes_the_temp_file(kubelet_dir, monkeypatch, failing):
    store = FileCheckpointStore(PATH)
    store.store([claim("old")])
    before = PATH.read_bytes()

    def boom(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    if failing == "fsync":
        monkeypatch.setattr(store_module.os, "fsync", boom)
    else:
        monkeypatch.setattr(store_module.os, "replace", boom)
    with pytest.raises(CheckpointError, match="cannot write checkpoint: No space left on device"):
        store.store([claim("new")])
    assert PATH.read_bytes() == before
    assert [p.name for p in ROOT.iterdir()] == [DRA_MANAGER_STATE_FILE]


def test_each_write_is_recorded_with_the_written_entries(kubelet_dir):
    recorder = ListRecorder()
    store = FileCheckpointStore(PATH, recorder=recorder)
    store.store([claim("b"), claim("a")])
    ((kind, fields),) = recorder.events
    assert kind == "checkpoint"
    assert fields["path"] == str(PATH)
    assert fields["size"] == PATH.stat().st_size
    assert fields["entries"] == json.loads(json.loads(PATH.read_bytes())["Data"])["ClaimInfoStateList"]
    assert [e["ClaimName"] for e in fields["entries"]] == ["a", "b"]


def test_write_share_id_false_writes_the_1_31_layout(kubelet_dir):
    FileCheckpointStore(PATH, write_share_id=False).store([claim("a")])
    assert b"ShareID" not in PATH.read_bytes()
    assert FileCheckpointStore(PATH).load().share_id_written is False


def test_corrupt_file_raises_naming_the_file(kubelet_dir):
    blob = bytearray(codec.encode([claim("a")]))
    blob[-2] = ord("0") if blob[-2] != ord("0") else ord("1")
    PATH.write_bytes(bytes(blob))
    with pytest.raises(CorruptCheckpointError) as info:
        FileCheckpointStore(PATH).get_or_create()
    assert str(info.value).startswith(f"{PATH}: checkpoint is corrupted: checksum mismatch: stored ")


def test_invalid_json_raises_naming_the_file(kubelet_dir):
    PATH.write_bytes(b"{")
    with pytest.raises(
        CorruptCheckpointError, match=f"^{PATH}: invalid JSON in file .*unexpected end of JSON input"
    ):
        FileCheckpointStore(PATH).get_or_create()


def test_legacy_file_is_refused_with_advice(kubelet_dir):
    PATH.write_bytes(LEGACY_GOLDEN)
    with pytest.raises(CorruptCheckpointError) as info:
        FileCheckpointStore(PATH).get_or_create()
    message = str(info.value)
    assert message.startswith(f"{PATH}: legacy 1.26-1.30 checkpoint format (1.30 layout)")
    assert "drain the node and remove the file" in message
    decoded = FileCheckpointStore(PATH).load()
    assert decoded.format is CheckpointFormat.LEGACY
    assert len(decoded.legacy_entries) == 1


def test_load_of_a_missing_file_is_a_clear_error(kubelet_dir):
    with pytest.raises(CheckpointError, match=f"^{PATH}: no such file$"):
        FileCheckpointStore(PATH).load()


def test_unreadable_path_is_a_clear_error(kubelet_dir):
    PATH.mkdir()
    with pytest.raises(CheckpointError, match=f"^{PATH}: cannot read checkpoint"):
        FileCheckpointStore(PATH).get_or_create()


def test_load_without_verify_shows_a_damaged_file(kubelet_dir):
    good = json.loads(codec.encode([claim("a")]))
    PATH.write_text(json.dumps({"Data": good["Data"], "Checksum": 1}))
    decoded = FileCheckpointStore(PATH).load(verify=False)
    assert not decoded.checksum_ok
    assert decoded.entries == [claim("a")]


def test_a_big_write_records_only_the_number_of_entries(kubelet_dir):
    from drasim.checkpoint.store import JOURNAL_ENTRIES_LIMIT

    recorder = ListRecorder()
    store = FileCheckpointStore(PATH, recorder=recorder)
    many = [claim(f"c{i:03d}") for i in range(JOURNAL_ENTRIES_LIMIT + 1)]
    store.store(many[:JOURNAL_ENTRIES_LIMIT])
    store.store(many)
    (_, small), (_, big) = recorder.events
    assert len(small["entries"]) == JOURNAL_ENTRIES_LIMIT
    assert big["entries"] == JOURNAL_ENTRIES_LIMIT + 1
    assert big["size"] == PATH.stat().st_size
    assert len(FileCheckpointStore(PATH).get_or_create()) == JOURNAL_ENTRIES_LIMIT + 1


def test_recycling_writes_work_on_a_fake_file_system(kubelet_dir):
    """Without fsync the store recycles its files; under pyfakefs it writes with lseek + write."""
    store = FileCheckpointStore(PATH, fsync=False)
    owner = object()
    states = {s.key: s for s in (claim("a"), claim("b"))}
    store.store_changes(owner, {}, lambda: list(states.values()))
    for name in ("c", "d", "e", "b"):
        key = f"default/{name}"
        states[key] = claim(name)
        store.store_changes(owner, {key: states[key]}, lambda: pytest.fail("full"))
        assert PATH.read_bytes() == codec.encode(list(states.values()))
    del states["default/a"]
    store.store_changes(owner, {"default/a": None}, lambda: pytest.fail("full"))
    assert PATH.read_bytes() == codec.encode(list(states.values()))
    assert stat.S_IMODE(PATH.stat().st_mode) == 0o600
    store.close()
    assert sorted(p.name for p in ROOT.iterdir()) == [DRA_MANAGER_STATE_FILE]
