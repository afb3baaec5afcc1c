"""More fuzzing of the checkpoint decoder, complementing tests/unit/checkpoint/test_properties.py.

The checkpoint owners already fuzz with arbitrary bytes and random JSON documents.
These generators start from the upstream golden files instead, so that the
decoder gets past the envelope and the checksum: byte mutations of real files;
mutations of the inner ``Data`` document with the checksum recomputed (so only the
structure is wrong); and hostile documents (deep nesting, huge numbers, long
strings, many keys). Every input must give a decoded checkpoint or a
CorruptCheckpointError, in bounded time; through FileCheckpointStore the error
names the file.
"""

from __future__ import annotations

import json
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drasim.checkpoint import codec
from drasim.checkpoint.store import FileCheckpointStore
from drasim.errors import CheckpointError, CorruptCheckpointError

GOLDEN = Path(__file__).resolve().parents[1] / "checkpoint" / "golden"
SETTINGS = settings(max_examples=80, deadline=timedelta(seconds=5))  # the rest: tests/conftest.py's profile


@cache
def goldens() -> tuple[bytes, ...]:
    files = sorted(p for p in GOLDEN.iterdir() if p.suffix == ".json")
    return tuple(p.read_bytes() for p in files)


@cache
def current_datas() -> tuple[str, ...]:
    """The inner Data documents of the current-format goldens."""
    datas = []
    for blob in goldens():
        document = json.loads(blob)
        if isinstance(document, dict) and isinstance(document.get("Data"), str):
            datas.append(document["Data"])
    return tuple(datas)


def decode_or_corrupt(blob: bytes) -> codec.DecodedCheckpoint | None:
    """The property: a decoded checkpoint that can be written again, or CorruptCheckpointError."""
    for verify in (True, False):
        try:
            decoded = codec.decode(blob, verify=verify)
        except CorruptCheckpointError as err:
            message = str(err)
            assert message, "an empty error message"
            continue
        if decoded.format is codec.CheckpointFormat.CURRENT:
            codec.encode(decoded.entries)  # whatever was read can be written back
        if verify:
            return decoded
    return None


def test_goldens_are_there() -> None:
    assert len(goldens()) >= 8
    assert len(current_datas()) >= 3


# ------------------------------------------------------------ byte mutations

mutation = st.sampled_from(["flip", "delete", "insert", "truncate", "duplicate"])


@SETTINGS
@given(st.data())
def test_byte_mutations_of_golden_files(data: st.DataObject) -> None:
    blob = bytearray(data.draw(st.sampled_from(goldens()), label="golden"))
    for _ in range(data.draw(st.integers(1, 5), label="count")):
        if not blob:
            break
        i = data.draw(st.integers(0, len(blob) - 1), label="at")
        op = data.draw(mutation, label="op")
        if op == "flip":
            blob[i] ^= 1 << data.draw(st.integers(0, 7), label="bit")
        elif op == "delete":
            del blob[i]
        elif op == "insert":
            blob[i:i] = data.draw(st.binary(min_size=1, max_size=4), label="bytes")
        elif op == "truncate":
            del blob[i:]
        else:
            j = data.draw(st.integers(i, len(blob)), label="to")
            blob[i:i] = blob[i:j]
    decode_or_corrupt(bytes(blob))


# -------------------------------------- structure mutations, valid checksum

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from(["", "All", "Unprepare", "DRACheckpoint", "checkpoint.dra.kubelet.k8s.io/v1"])
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=12,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


@SETTINGS
@given(st.data())
def test_structure_mutations_with_a_recomputed_checksum(data: st.DataObject) -> None:
    inner = json.loads(data.draw(st.sampled_from(current_datas()), label="data"))
    for _ in range(data.draw(st.integers(1, 3), label="count")):
        paths = [p for p in _paths(inner) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths), label="path")
        parent = inner
        for part in path[:-1]:
            parent = parent[part]
        op = data.draw(st.sampled_from(["replace", "drop", "rename-key"]), label="op")
        if op == "replace":
            parent[path[-1]] = data.draw(json_values, label="value")
        elif op == "drop" or not isinstance(parent, dict):
            del parent[path[-1]]
        else:
            new_key = data.draw(
                st.sampled_from([str(path[-1]).lower(), str(path[-1]).upper(), "x"]), label="k"
            )
            parent[new_key] = parent.pop(path[-1])
    text = json.dumps(inner, ensure_ascii=data.draw(st.booleans(), label="ascii"))
    decode_or_corrupt(codec.envelope(text))


# ----------------------------------------------------------- hostile inputs


def _current(inner: str) -> bytes:
    return codec.envelope(inner)


HOSTILE = {
    "deep-array-in-file": b"[" * 100_000 + b"]" * 100_000,
    "deep-object-in-file": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "deep-array-in-data": _current("[" * 50_000 + "]" * 50_000),
    "deep-entries": _current(
        '{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1","ClaimInfoStateList":'
        + "[" * 20_000
        + "]" * 20_000
        + "}"
    ),
    "huge-checksum": b'{"Data":"{}","Checksum":' + b"9" * 5000 + b"}",
    "huge-exponent": b'{"Data":"{}","Checksum":1e99999999}',
    "negative-checksum": b'{"Data":"{}","Checksum":-1}',
    "long-string": b'{"Data":"' + b"a" * 2_000_000 + b'","Checksum":0}',
    "many-keys": b"{"
    + b",".join(b'"k%d":%d' % (i, i) for i in range(100_000))
    + b',"Data":"{}","Checksum":0}',
    "lone-surrogate": b'{"Data":"\\ud800","Checksum":0}',
    "nul-bytes": b'{"Data":"\x00","Checksum":0}',
    "bom": b'\xef\xbb\xbf{"Data":"{}","Checksum":0}',
    "nan": b'{"Data":"{}","Checksum":NaN}',
    "empty": b"",
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("blob", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_files_are_rejected_cleanly(blob: bytes, tmp_path: Path) -> None:
    decode_or_corrupt(blob)
    path = tmp_path / "dra_manager_state"
    path.write_bytes(blob)
    with pytest.raises(CheckpointError) as caught:
        FileCheckpointStore(path).get_or_create()
    assert str(path) in str(caught.value)


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("store")


@SETTINGS
@given(blob=st.binary(max_size=200))
def test_store_reports_damaged_files_with_their_path(store_dir: Path, blob: bytes) -> None:
    path = store_dir / "dra_manager_state"
    path.write_bytes(blob)
    message = ""
    try:
        FileCheckpointStore(path).get_or_create()
    except CheckpointError as err:
        message = str(err)
    else:
        return
    assert str(path) in message
