"""Incremental checkpoint encoding gives the bytes of a full encoding, whatever the edits."""

from __future__ import annotations

import json
import os
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drasim.checkpoint import codec, crc, gojson
from drasim.checkpoint.incremental import IncrementalEncoder
from drasim.checkpoint.store import FileCheckpointStore
from drasim.errors import CheckpointError
from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

# The rest from tests/conftest.py's profile; the shared fixtures are safe across examples
# (a patched constant that every example wants, a directory factory each example draws from).
SETTINGS = settings(
    max_examples=150,
    suppress_health_check=[*settings().suppress_health_check, HealthCheck.function_scoped_fixture],
)

# Names from a small alphabet (so that edits hit the same keys) plus the characters Go escapes.
text = st.text(
    alphabet=st.sampled_from(["a", "b", "/", "<", "&", "\u2028", '"', "\\", "\n", "é", "😀"]), max_size=3
)
maybe_strings = st.none() | st.lists(text, max_size=2).map(tuple)
device = st.builds(
    Device,
    pool_name=text,
    device_name=text,
    request_names=maybe_strings,
    cdi_device_ids=maybe_strings,
    share_id=st.none() | text,
)
driver_state = st.builds(
    DriverState,
    devices=st.none() | st.lists(device, max_size=2),
    skip_node_operations=st.sampled_from(["", "All"]),
)


def claim_states() -> st.SearchStrategy[ClaimInfoState]:
    return st.builds(
        ClaimInfoState,
        claim_uid=text,
        claim_name=text,
        namespace=st.sampled_from(["default", "team-a"]) | text,
        pod_uids=st.none() | st.sets(text, max_size=2),
        driver_state=st.none() | st.dictionaries(text, driver_state, max_size=2),
    )


# An edit: put a state under its key, or remove the key of the i-th state put so far.
edits = st.lists(
    st.one_of(
        st.tuples(st.just("put"), claim_states()),
        st.tuples(st.just("remove"), st.integers(min_value=0, max_value=30)),
        st.tuples(st.just("put-again"), st.integers(min_value=0, max_value=30), claim_states()),
    ),
    max_size=30,
)


def _without_share_ids(state: ClaimInfoState) -> ClaimInfoState:
    drivers = state.driver_state
    if drivers is not None:
        for driver in drivers.values():
            if driver.devices is not None:
                driver.devices = [
                    Device(d.pool_name, d.device_name, d.request_names, d.cdi_device_ids, None)
                    for d in driver.devices
                ]
    return state


def _replay(
    encoder: IncrementalEncoder, steps: list[tuple[object, ...]], check: bool
) -> dict[str, ClaimInfoState]:
    """Apply ``steps`` to ``encoder`` and to a plain dict; with ``check`` compare after each."""
    held: dict[str, ClaimInfoState] = {}
    keys: list[str] = []
    for step in steps:
        if step[0] == "put":
            state = step[1]
            assert isinstance(state, ClaimInfoState)
            if not encoder.share_id:
                state = _without_share_ids(state)
            encoder.put(state.key, state)
            held[state.key] = state
            keys.append(state.key)
        elif keys:
            key = keys[int(step[1]) % len(keys)]  # type: ignore[call-overload]
            if step[0] == "remove":
                encoder.remove(key)
                held.pop(key, None)
            else:
                # Another state under an existing key (a claim re-created with a new UID, say).
                state = step[2]
                assert isinstance(state, ClaimInfoState)
                state.namespace, state.claim_name = key.split("/", 1) if "/" in key else (key, "")
                if state.key != key:
                    continue
                if not encoder.share_id:
                    state = _without_share_ids(state)
                encoder.put(key, state)
                held[key] = state
        if check:
            assert encoder.encode() == codec.encode(list(held.values()), share_id=encoder.share_id)
            assert len(encoder) == len(held)
    return held


