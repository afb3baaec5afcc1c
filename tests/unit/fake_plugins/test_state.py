"""The fake driver's state: one file per prepared claim, restart, migration, corruption, atomicity."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drasim.errors import CheckpointError
from drasim.values import Device
from fake_plugins.files import dumps_indented
from fake_plugins.state import (
    CLAIMS_DIR,
    DriverState,
    PreparedClaim,
    claim_document,
    claim_file_name,
    device_to_json,
    read_claims_dir,
)

DRIVER = "gpu.example.com"
SETTINGS = settings(max_examples=150)  # the rest: tests/conftest.py's profile

text = st.text(alphabet=st.sampled_from(["a", "b", "<", '"', "\\", "\n", "é", "😀"]), max_size=3)
device = st.builds(
    Device,
    pool_name=st.sampled_from(["p", "q"]),
    device_name=st.sampled_from(["d1", "d2", "d3"]),
    request_names=st.lists(text, max_size=2).map(tuple),
    cdi_device_ids=st.lists(text, max_size=2).map(tuple),
    share_id=st.none() | st.sampled_from(["s1", "s2"]),
)
claim = st.builds(PreparedClaim, namespace=text, name=text, devices=st.lists(device, max_size=2).map(tuple))
# UIDs that need encoding in a file name: "/", a leading ".", "%", non-ASCII, "..", very long.
uids = st.sampled_from(["u1", "u2", "a/b", ".hidden", "..", "50%", "é", "<", "x" * 300])
edit = st.one_of(
    st.tuples(st.just("set"), uids, claim),
    st.tuples(st.just("pop"), uids),
    st.tuples(st.just("del"), uids),
    st.tuples(st.just("update"), st.dictionaries(uids, claim, max_size=2)),
    st.tuples(st.just("setdefault"), uids, claim),
    st.tuples(st.just("clear")),
    st.tuples(st.just("save")),
)


def _file(uid: str, prepared: PreparedClaim) -> bytes:
    return (json.dumps(claim_document(DRIVER, uid, prepared), indent=2, sort_keys=True) + "\n").encode()


def _holder(state: DriverState, pool: str, name: str, share: str | None, except_uid: str) -> str | None:
    for uid, prepared in dict.items(state.claims):
        if uid != except_uid and any(
            (d.pool_name, d.device_name, d.share_id) == (pool, name, share) for d in prepared.devices
        ):
            return uid
    return None


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.exists() else {}


@SETTINGS
@given(st.lists(edit, max_size=30))
def test_saved_files_and_device_index_match_the_claims(tmp_path_factory, edits) -> None:  # noqa: C901 - a property test checking every file
    directory = tmp_path_factory.mktemp("driver")
    state = DriverState(DRIVER, directory, sync=False)
    for step in edits:
        kind = step[0]
        if kind == "set":
            state.claims[step[1]] = step[2]
        elif kind == "pop":
            state.claims.pop(step[1], None)
        elif kind == "del":
            with pytest.raises(KeyError) if step[1] not in state.claims else contextlib.nullcontext():
                del state.claims[step[1]]
        elif kind == "update":
            state.claims.update(step[1])
        elif kind == "setdefault":
            state.claims.setdefault(step[1], step[2])
        elif kind == "clear":
            state.claims.clear()
        else:
            state.save()
            # Exactly one file per claim, each json.dumps(indent=2, sort_keys=True) of its document.
            expected = {claim_file_name(uid): _file(uid, c) for uid, c in state.claims.items()}
            assert _files(directory / CLAIMS_DIR) == expected
            assert DriverState.load(DRIVER, directory).claims == state.claims
        for pool in ("p", "q"):
            for name in ("d1", "d2", "d3"):
                for share in (None, "s1", "s2"):
                    for uid in ("u1", "none"):
                        expected_holder = _holder(state, pool, name, share, uid)
                        assert state.holder_of(pool, name, share, except_uid=uid) == expected_holder


def test_claim_file_names_are_safe_and_distinct() -> None:
    names = {uid: claim_file_name(uid) for uid in ["u1", "a/b", ".", "..", ".x", "%2E", "", "x" * 300, "é"]}
    assert len(set(names.values())) == len(names)
    for name in names.values():
        assert "/" not in name
        assert not name.startswith(".")
        assert name.endswith(".json")
        assert len(name) < 255
    uuid = "0d2a7a86-1f3b-4c57-9a4e-7a8e6f0b1c2d"
    assert claim_file_name(uuid) == uuid + ".json"


def test_a_save_touches_only_the_changed_claims(tmp_path: Path) -> None:
    state = DriverState(DRIVER, tmp_path, sync=False)
    state.claims["a"] = PreparedClaim("ns", "a", ())
    state.claims["b"] = PreparedClaim("ns", "b", ())
    state.save()
    folder = tmp_path / CLAIMS_DIR
    inode_a = (folder / "a.json").stat().st_ino
    state.claims["c"] = PreparedClaim("ns", "c", ())
    del state.claims["b"]
    state.save()
    assert sorted(p.name for p in folder.iterdir()) == ["a.json", "c.json"]
    assert (folder / "a.json").stat().st_ino == inode_a  # not rewritten


def test_restart_finds_prepared_claims_and_skips_temp_files(tmp_path: Path) -> None:
    state = DriverState(DRIVER, tmp_path)
    dev = Device("p", "d", ("r",), ("k=d",), None)
    state.claims["u"] = PreparedClaim("ns", "n", (dev,))
    state.save()
    # A write killed before its rename leaves a ".<name>.<random>" temp file behind.
    (tmp_path / CLAIMS_DIR / ".v.json.0123456789").write_bytes(b'{"half": ')
    loaded = DriverState.load(DRIVER, tmp_path)
    assert loaded.claims == {"u": PreparedClaim("ns", "n", (dev,))}
    assert loaded.holder_of("p", "d", None, except_uid="other") == "u"
    loaded.claims.pop("u")
    loaded.save()
    assert DriverState.load(DRIVER, tmp_path).claims == {}


def test_a_failed_write_leaves_the_previous_file(tmp_path: Path, monkeypatch) -> None:
    state = DriverState(DRIVER, tmp_path, sync=False)
    state.claims["u"] = PreparedClaim("ns", "old", ())
    state.save()
    path = tmp_path / CLAIMS_DIR / "u.json"
    before = path.read_bytes()

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    state.claims["u"] = PreparedClaim("ns", "new", ())
    with pytest.raises(CheckpointError, match=f"{path}: cannot write fake driver checkpoint: No space"):
        state.save()
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["u.json"]  # the temp file is gone


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("not json", "Expecting value"),
        ("[1]", "expected a JSON object"),
        ('{"kind": "Something"}', "expected kind FakeDriverPreparedClaim"),
        (
            '{"apiVersion": "fake-plugins.drasim.dev/v1", "kind": "FakeDriverPreparedClaim", "uid": "other",'
            ' "namespace": "ns", "name": "n", "devices": []}',
            "does not belong in a file named 'u.json'",
        ),
        (
            '{"apiVersion": "fake-plugins.drasim.dev/v1", "kind": "FakeDriverPreparedClaim", "uid": "u",'
            ' "name": "n", "devices": []}',
            "'namespace'",
        ),
        (
            '{"apiVersion": "fake-plugins.drasim.dev/v1", "kind": "FakeDriverPreparedClaim", "uid": "u",'
            ' "namespace": "ns", "name": "n", "devices": [{"poolName": "p"}]}',
            "'deviceName'",
        ),
    ],
)
def test_a_corrupt_claim_file_is_a_clear_error(tmp_path: Path, content: str, problem: str) -> None:
    folder = tmp_path / CLAIMS_DIR
    folder.mkdir()
    path = folder / "u.json"
    path.write_text(content)
    with pytest.raises(CheckpointError) as err:
        DriverState.load(DRIVER, tmp_path)
    message = str(err.value)
    assert message.startswith(f"{path}: fake driver checkpoint is corrupted: "), message
    assert problem in message


def test_state_directory_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / CLAIMS_DIR).write_text("")
    problem = "prepared-claims: fake driver checkpoint is corrupted: not a directory"
    with pytest.raises(CheckpointError, match=problem):
        DriverState.load(DRIVER, tmp_path)


def _legacy(claims: dict[str, PreparedClaim]) -> str:
    doc = {
        "apiVersion": "fake-plugins.drasim.dev/v1",
        "kind": "FakeDriverCheckpoint",
        "driver": DRIVER,
        "preparedClaims": {
            uid: {"namespace": c.namespace, "name": c.name, "devices": [device_to_json(d) for d in c.devices]}
            for uid, c in claims.items()
        },
    }
    return dumps_indented(doc) + "\n"


def test_an_old_checkpoint_json_is_migrated_to_claim_files(tmp_path: Path) -> None:
    dev = Device("p", "d", ("r",), ("k=d",), "s")
    claims = {"u1": PreparedClaim("ns", "a", (dev,)), "u/2": PreparedClaim("ns", "b", ())}
    (tmp_path / "checkpoint.json").write_text(_legacy(claims))
    loaded = DriverState.load(DRIVER, tmp_path)
    assert loaded.claims == claims
    assert not (tmp_path / "checkpoint.json").exists()
    assert read_claims_dir(tmp_path / CLAIMS_DIR) == claims
    assert DriverState.load(DRIVER, tmp_path).claims == claims


def test_a_migration_interrupted_before_removing_the_old_file_is_finished_later(tmp_path: Path) -> None:
    claims = {"u1": PreparedClaim("ns", "a", ())}
    (tmp_path / "checkpoint.json").write_text(_legacy(claims))
    DriverState.load(DRIVER, tmp_path)
    (tmp_path / "checkpoint.json").write_text(_legacy(claims))  # as if the unlink had not happened
    assert DriverState.load(DRIVER, tmp_path).claims == claims
    assert not (tmp_path / "checkpoint.json").exists()


def test_a_corrupt_old_checkpoint_json_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.json"
    path.write_text('{"kind": "Something"}')
    with pytest.raises(CheckpointError, match=f"{path}: fake driver checkpoint is corrupted: expected kind"):
        DriverState.load(DRIVER, tmp_path)
    assert path.exists()  # left for the user to look at


def test_pop_without_default_raises_like_a_dict() -> None:
    state = DriverState(DRIVER, None)
    with pytest.raises(KeyError):
        state.claims.pop("missing")
    state.claims["u"] = PreparedClaim("ns", "n", ())
    assert state.claims.popitem() == ("u", PreparedClaim("ns", "n", ()))
    state.save()  # no directory: nothing to write


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=3)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=12,
)


@SETTINGS
@given(json_values)
def test_dumps_indented_is_json_dumps_indent_2_sorted(value) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2, sort_keys=True)


def test_dumps_indented_falls_back_for_what_it_does_not_write_itself() -> None:
    class Text(str):
        pass

    for value in ({1: "a", 2: "b"}, {"k": 1.5}, [Text("x")], {"n": True, "m": [None, -3]}):
        assert dumps_indented(value) == json.dumps(value, indent=2, sort_keys=True)