@pytest.fixture(params=[True, False], ids=["crc-combine", "crc-over-bytes"])
def combine_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    if request.param and not crc.AVAILABLE:
        pytest.skip("zlib's crc32_combine cannot be loaded here")
    monkeypatch.setattr(crc, "AVAILABLE", request.param)
    return bool(request.param)


@SETTINGS
@given(steps=edits, block_size=st.sampled_from([1, 2, 3, 128]), share_id=st.booleans())
def test_incremental_encoding_equals_full_encoding_after_every_edit(steps, block_size, share_id) -> None:
    _replay(IncrementalEncoder(share_id=share_id, block_size=block_size), steps, check=True)


@pytest.mark.parametrize("block_size", [1, 4, 128])
def test_both_checksum_paths_give_the_full_encoding(combine_mode: bool, block_size: int) -> None:
    del combine_mode  # the fixture selected the path
    encoder = IncrementalEncoder(block_size=block_size)
    states = [_state(i) for i in range(40)]
    for state in states:
        encoder.put(state.key, state)
    assert encoder.encode() == codec.encode(states)
    for state in states[::3]:
        encoder.remove(state.key)
    left = [s for i, s in enumerate(states) if i % 3]
    assert encoder.encode() == codec.encode(left)
    assert encoder.items() == codec.entries_to_json(left)


def test_an_empty_encoder_writes_an_empty_list_not_null() -> None:
    encoder = IncrementalEncoder()
    assert encoder.encode() == codec.encode([])
    encoder.put("default/a", _state(1))
    encoder.remove("default/a")
    encoder.remove("default/never-there")
    assert encoder.encode() == codec.encode([])


def test_list_key_variant() -> None:
    encoder = IncrementalEncoder(list_key=codec.ENTRIES_KEY)
    encoder.put("default/a", _state(1))
    assert encoder.encode() == codec.encode([_state(1)], list_key=codec.ENTRIES_KEY)


def test_an_entry_that_cannot_be_written_changes_nothing() -> None:
    encoder = IncrementalEncoder(share_id=False)
    encoder.put("default/a", _state(1))
    before = encoder.encode()
    shared = _state(2, share_id="s-1")
    with pytest.raises(CheckpointError, match="ShareID"):
        encoder.put(shared.key, shared)
    with pytest.raises(CheckpointError, match="ShareID"):
        encoder.put("default/a", _state(1, share_id="s-1"))
    assert encoder.encode() == before


@SETTINGS
@given(st.binary(max_size=300), st.binary(max_size=300))
def test_crc_combine_is_the_crc_of_the_concatenation(first: bytes, second: bytes) -> None:
    if not crc.AVAILABLE:
        return
    assert crc.combine(zlib.crc32(first), zlib.crc32(second), len(second)) == zlib.crc32(first + second)


# ----- FileCheckpointStore.store_changes --------------------------------------------------


def _state(i: int, *, share_id: str | None = None) -> ClaimInfoState:
    device = Device("node-1", f"gpu-{i}", ("gpu",), (f"gpu.example.com/gpu=gpu-{i}",), share_id)
    return ClaimInfoState(
        claim_uid=f"uid-{i}",
        claim_name=f"claim-{i}",
        namespace="default",
        pod_uids={f"pod-{i}"},
        driver_state={"gpu.example.com": DriverState(devices=[device])},
    )


def test_store_changes_writes_what_store_writes(tmp_path) -> None:
    path = tmp_path / "dra_manager_state"
    store = FileCheckpointStore(path, fsync=False)
    owner = object()
    current = {s.key: s for s in (_state(i) for i in range(5))}
    store.store_changes(owner, {}, lambda: list(current.values()))  # first call: everything
    first = codec.encode(list(current.values()))
    assert path.read_bytes() == first
    replaced = _state(2)
    replaced.claim_uid = "uid-new"  # replaced under the same key, new UID
    current["default/claim-2"] = replaced
    current["default/claim-22"] = _state(22)
    del current["default/claim-0"]
    changes = {
        "default/claim-2": current["default/claim-2"],
        "default/claim-22": current["default/claim-22"],
        "default/claim-0": None,
    }
    store.store_changes(owner, changes, lambda: pytest.fail("must not re-read every entry"))
    assert path.read_bytes() == codec.encode(list(current.values()))
    # Without fsync the replaced file is kept as the next write's temp file: no other leftovers.
    names = sorted(tmp.name for tmp in tmp_path.iterdir())
    assert len(names) == 2, names
    assert names[0].startswith(".dra_manager_state.spare-"), names
    assert names[1] == "dra_manager_state"
    assert (tmp_path / names[0]).read_bytes() == first


def test_store_changes_starts_over_after_another_writer(tmp_path) -> None:
    path = tmp_path / "dra_manager_state"
    store = FileCheckpointStore(path, fsync=False)
    first, second = object(), object()
    ones = [_state(1)]
    store.store_changes(first, {}, lambda: ones)
    store.store_changes(second, {}, lambda: [_state(2), _state(3)])  # another owner: full
    assert path.read_bytes() == codec.encode([_state(2), _state(3)])
    store.store_changes(first, {}, lambda: ones)  # back to the first: full again
    assert path.read_bytes() == codec.encode(ones)
    store.store([_state(9)])  # a plain store: the next update starts over
    store.store_changes(first, {"default/claim-4": _state(4)}, lambda: [*ones, _state(4)])
    assert path.read_bytes() == codec.encode([_state(1), _state(4)])
    store.write_share_id = False  # a changed setting is a new encoding
    store.store_changes(first, {}, lambda: ones)
    assert path.read_bytes() == codec.encode(ones, share_id=False)


def test_store_changes_after_a_failed_encoding_starts_over(tmp_path) -> None:
    path = tmp_path / "dra_manager_state"
    store = FileCheckpointStore(path, fsync=False, write_share_id=False)
    owner = object()
    good = [_state(1)]
    store.store_changes(owner, {}, lambda: good)
    bad = _state(2, share_id="s-1")
    with pytest.raises(CheckpointError, match="ShareID"):
        store.store_changes(owner, {bad.key: bad}, lambda: [*good, bad])
    assert path.read_bytes() == codec.encode(good, share_id=False)
    fixed = _state(2)
    store.store_changes(owner, {}, lambda: [*good, fixed])  # rebuilt from every entry
    assert path.read_bytes() == codec.encode([*good, fixed], share_id=False)


def test_store_changes_journals_like_store(tmp_path) -> None:
    events: list[dict[str, object]] = []

    class Recorder:
        def record(self, kind: str, **fields: object) -> None:
            events.append({"kind": kind, **fields})

    path = tmp_path / "dra_manager_state"
    store = FileCheckpointStore(path, fsync=False, recorder=Recorder())
    states = [_state(i) for i in range(3)]
    store.store(states)
    store.store_changes(object(), {}, lambda: states)
    full, incremental = events
    assert full == incremental
    assert full["entries"] == codec.entries_to_json(states)
    many = [_state(i) for i in range(70)]
    store.store_changes(object(), {}, lambda: many)
    assert events[-1]["entries"] == 70
    assert events[-1]["size"] == os.path.getsize(path)


@SETTINGS
@given(names=st.lists(text, max_size=6))
def test_store_changes_with_awkward_names(tmp_path_factory, names) -> None:
    path = tmp_path_factory.mktemp("awkward") / "dra_manager_state"
    store = FileCheckpointStore(path, fsync=False)
    owner = object()
    current: dict[str, ClaimInfoState] = {}
    store.store_changes(owner, {}, lambda: [])
    for i, name in enumerate(names):
        state = _state(i)
        state.claim_name = name
        current[state.key] = state
        store.store_changes(owner, {state.key: state}, lambda: pytest.fail("full re-encode"))
        assert path.read_bytes() == codec.encode(list(current.values()))


@pytest.mark.parametrize("fsync", [True, False])
def test_short_writev_calls_and_small_iov_batches_write_every_byte(tmp_path, monkeypatch, fsync) -> None:
    from drasim.checkpoint import store as store_module

    real_writev = os.writev
    calls: list[int] = []

    def short_writev(fd: int, buffers) -> int:  # the kernel may write less than asked
        calls.append(len(buffers))
        joined = b"".join(bytes(b) for b in buffers)
        return real_writev(fd, [joined[:7]])

    monkeypatch.setattr(store_module.os, "writev", short_writev)
    monkeypatch.setattr(store_module, "_IOV_MAX", 3)
    path = tmp_path / "dra_manager_state"
    store = FileCheckpointStore(path, fsync=fsync)
    states = [_state(i) for i in range(300)]  # several blocks: several pieces
    owner = object()
    store.store_changes(owner, {}, lambda: states[:200])
    store.store_changes(owner, {s.key: s for s in states[200:]}, lambda: pytest.fail("full"))
    assert path.read_bytes() == codec.encode(states)
    assert calls
    assert max(calls) <= 3


@pytest.mark.parametrize("reuse_min_size", [None, 0], ids=["small-files-whole", "every-file-reused"])
@SETTINGS
@given(steps=st.lists(st.tuples(st.booleans(), st.integers(0, 40)), min_size=1, max_size=25))
def test_recycling_writes_give_the_full_encoding_after_every_write(
    tmp_path_factory, monkeypatch, reuse_min_size, steps
) -> None:
    """Without fsync a write skips the leading blocks the recycled file already holds: never wrong bytes.

    Two stores write the same file in turn now and then (as two kubelet instances of one
    scenario could): a spare that another store's write made stale must be written in full.
    These files are small (written whole by default): with ``REUSE_MIN_SIZE`` at 0 every
    write takes the path that reuses the spare's leading pieces.
    """
    from drasim.checkpoint import store as store_module

    if reuse_min_size is not None:
        monkeypatch.setattr(store_module, "REUSE_MIN_SIZE", reuse_min_size)
    path = tmp_path_factory.mktemp("recycle") / "dra_manager_state"
    stores = [FileCheckpointStore(path, fsync=False), FileCheckpointStore(path, fsync=False)]
    owners = [object(), object()]
    current: dict[str, ClaimInfoState] = {}
    pending: list[dict[str, ClaimInfoState | None]] = [{}, {}]
    for number, (other, index) in enumerate(steps):
        state = _state(index)
        if state.key in current and number % 3 == 0:
            del current[state.key]
            change: ClaimInfoState | None = None
        else:
            state.pod_uids = {f"pod-{number}"}
            current[state.key] = change = state
        for waiting in pending:
            waiting[state.key] = change
        writer = 1 if other else 0
        stores[writer].store_changes(owners[writer], pending[writer], lambda: list(current.values()))
        pending[writer] = {}
        assert path.read_bytes() == codec.encode(list(current.values()))
    names = [p.name for p in path.parent.iterdir()]
    assert len(names) <= 3, names  # the file and at most one spare per store


def test_a_recycling_write_skips_the_unchanged_leading_blocks(tmp_path, monkeypatch) -> None:
    from drasim.checkpoint import store as store_module

    written: list[int] = []
    real_writev, real_pwritev = os.writev, os.pwritev

    def counting_writev(fd: int, buffers) -> int:
        count = real_writev(fd, buffers)
        written.append(count)
        return count

    def counting_pwritev(fd: int, buffers, offset: int) -> int:
        count = real_pwritev(fd, buffers, offset)
        written.append(count)
        return count

    monkeypatch.setattr(store_module.os, "writev", counting_writev)
    monkeypatch.setattr(store_module.os, "pwritev", counting_pwritev)
    path = tmp_path / "dra_manager_state"
    store = FileCheckpointStore(path, fsync=False)
    states = {s.key: s for s in (_state(i) for i in range(1000))}
    owner = object()
    store.store_changes(owner, {}, lambda: list(states.values()))
    last = max(states, key=lambda key: (states[key].namespace, states[key].claim_name))
    for number in range(2):  # change the last entry: every block before it is the same
        changed = states[last].clone()
        changed.pod_uids = {f"other-{number}"}
        states[last] = changed
        written.clear()
        store.store_changes(owner, {last: changed}, lambda: pytest.fail("incremental"))
        assert path.read_bytes() == codec.encode(list(states.values()))
    assert written, "no write seen"
    assert sum(written) < os.path.getsize(path) // 2  # the second write reused most of the spare


@pytest.mark.parametrize("damage", ["same-size", "truncated"])
def test_a_checkpoint_rewritten_in_place_by_someone_else_is_not_trusted_as_a_spare(tmp_path, damage) -> None:
    """corruptCheckpoint rewrites the file in place (same inode): later writes must still be whole."""
    path = tmp_path / "dra_manager_state"
    store = FileCheckpointStore(path, fsync=False)
    states = {s.key: s for s in (_state(i) for i in range(600))}
    owner = object()
    store.store_changes(owner, {}, lambda: list(states.values()))
    store.store_changes(owner, {}, lambda: pytest.fail("incremental"))
    blob = path.read_bytes()
    damaged = blob[:10] + b"X" * (len(blob) - 20) + blob[-10:] if damage == "same-size" else blob[:100]
    path.write_bytes(damaged)  # in place: the inode stays, as the corruptCheckpoint step does
    last = sorted(states)[-1]
    for number in range(3):  # the damaged inode becomes the spare, then the next temp file
        changed = states[last].clone()
        changed.pod_uids = {f"other-{number}"}
        states[last] = changed
        store.store_changes(owner, {last: changed}, lambda: pytest.fail("incremental"))
        assert path.read_bytes() == codec.encode(list(states.values())), number


# ----- the fast paths of one entry's encoding against the general ones ---------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3),
    max_leaves=12,
)
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _reference_marshal(value: object) -> str:
    """Go's json.Marshal by the book: the json module's compact output, then Go's HTML escapes."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return "".join(_HTML.get(char, char) for char in text)


@SETTINGS
@given(value=json_values)
def test_go_marshal_is_the_json_module_with_go_escapes(value) -> None:
    assert gojson.go_marshal(value) == _reference_marshal(value)


@SETTINGS
@given(value=json_values)
def test_escaping_a_marshalled_text_takes_the_general_path_only_where_it_must(value) -> None:
    """The replace-only escape of a JSON text without backslashes equals the full string escape."""
    text = gojson.go_marshal(value)
    assert gojson.escaped_marshalled(text) == gojson.go_marshal(text)[1:-1]
    assert gojson.escaped_marshalled(text) == _reference_marshal(text)[1:-1]


any_text = st.text(max_size=8)
any_device = st.builds(
    Device,
    pool_name=any_text,
    device_name=any_text,
    request_names=st.none() | st.lists(any_text, max_size=2).map(tuple),
    cdi_device_ids=st.none() | st.lists(any_text, max_size=2).map(tuple),
    share_id=st.none() | any_text,
)
any_claim_state = st.builds(
    ClaimInfoState,
    claim_uid=any_text,
    claim_name=any_text,
    namespace=any_text,
    pod_uids=st.none() | st.sets(any_text, max_size=2),
    driver_state=st.none()
    | st.dictionaries(
        any_text,
        st.builds(
            DriverState, devices=st.none() | st.lists(any_device, max_size=2), skip_node_operations=any_text
        ),
        max_size=2,
    ),
)


@SETTINGS
@given(state=claim_states() | any_claim_state)
def test_an_entry_put_with_arbitrary_strings_is_the_full_encoding(state) -> None:
    encoder = IncrementalEncoder()
    encoder.put(state.key, state)
    assert encoder.encode() == codec.encode([state])
    inner = gojson.go_marshal(codec.entry_to_json(state))
    assert encoder._blocks[0].escaped == [gojson.go_marshal(inner)[1:-1].encode("utf-8")]
